// Command bench measures Switchboard side by side with the clients and
// peers users compare it with, in one run, and prints a table of medians and
// ratios (issue 8). Every figure in docs/benchmarks.md comes from it or from
// the Go benchmarks in host/.
//
//	go run ./bench                       # every scenario
//	go run ./bench -rounds 5 latency     # one scenario, five rounds
//	go run ./bench -n 5000 latency cold
//
// Scenarios:
//
//	latency  call latency p50/p99 and client RSS: bare Go SDK client, host.Call,
//	         the TypeScript SDK client, the bare client through
//	         `switchboard serve --stdio` and, as its floors, the bare client
//	         through a relay made of nothing but the Go SDK, on the SDK's
//	         stdio transports and on switchboard's internal/jsonl; each a
//	         child process, against the Go echo test server and
//	         server-everything (npm)
//	fanout   `switchboard status` on 10 servers that each sleep 1 s before
//	         they answer (wall time), and on 20 fast servers (the host's own
//	         CPU per server); next to each, the floor: a bare Go SDK fan-out
//	         (connect and list every server at once, no supervisor)
//	peers    `switchboard status` and the bare Go SDK fan-out vs Claude Code's
//	         `claude mcp list` and gemini-cli's `gemini mcp list` on 20 fast
//	         servers, 10 slow ones and 20 fast + 1 hung (installs the peers
//	         with npm in bench/.peers/, which is gitignored; -peers picks them)
//	cold     one-shot `switchboard call` vs the same call by the TypeScript SDK
//	         client and a bare Go SDK client, server start included
//	toolsearch  tool_search (toolsurface/search.Index) over 10,000 tools
//	firstlist  how soon `switchboard serve --stdio` and `--http` answer a
//	         Go SDK client's first tools/list while one of five servers
//	         takes 20 s to start (-slow-start), when list_changed brings
//	         that server's tools, and `claude mcp list` (npmtest's Claude
//	         Code) with the gateway as its server, once a round
//	gateway  `switchboard serve --http` (policy on) next to TBXark/mcp-proxy
//	         (built with go build from -tbxark-src), supergateway, mcp-proxy
//	         and mcp-hub (npm, in bench/.peers/) and the echo server called
//	         directly over HTTP, one Go SDK client: launch to first call,
//	         p50/p99, calls/s at 1/4/16/64 sessions, RSS with 1/20/100
//	         servers, memory per idle session, and issue 23's ratios; with
//	         -switchboard-before, a second switchboard binary in the same
//	         interleaved run (audit log off and on)
//
// The floors (floors.go) are this program re-executed in a hidden mode, so
// they are measured exactly like the switchboard programs next to them;
// the gateway scenario's are the Go SDK proxy on the SDK's stdio transport,
// on internal/jsonl, and in issue 36's relay design (relayfloor.go).
// -echo-protocol makes the echo server speak one protocol revision.
//
// Timings on a shared machine are noisy: each scenario runs -rounds rounds,
// the peers of one round run back to back (in a rotating order), and the
// table shows the median over rounds of each figure and of each per-round
// ratio.
package main

import (
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

type scenario struct {
	name, desc string
	run        func(*bench) error
}

var scenarios = []scenario{
	{"latency", "call latency: Go SDK client, host.Call, TypeScript client, serve --stdio relay, SDK-only relays (floors)", (*bench).latency},
	{"fanout", "switchboard status on 10 slow / 20 fast servers, next to a bare Go SDK fan-out (floor)", (*bench).fanout},
	{"peers", "switchboard status and the bare Go SDK fan-out vs claude/gemini mcp list", (*bench).peers},
	{"cold", "one-shot switchboard call vs the Go SDK and TypeScript clients", (*bench).cold},
	{"toolsearch", "tool_search over 10,000 tools", (*bench).toolsearch},
	{"gateway", "serve --http vs TBXark mcp-proxy, supergateway, mcp-proxy, mcp-hub and direct HTTP: latency, calls/s, RSS, idle sessions, start", (*bench).gateway},
	{"firstlist", "serve's first tools/list with one server that takes 20 s to start (stdio, HTTP), and claude mcp list with the gateway", (*bench).firstList},
}

type bench struct {
	rounds    int
	n         int
	warmup    int
	root      string // module root
	tmp       string
	sb        string // the switchboard binary built for this run
	self      string // this program, which doubles as the Go echo server
	hung      bool
	cgo       bool
	peersDir  string
	claudeVer string
	geminiVer string
	peerNames []string
	// gateway scenario
	idle            int
	tbxarkSrc       string
	supergatewayVer string
	mcpProxyVer     string
	mcpHubVer       string
	gwNames         []string
	gwFloor         []bool // per gwNames
	gwOurs          []bool // per gwNames: switchboard in another setting, or a peer's own-session variant
	gwOwnSession    int    // index in gwNames of TBXark with its servers in sessions of their own, or -1
	gwAudit         int    // the index of "switchboard, audit on" (-1: not run)
	gwPick          []string
	gwProtocol      string
	gwElicit        bool   // -gateway-elicitation
	gwMeta          bool   // -gateway-meta
	sbBefore        string // -switchboard-before
	gwMany          bool   // -gateway-many
	echoProtocol    string
	serveEnv        []string
	gwLoaded        map[string]float64 // per target name: MiB of its program's loadable segments (programLoadMiB)
	// firstlist scenario
	slowStart time.Duration
}

func main() {
	proc.MaybeRunSupervisor()
	testserver.MaybeRun()
	maybeRunClient()
	maybeRunFloor()
	maybeRunMeasured()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	b := &bench{}
	flag.IntVar(&b.rounds, "rounds", 3, "rounds per scenario; tables show medians over rounds")
	flag.IntVar(&b.n, "n", 2000, "timed calls per client per round (latency)")
	flag.IntVar(&b.warmup, "warmup", 200, "untimed calls before the timed ones (latency)")
	flag.BoolVar(&b.cgo, "cgo", false, "build switchboard with cgo, as a plain go install does where a C compiler is present (default: CGO_ENABLED=0, the README's install)")
	flag.BoolVar(&b.hung, "hung", true, "peers: also run the one-hung-server case (Claude Code then takes ~30 s a round)")
	flag.StringVar(&b.claudeVer, "claude-version", "2.1.332", "peers: @anthropic-ai/claude-code version to install")
	flag.StringVar(&b.geminiVer, "gemini-version", "0.61.0", "peers: @google/gemini-cli version to install")
	flag.IntVar(&b.idle, "idle", 500, "gateway: idle HTTP sessions opened to measure the memory of one (0: skip)")
	flag.StringVar(&b.tbxarkSrc, "tbxark-src", "", "gateway: a checkout of github.com/TBXark/mcp-proxy to build (default bench/.peers/tbxark/src; the module proxy does not serve it)")
	flag.StringVar(&b.supergatewayVer, "supergateway-version", "4.0.0", "gateway: supergateway version to install")
	flag.StringVar(&b.mcpProxyVer, "mcp-proxy-version", "6.7.19", "gateway: mcp-proxy (punkpeye) version to install")
	flag.StringVar(&b.mcpHubVer, "mcp-hub-version", "4.2.1", "gateway: mcp-hub version to install")
	gwList := flag.String("gateways", "direct,sdk-proxy,sdk-proxy-jsonl,sdk-proxy-relay,switchboard,switchboard-audit,switchboard-before,switchboard-before-audit,tbxark,tbxark-session,supergateway,mcp-proxy,mcp-hub", "gateway: which targets to run (comma-separated)")
	flag.BoolVar(&b.gwMany, "gateway-many", true, "gateway: also measure RSS with 20 and 100 servers (a launch of each aggregating target on each)")
	flag.StringVar(&b.sbBefore, "switchboard-before", "", "gateway: also run this switchboard binary, as the targets \"switchboard before\" and \"switchboard before, audit on\" (a before/after in one run)")
	flag.StringVar(&b.echoProtocol, "echo-protocol", "", "the only protocol revision the Go echo server speaks (e.g. 2025-11-25, as most servers today; \"\": every one the SDK knows)")
	flag.StringVar(&b.gwProtocol, "gateway-protocol", "2025-11-25", "gateway: the protocol version the client asks every target for (\"\": the SDK's newest)")
	flag.BoolVar(&b.gwMeta, "gateway-meta", false, "gateway: each call carries a _meta of a fresh progress token and two keys of the client's own, as VS Code's calls do")
	flag.BoolVar(&b.gwElicit, "gateway-elicitation", false, "gateway: the client declares elicitation (forms and URLs; it declines every question), as Claude Code and VS Code do")
	serveEnv := flag.String("serve-env", "", "gateway: extra environment of switchboard serve, comma-separated (e.g. GOGC=100), for a before/after")
	flag.DurationVar(&b.slowStart, "slow-start", 20*time.Second, "firstlist: how long the slow server takes to start")
	flag.StringVar(&b.sb, "switchboard", "", "use this switchboard binary instead of building one (a before/after)")
	peerList := flag.String("peers", "claude,gemini", "peers: which peers to run (comma-separated: claude, gemini)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./bench [flags] [scenario…]\nscenarios (default: all):\n")
		for _, s := range scenarios {
			fmt.Fprintf(os.Stderr, "  %-11s %s\n", s.name, s.desc)
		}
		fmt.Fprintln(os.Stderr, "flags:")
		flag.PrintDefaults()
	}
	flag.Parse()
	var err error
	if b.rounds < 1 || b.n < 1 || b.warmup < 0 {
		return errors.New("-rounds and -n must be at least 1, -warmup at least 0")
	}
	if b.sb != "" {
		if b.sb, err = filepath.Abs(b.sb); err != nil {
			return err
		}
	}
	if b.gwElicit {
		gwClient = elicitingClient()
	}
	gwMeta = b.gwMeta
	b.peerNames = strings.Split(*peerList, ",")
	b.gwPick = strings.Split(*gwList, ",")
	if *serveEnv != "" {
		b.serveEnv = strings.Split(*serveEnv, ",")
	}
	want := flag.Args()
	var known []string
	for _, s := range scenarios {
		known = append(known, s.name)
	}
	for _, w := range want {
		if !slices.Contains(known, w) {
			return fmt.Errorf("unknown scenario %q (known: %s)", w, strings.Join(known, ", "))
		}
	}

	if b.root, err = moduleRoot(); err != nil {
		return err
	}
	if b.self, err = os.Executable(); err != nil {
		return err
	}
	if b.tmp, err = os.MkdirTemp("", "switchboard-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	b.peersDir = filepath.Join(b.root, "bench", ".peers")

	build := "built with CGO_ENABLED=0"
	if b.cgo {
		build = "built with CGO_ENABLED=1"
	}
	if b.sb != "" {
		build = givenBuild(b.sb)
	}
	fmt.Printf("switchboard bench — %s, %s/%s, %d CPUs, Go %s, switchboard %s, rounds %d%s\n\n",
		time.Now().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), build, b.rounds, loadavg())
	failed := false
	for _, s := range scenarios {
		if len(want) > 0 && !slices.Contains(want, s.name) {
			continue
		}
		if err := s.run(b); err != nil {
			fmt.Printf("%s: FAILED: %v\n\n", s.name, err)
			failed = true
		}
	}
	if l := loadavg(); l != "" {
		fmt.Printf("At the end:%s\n", l)
	}
	if failed {
		return errors.New("some scenarios failed")
	}
	return nil
}

// switchboard builds cmd/switchboard once per run.
func (b *bench) switchboard() (string, error) {
	if b.sb != "" {
		return b.sb, nil
	}
	out := filepath.Join(b.tmp, "switchboard")
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", out, "./cmd/switchboard")
	cmd.Dir = b.root
	// Built as the README installs it: a static binary, which every
	// switchboard process (and the servers' supervisor) starts sooner.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b.cgo {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building switchboard: %v\n%s", err, msg)
	}
	b.sb = out
	return out, nil
}

// givenBuild says how a -switchboard binary was built, from the build
// information Go writes into it (a plain go build where a C compiler is
// present uses cgo, which the bench's own build does not: its processes
// start slower).
func givenBuild(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return path + " (given; its build information: " + err.Error() + ")"
	}
	cgo := "?"
	for _, st := range info.Settings {
		if st.Key == "CGO_ENABLED" {
			cgo = st.Value
		}
	}
	return fmt.Sprintf("%s (given: %s, CGO_ENABLED=%s)", path, info.GoVersion, cgo)
}

// echoCommand is the Go echo test server, run by this program.
func (b *bench) echoCommand() (string, []string) {
	if b.echoProtocol != "" {
		return b.self, []string{testserver.Arg, "echo", "-protocol", b.echoProtocol}
	}
	return b.self, []string{testserver.Arg, "echo"}
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(data), "module github.com/switchboard-mcp/switchboard\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the bench from inside the switchboard module (go run ./bench)")
		}
		dir = parent
	}
}

// loadavg returns ", load average X Y Z" from /proc/loadavg, or "": other
// work on the machine is the main source of noise, so the tables say how
// busy it was.
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return " load average " + strings.Join(f[:3], " ")
}
