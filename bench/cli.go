package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// measured is one run of a command.
type measured struct {
	wall time.Duration
	// own is the CPU time of the process itself, children the CPU time of
	// the children it reaped; -1 when unknown.
	own, children time.Duration
	out           []byte
}

// stdioServer is one entry of an mcpServers object.
type stdioServer struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// servers returns n copies of server named prefix00, prefix01, …
func servers(prefix string, n int, s stdioServer) map[string]stdioServer {
	m := map[string]stdioServer{}
	for i := range n {
		m[fmt.Sprintf("%s%02d", prefix, i)] = s
	}
	return m
}

func merge(ms ...map[string]stdioServer) map[string]stdioServer {
	out := map[string]stdioServer{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// sbServer is the Go test server name, run by this program (the
// switchboard binary holds no test servers).
func (b *bench) sbServer(name string) stdioServer {
	return stdioServer{Type: "stdio", Command: b.self, Args: []string{testserver.Arg, name}}
}

// slowServer answers only after sleeping 1 s (a shell, then exec).
func (b *bench) slowServer() stdioServer {
	return stdioServer{Type: "stdio", Command: "/bin/sh", Args: []string{"-c", "sleep 1; exec '" + b.self + "' " + testserver.Arg + " echo"}}
}

// sandbox is a fresh HOME and working directory for one peer, so that
// nothing of the real user's configuration is read or written.
func (b *bench) sandbox(name string) (home, work string, err error) {
	home = filepath.Join(b.tmp, "home-"+name)
	work = filepath.Join(b.tmp, "work-"+name)
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", err
		}
	}
	return home, work, nil
}

// env is the environment every measured command gets: a small fixed one,
// with HOME pointing at a sandbox.
func env(home string, extra ...string) []string {
	e := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TMPDIR=" + os.TempDir()}
	return append(e, extra...)
}

// status runs `switchboard status --json` on servers and returns the run
// and how many servers ended connected.
func (b *bench) status(cfg map[string]stdioServer, extra ...string) (measured, int, error) {
	m, err := b.runOn(cfg, "switchboard", "switchboard status", func(file string) (string, []string) {
		return b.sb, append([]string{"status", "--json", "--strict-mcp-config", "--mcp-config", file}, extra...)
	})
	if err != nil {
		return m, 0, err
	}
	var rep struct {
		Servers []struct{ Name, State string } `json:"servers"`
	}
	if err := json.Unmarshal(m.out, &rep); err != nil {
		return m, 0, fmt.Errorf("switchboard status --json: %v", err)
	}
	n := 0
	for _, s := range rep.Servers {
		if s.State == "connected" {
			n++
		}
	}
	return m, n, nil
}

// runOn runs the command that command(file) gives, file being the
// servers.json of cfg in a fresh sandbox named name, and measures it; its
// stdout is in m.out. what names it in errors, with the end of its stderr.
func (b *bench) runOn(cfg map[string]stdioServer, name, what string, command func(file string) (string, []string)) (measured, error) {
	home, work, err := b.sandbox(name)
	if err != nil {
		return measured{}, err
	}
	file := filepath.Join(work, "servers.json")
	if err := writeJSON(file, map[string]any{"mcpServers": cfg}); err != nil {
		return measured{}, err
	}
	bin, args := command(file)
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = work, env(home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	m, err := measure(cmd, 2*time.Minute)
	if err != nil {
		return m, fmt.Errorf("%s: %v\n%s", what, err, lastLines(errb.String(), 10))
	}
	m.out = out.Bytes()
	return m, nil
}

func writeJSON(file string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

func secs(d time.Duration) float64 { return d.Seconds() }

// cpuMs is a CPU time in ms, NaN when unknown.
func cpuMs(d time.Duration) float64 {
	if d < 0 {
		return math.NaN()
	}
	return ms(d)
}

// fanout: parallel start-up of slow servers, and the host's CPU per server,
// each next to its floor: the bare Go SDK fan-out on the same servers, run
// back to back with status in a rotating order.
func (b *bench) fanout() error {
	if runtime.GOOS == "windows" {
		return fmt.Errorf("needs /bin/sh")
	}
	if _, err := b.switchboard(); err != nil {
		return err
	}
	type fanCase struct {
		name string
		cfg  map[string]stdioServer
		n    int
	}
	cases := []fanCase{
		{"10 servers that sleep 1 s before answering", servers("slow", 10, b.slowServer()), 10},
		{"20 fast Go echo servers", servers("fast", 20, b.sbServer("echo")), 20},
	}
	type runner struct {
		name string
		run  func(map[string]stdioServer) (measured, int, error)
	}
	runners := []runner{{"switchboard status", func(cfg map[string]stdioServer) (measured, int, error) { return b.status(cfg) }},
		{"bare Go SDK fan-out", b.sdkFanout}}
	// wall[case][runner], own and children CPU per server, and the
	// per-round ratio of status to the floor.
	wall := make([][][]float64, len(cases))
	own := make([][][]float64, len(cases))
	children := make([][][]float64, len(cases))
	overFloor := make([][]float64, len(cases))
	for i := range cases {
		wall[i], own[i], children[i] = make([][]float64, len(runners)), make([][]float64, len(runners)), make([][]float64, len(runners))
	}
	for r := range b.rounds {
		for i, c := range cases {
			got := make([]float64, len(runners))
			for k := range runners {
				j := (k + r) % len(runners)
				m, n, err := runners[j].run(c.cfg)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", runners[j].name, c.name, err)
				}
				if n != c.n {
					return fmt.Errorf("%s, %s: only %d connected", runners[j].name, c.name, n)
				}
				got[j] = secs(m.wall)
				wall[i][j] = append(wall[i][j], secs(m.wall))
				own[i][j] = append(own[i][j], cpuMs(m.own)/float64(c.n))
				children[i][j] = append(children[i][j], cpuMs(m.children)/float64(c.n))
			}
			overFloor[i] = append(overFloor[i], ratio(got[0], got[1]))
			fmt.Fprintf(os.Stderr, "  round %d  %-42s status %.2f s (own CPU %.1f ms/server)  SDK fan-out %.2f s (%.1f ms/server)\n",
				r+1, c.name, got[0], own[i][0][r], got[1], own[i][1][r])
		}
	}
	tb := &table{
		title: fmt.Sprintf("Fan-out start-up: `switchboard status` and its floor, a bare Go SDK fan-out (medians of %d rounds)", b.rounds),
		head:  []string{"case", "program", "wall s", "÷ floor", "host CPU ms/server", "supervisor+server CPU ms/server", "target"},
	}
	targets := []string{"≤ 1.6 s", "report"}
	for i, c := range cases {
		for j, rn := range runners {
			rat, target := median(overFloor[i]), targets[i]
			if j == 1 {
				rat, target = 1, "floor"
			}
			tb.add(c.name, rn.name, median(wall[i][j]), rat, median(own[i][j]), median(children[i][j]), target)
		}
	}
	tb.note("÷ floor is the median of the per-round ratios of status's wall time to the fan-out's.")
	tb.note("Host CPU is the process's own utime+stime (/proc/<pid>/stat, 10 ms ticks) ÷ servers: spawning, handshakes, tools/list, the report, shutdown.")
	tb.note("Supervisor+server CPU is that of everything the command started, also what ends after it (the bench runs it under a subreaper): for status the supervisor and the servers, for the floor the servers alone.")
	tb.note("Bare Go SDK fan-out (floor): this program in a hidden mode that reads the same server file, starts every server at once with mcp.CommandTransport,")
	tb.note("  connects, lists each one's tools, closes them all and exits (no supervisor, no configuration, no policy): what a Go host without supervision reaches here.")
	tb.print()
	return nil
}

// cold: one call from a cold start, server start included.
func (b *bench) cold() error {
	if _, err := b.switchboard(); err != nil {
		return err
	}
	targets, npm, npmErr := b.targets()
	type row struct{ target, client string }
	walls := map[row][]float64{}
	ratios := map[row][]float64{}
	clients := []string{"switchboard", "bare", "ts"}
	labels := map[string]string{"switchboard": "switchboard call (one-shot CLI)", "bare": "Go SDK client (bench child)", "ts": "TypeScript SDK client (node)"}
	for r := range b.rounds {
		for _, t := range targets {
			got := map[string]float64{}
			for i := range clients {
				c := clients[(i+r)%len(clients)]
				if c == "ts" && npmErr != nil {
					continue
				}
				var m measured
				var err error
				if c == "switchboard" {
					m, err = b.sbCall(t)
				} else {
					spec := clientSpec{Kind: c, Mode: "cold", Command: t.command, Args: t.args, Tool: t.tool, Arguments: t.arguments, SDKRoot: npm.Dir}
					var cmd *exec.Cmd
					if cmd, err = b.clientCmd(spec, npm.Node); err == nil {
						var errb bytes.Buffer
						cmd.Stderr = &errb
						m, err = measure(cmd, time.Minute)
						if err != nil {
							err = fmt.Errorf("%v\n%s", err, lastLines(errb.String(), 5))
						}
					}
				}
				if err != nil {
					return fmt.Errorf("%s on %s: %w", c, t.name, err)
				}
				got[c] = ms(m.wall)
				walls[row{t.name, c}] = append(walls[row{t.name, c}], ms(m.wall))
			}
			for c, v := range got {
				ratios[row{t.name, c}] = append(ratios[row{t.name, c}], ratio(v, got["ts"]))
			}
			fmt.Fprintf(os.Stderr, "  round %d  %-18s switchboard %.0f ms  bare %.0f ms  ts %.0f ms\n", r+1, t.name, got["switchboard"], got["bare"], got["ts"])
		}
	}
	tb := &table{
		title: fmt.Sprintf("Cold call: start the server, connect, one echo call, shut down (wall time, medians of %d rounds)", b.rounds),
		head:  []string{"server", "client", "wall ms", "÷ TypeScript client"},
	}
	for _, t := range targets {
		for _, c := range clients {
			if w := walls[row{t.name, c}]; len(w) > 0 {
				tb.add(t.name, labels[c], median(w), median(ratios[row{t.name, c}]))
			}
		}
	}
	tb.note("switchboard call: the built binary with a temp HOME, --strict-mcp-config and an allow rule (--settings); it also lists the server's tools to route the name and checks the policy.")
	if npmErr != nil {
		tb.note("server-everything and the TypeScript client were skipped: %v", npmErr)
	}
	tb.print()
	return nil
}

// sbCall runs one `switchboard call` on target t.
func (b *bench) sbCall(t target) (measured, error) {
	home, work, err := b.sandbox("switchboard")
	if err != nil {
		return measured{}, err
	}
	file := filepath.Join(work, "one.json")
	if err := writeJSON(file, map[string]any{"mcpServers": map[string]stdioServer{
		"srv": {Type: "stdio", Command: t.command, Args: t.args},
	}}); err != nil {
		return measured{}, err
	}
	args, _ := json.Marshal(t.arguments)
	// An allow rule, as a user who runs the tool by hand has: with no rule
	// a one-shot call asks, and with nobody to ask it is refused.
	cmd := exec.Command(b.sb, "call", "mcp__srv__"+t.tool, string(args), "--json", "--strict-mcp-config", "--mcp-config", file,
		"--settings", `{"permissions":{"allow":["mcp__srv"]}}`)
	cmd.Dir, cmd.Env = work, env(home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	m, err := measure(cmd, time.Minute)
	if err != nil {
		return m, fmt.Errorf("switchboard call: %v\n%s", err, lastLines(errb.String(), 5))
	}
	if !strings.Contains(out.String(), "hello switchboard") {
		return m, fmt.Errorf("switchboard call printed %q", lastLines(out.String(), 3))
	}
	return m, nil
}
