package main

import (
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// allowSettings is the --settings that lets the gateway run the bench
// servers' tools: a call no rule allows is asked, and the bench clients
// cannot answer. It is also what makes the gateway's policy do its work on
// every call.
func allowSettings(servers ...string) string {
	rules := ""
	for i, s := range servers {
		if i > 0 {
			rules += ","
		}
		rules += `"mcp__` + s + `"`
	}
	return `{"permissions":{"allow":[` + rules + `]}}`
}

// serveArgs are the arguments of `switchboard serve` on the servers in cfg,
// written to a file in a fresh sandbox; home is that sandbox's HOME.
func (b *bench) serveArgs(name string, cfg map[string]stdioServer, mode ...string) (args []string, home string, err error) {
	home, work, err := b.sandbox(name)
	if err != nil {
		return nil, "", err
	}
	file := filepath.Join(work, "servers.json")
	if err := writeJSON(file, map[string]any{"mcpServers": cfg}); err != nil {
		return nil, "", err
	}
	var names []string
	for n := range cfg {
		names = append(names, n)
	}
	slices.Sort(names)
	args = append([]string{"serve"}, mode...)
	args = append(args, "--no-watch", "--strict-mcp-config", "--mcp-config", file, "--settings", allowSettings(names...))
	return args, home, nil
}

// gwTarget is one program the gateway scenario measures: switchboard
// serve --http, a peer gateway, or the echo server itself over HTTP.
type gwTarget struct {
	key  string // for -gateways
	name string
	// wiring says, for the table's notes, how the target was set up.
	wiring string
	// aggregates: the target serves several stdio servers behind one
	// program (RSS with 20 and 100 servers is measured).
	aggregates bool
	// sse: the target speaks the 2024-11-05 HTTP+SSE transport only.
	sse bool
	// noIdle: idle sessions are not measured (a session costs a process).
	noIdle bool
	// floor: made of nothing but the Go SDK (this program in a hidden
	// mode), not a peer a user would pick: never "the best peer".
	floor bool
	// ours: switchboard in another setting (audit on, a binary before):
	// never "the best peer" either.
	ours bool
	// ownSession: a peer whose stdio servers each run in a session of
	// their own, as switchboard's run in its supervisor's: never "the best
	// peer"; it splits a gap into what that placement costs and the rest.
	ownSession bool
	// wholeExe: the target is one Go program of its own (switchboard,
	// TBXark's), read whole into the page cache before each launch (see
	// gwLaunch).
	wholeExe bool
	// launch starts the target on addr over the stdio servers in cfg
	// (named srv, or srv000…); it does not wait.
	launch func(addr string, cfg map[string]stdioServer) (*exec.Cmd, error)
	// endpoint is the URL a client connects to for server srv.
	endpoint func(addr, srv string) string
	// own is whether tool name t is server srv's echo as the target
	// names it.
	own func(srv, t string) bool
	// connected, if set, counts the servers connected behind run (else
	// waitAllListed looks for each server's tools).
	connected func(ctx context.Context, run *gwRun) (int, error)
}

// gwRun is one launched target.
type gwRun struct {
	t    *gwTarget
	cmd  *exec.Cmd
	addr string
	log  *tail
	// exited is closed when the process has exited.
	exited chan struct{}
	// tool is the echo tool's name through the target for server srv.
	tool     string
	protocol string // what the first session negotiated
	ask      string // the protocol version sessions ask for ("": the SDK's newest)
}

// gwFigures are one round's figures of one target.
type gwFigures struct {
	cold, p50, p99, rss1, anon1, rss20, rss100, idle, idleAnon float64
	tput                                                       []float64 // per gwLevels
	cpu                                                        []float64 // the target's CPU µs per call, per gwLevels
	below                                                      []float64 // its descendants' (servers', a supervisor's) CPU µs per call, per gwLevels
}

// gwLevels are the concurrent sessions of the throughput runs.
var gwLevels = []int{1, 4, 16, 64}

// gateway: switchboard serve --http (policy on) side by side with the Go
// and Node MCP gateways a user would pick instead, and with the echo
// server called directly over HTTP, in one run with one Go SDK client:
// launch to first call, p50/p99, calls/s at 1/4/16/64 sessions, RSS with
// 1, 20 and 100 servers (the aggregating ones), memory per idle session.
// Each round launches every target in turn (rotating the order) and
// measures them interleaved: latency in blocks of 100 calls, target after
// target.
func (b *bench) gateway() error {
	if _, err := b.switchboard(); err != nil {
		return err
	}
	targets, skipped := b.gwTargets()
	var sb, tbx, direct = -1, -1, -1
	b.gwAudit = -1
	for i, t := range targets {
		switch t.name {
		case "switchboard":
			sb = i
		case "switchboard, audit on":
			b.gwAudit = i
		case "TBXark mcp-proxy":
			tbx = i
		case "direct HTTP":
			direct = i
		}
	}
	figs := make([][]gwFigures, len(targets))
	protocols := make([]string, len(targets))
	for r := range b.rounds {
		order := rotate(len(targets), r)
		runs := make([]*gwRun, len(targets))
		stopAll := func() {
			for _, run := range runs {
				if run != nil {
					run.stop()
				}
			}
		}
		cur := make([]gwFigures, len(targets))
		// Launch one at a time, so that each start has the machine to
		// itself; the first successful call ends it.
		for _, i := range order {
			run, cold, err := b.gwLaunch(targets[i], 1)
			if err != nil {
				stopAll()
				return fmt.Errorf("%s: %w", targets[i].name, err)
			}
			runs[i], cur[i].cold = run, ms(cold)
			protocols[i] = run.protocol
			cur[i].rss1 = float64(vmRSS(run.cmd.Process.Pid)) / 1024
			cur[i].anon1 = float64(rssAnon(run.cmd.Process.Pid)) / 1024
		}
		lat, err := b.gwLatency(runs, order)
		if err != nil {
			stopAll()
			return err
		}
		for i := range runs {
			cur[i].p50, cur[i].p99 = us(percentile(lat[i], 50)), us(percentile(lat[i], 99))
		}
		for _, c := range gwLevels {
			for _, i := range order {
				tp, cpu, below, err := b.gwThroughput(runs[i], c)
				if err != nil {
					stopAll()
					return fmt.Errorf("%s, %d sessions: %w", targets[i].name, c, err)
				}
				cur[i].tput = append(cur[i].tput, tp)
				cur[i].cpu = append(cur[i].cpu, cpu)
				cur[i].below = append(cur[i].below, below)
			}
		}
		stopAll()
		// Idle sessions on a fresh launch: after the throughput runs a
		// target's RSS is still shrinking, and the difference would be
		// noise.
		for _, i := range order {
			cur[i].idle, cur[i].idleAnon = math.NaN(), math.NaN()
			if targets[i].noIdle || b.idle <= 0 {
				continue
			}
			run, _, err := b.gwLaunch(targets[i], 1)
			if err != nil {
				return fmt.Errorf("%s, idle sessions: %w", targets[i].name, err)
			}
			per, perAnon, err := b.gwIdle(run, b.idle)
			run.stop()
			if err != nil {
				return fmt.Errorf("%s, idle sessions: %w", targets[i].name, err)
			}
			cur[i].idle, cur[i].idleAnon = per, perAnon
		}
		for _, i := range order {
			cur[i].rss20, cur[i].rss100 = math.NaN(), math.NaN()
			if !targets[i].aggregates || !b.gwMany {
				continue
			}
			for _, n := range []int{20, 100} {
				run, _, err := b.gwLaunch(targets[i], n)
				if err != nil {
					return fmt.Errorf("%s, %d servers: %w", targets[i].name, n, err)
				}
				rss := float64(vmRSS(run.cmd.Process.Pid)) / 1024
				run.stop()
				if n == 20 {
					cur[i].rss20 = rss
				} else {
					cur[i].rss100 = rss
				}
			}
		}
		for i := range targets {
			figs[i] = append(figs[i], cur[i])
			f := cur[i]
			fmt.Fprintf(os.Stderr, "  round %d  %-20s cold %5.0f ms  p50 %5.0f µs  p99 %6.0f µs  calls/s %s  CPU µs/call %s (below it %s)  RSS %5.1f (anon %4.1f) / %5.1f / %5.1f MiB  idle %5.1f KiB/session (anon %5.1f)\n",
				r+1, targets[i].name, f.cold, f.p50, f.p99, joinNums(f.tput), joinNums(f.cpu), joinNums(f.below), f.rss1, f.anon1, f.rss20, f.rss100, f.idle, f.idleAnon)
		}
	}

	med := func(i int, get func(gwFigures) float64) float64 {
		var xs []float64
		for _, f := range figs[i] {
			xs = append(xs, get(f))
		}
		return median(xs)
	}
	// Ratios are medians of the per-round ratios, as elsewhere in the bench.
	medRatio := func(i, j int, get func(gwFigures) float64) float64 {
		if i < 0 || j < 0 {
			return math.NaN()
		}
		var xs []float64
		for r := range figs[i] {
			xs = append(xs, ratio(get(figs[i][r]), get(figs[j][r])))
		}
		return median(xs)
	}
	p50 := func(f gwFigures) float64 { return f.p50 }
	cold := func(f gwFigures) float64 { return f.cold }
	rss1 := func(f gwFigures) float64 { return f.rss1 }
	lvl := func(k int) func(gwFigures) float64 { return func(f gwFigures) float64 { return f.tput[k] } }
	cpuAt := func(k int) func(gwFigures) float64 { return func(f gwFigures) float64 { return f.cpu[k] } }
	belowAt := func(k int) func(gwFigures) float64 { return func(f gwFigures) float64 { return f.below[k] } }

	head := []string{"target", "p50 µs", "p99 µs", "p50 ÷ direct", "p50 ÷ TBXark"}
	for _, c := range gwLevels {
		head = append(head, fmt.Sprintf("calls/s %d", c))
	}
	for _, c := range gwLevels {
		if c >= 16 {
			head = append(head, fmt.Sprintf("CPU µs/call %d", c))
		}
	}
	for _, c := range gwLevels {
		if c >= 16 {
			head = append(head, fmt.Sprintf("below µs/call %d", c))
		}
	}
	lt := &table{
		title: fmt.Sprintf("Gateways over Streamable HTTP, one Go SDK client, the Go echo server behind each: latency and throughput (medians of %d rounds)", b.rounds),
		head:  head,
	}
	mt := &table{
		title: fmt.Sprintf("Gateways: memory and start (medians of %d rounds)", b.rounds),
		head: []string{"target", "RSS 1 server MiB", "÷ TBXark", "of it anonymous MiB", "÷ TBXark", "RSS 20 servers", "RSS 100 servers",
			fmt.Sprintf("KiB per idle session (%d)", b.idle), "anonymous", "launch → first call ms", "÷ TBXark"},
	}
	for i, t := range targets {
		row := []any{t.name, med(i, p50), med(i, func(f gwFigures) float64 { return f.p99 }), medRatio(i, direct, p50), medRatio(i, tbx, p50)}
		for k := range gwLevels {
			row = append(row, med(i, lvl(k)))
		}
		for k, c := range gwLevels {
			if c >= 16 {
				row = append(row, med(i, cpuAt(k)))
			}
		}
		for k, c := range gwLevels {
			if c >= 16 {
				row = append(row, med(i, belowAt(k)))
			}
		}
		lt.add(row...)
		anon1 := func(f gwFigures) float64 { return f.anon1 }
		mt.add(t.name, med(i, rss1), medRatio(i, tbx, rss1), med(i, anon1), medRatio(i, tbx, anon1),
			med(i, func(f gwFigures) float64 { return f.rss20 }), med(i, func(f gwFigures) float64 { return f.rss100 }),
			med(i, func(f gwFigures) float64 { return f.idle }), med(i, func(f gwFigures) float64 { return f.idleAnon }), med(i, cold), medRatio(i, tbx, cold))
	}
	lt.note("Latency: one session per target, %d sequential echo calls each after %d untimed, in blocks of 100 calls taking turns between the targets (all running).", b.n, b.warmup)
	lt.note("Every session asks for protocol %q (-gateway-protocol; \"\" is the SDK's newest, 2026-07-28, under which supergateway starts a server per request even with --stateful).", b.gwProtocol)
	if b.gwMeta {
		lt.note("Each call carries a _meta of a fresh progress token and two keys of the client's own (-gateway-meta), as VS Code's calls do.")
	}
	if b.gwElicit {
		lt.note("The client declares elicitation (-gateway-elicitation), as Claude Code and VS Code do (it declines every question; the echo calls ask none): switchboard keeps a 2026-07-28 call on a relay worker, and takes a 2025-11-25 session's calls on its fast path, to be handed over to the SDK's handler at a first question.")
	}
	lt.note("Throughput: N sessions of one target at once, each making %d sequential calls; calls/s is all calls over the wall time. One shared http.Transport (256 idle connections per host).", gwCallsPerSession)
	lt.note("CPU µs/call: the target process's CPU time over its throughput run ÷ its calls (its CPU-time clock: the scheduler's account in ns, every thread; the servers behind it not counted).")
	lt.note("below µs/call: the same for every process below the target (its servers; switchboard's supervisor): the same echo server costs more a call when its calls come in a pattern that wakes it more often.")
	for i, t := range targets {
		lt.note("%s: %s; protocol negotiated: %s.", t.name, t.wiring, protocols[i])
	}
	for _, s := range skipped {
		lt.note("%s", s)
	}
	mt.note("RSS is the target process's VmRSS (children not counted) after its first call; with 20 and 100 servers, after every server's tools were listed through it (a fresh launch each).")
	mt.note("Anonymous is RssAnon (heap, stacks, runtime): VmRSS also counts the pages of the program's own binary it touched, shared with every other process of it (switchboard's supervisor is one).")
	mt.note("switchboard's and TBXark's programs are read whole into the page cache before each launch: the kernel maps, with each page a process touches, its neighbours already cached, so the same binary reads ~3 MiB more (switchboard) just after go build, wholly cached, than once its cold pages were dropped from the cache; every such target is measured wholly cached.")
	if tbx >= 0 && b.gwLoaded[targets[tbx].name] > 0 {
		var per []string
		for _, t := range targets {
			if mib := b.gwLoaded[t.name]; mib > 0 {
				per = append(per, fmt.Sprintf("%s %.1f MiB (%.2f×)", t.name, mib, mib/b.gwLoaded[targets[tbx].name]))
			}
		}
		mt.note("What each program maps from its file (its ELF loadable segments; ÷ TBXark's): %s. Wholly cached, nearly all of it ends up resident, so the RSS ratio follows the programs' sizes.", strings.Join(per, ", "))
	}
	mt.note("switchboard's stdio servers run under one supervisor process of its own (about 1.6 MiB PSS, not counted); the Node peers run in one node process each.")
	mt.note("Idle sessions: on a fresh launch (1 server, one call made, %v to settle), %d sessions opened one after another (initialize, tools/list, then nothing; each holds its standalone SSE stream), RSS growth %v later ÷ sessions (switchboard serve gives freed heap back once idle for a second; a Go peer's runtime gives back what lies beyond its heap goal in the background).", gwSettle, b.idle, gwSettle)
	mt.note("Launch → first call: from exec to the first successful echo call of a client that retries connecting every 5 ms.")
	lt.print()
	mt.print()
	if sb >= 0 {
		b.gwVerdicts(figs, sb, tbx, direct, medRatio, med)
	}
	return nil
}

// gwVerdicts prints which of issue 23's targets hold in this run.
func (b *bench) gwVerdicts(figs [][]gwFigures, sb, tbx, direct int, medRatio func(i, j int, get func(gwFigures) float64) float64, med func(i int, get func(gwFigures) float64) float64) {
	p50 := func(f gwFigures) float64 { return f.p50 }
	check := func(what string, v, limit float64, lessIsBetter bool) {
		verdict := "holds"
		if math.IsNaN(v) {
			verdict = "not measured"
		} else if lessIsBetter && v > limit || !lessIsBetter && v < limit {
			verdict = "does NOT hold"
		}
		fmt.Printf("  %-58s %8s  %s\n", what, num(v), verdict)
	}
	fmt.Println("## Issue 23's and 36's targets in this run")
	check("HTTP p50 ÷ TBXark mcp-proxy's (≤ 0.9)", medRatio(sb, tbx, p50), 0.9, true)
	check("HTTP p50 ÷ direct HTTP (≤ 1.5)", medRatio(sb, direct, p50), 1.5, true)
	best, bestName := map[int]float64{}, map[int]string{}
	for k, c := range gwLevels {
		if c < 16 {
			continue
		}
		for i := range figs {
			if i == sb || i == direct || b.gwFloor[i] || b.gwOurs[i] {
				continue
			}
			if v := med(i, func(f gwFigures) float64 { return f.tput[k] }); v > best[k] {
				best[k], bestName[k] = v, b.gwNames[i]
			}
		}
	}
	// throughput checks one target's calls/s and CPU per call at 16 and
	// 64 sessions.
	throughput := func(t int, indent string) {
		for k, c := range gwLevels {
			if c >= 16 {
				check(fmt.Sprintf("%scalls/s at %d sessions ÷ the best peer's (%s) (≥ 1)", indent, c, bestName[k]), ratio(med(t, func(f gwFigures) float64 { return f.tput[k] }), best[k]), 1, false)
			}
		}
		for k, c := range gwLevels {
			if c >= 16 {
				check(fmt.Sprintf("%sgateway CPU per call at %d sessions ÷ TBXark's (≤ 1.2)", indent, c), medRatio(t, tbx, func(f gwFigures) float64 { return f.cpu[k] }), 1.2, true)
			}
		}
	}
	throughput(sb, "")
	check("RSS, 1 server ÷ TBXark's (≤ 1.5)", medRatio(sb, tbx, func(f gwFigures) float64 { return f.rss1 }), 1.5, true)
	check("  the same, anonymous memory only", medRatio(sb, tbx, func(f gwFigures) float64 { return f.anon1 }), 1.5, true)
	// Issue 36's bound (issue 23 asked for 4 KiB; it was closed as blocked).
	check("KiB per idle session (≤ 30)", med(sb, func(f gwFigures) float64 { return f.idle }), 30, true)
	check("  the same, anonymous memory only", med(sb, func(f gwFigures) float64 { return f.idleAnon }), 30, true)
	check("launch → first call ÷ TBXark's (≤ 1.5)", medRatio(sb, tbx, func(f gwFigures) float64 { return f.cold }), 1.5, true)
	if a := b.gwAudit; a >= 0 {
		// The targets hold with the audit log on and off.
		fmt.Println("  with the audit log on (switchboard, audit on):")
		check("  HTTP p50 ÷ TBXark mcp-proxy's (≤ 0.9)", medRatio(a, tbx, p50), 0.9, true)
		throughput(a, "  ")
		fmt.Printf("  %-58s %8s\n", "  p50 ÷ switchboard's with it off (no target)", num(medRatio(a, sb, p50)))
	}
	fmt.Println()
	// split prints switchboard's figures against target i's, and i's
	// against TBXark's: where each gap comes from.
	split := func(i int, heading, its string) {
		fmt.Printf("## Against %q (no targets: %s)\n", b.gwNames[i], heading)
		show := func(what string, v float64) { fmt.Printf("  %-58s %8s\n", what, num(v)) }
		show("switchboard p50 ÷ "+its, medRatio(sb, i, p50))
		show(its+" p50 ÷ TBXark's", medRatio(i, tbx, p50))
		if b.gwFloor[i] {
			show(its+" p50 ÷ direct HTTP's", medRatio(i, direct, p50))
		}
		for k, c := range gwLevels {
			if c < 16 {
				continue
			}
			for _, m := range []struct {
				what string
				get  func(gwFigures) float64
			}{
				{"calls/s", func(f gwFigures) float64 { return f.tput[k] }},
				{"CPU per call", func(f gwFigures) float64 { return f.cpu[k] }},
				{"servers' CPU per call", func(f gwFigures) float64 { return f.below[k] }},
			} {
				show(fmt.Sprintf("switchboard %s at %d sessions ÷ %s", m.what, c, its), medRatio(sb, i, m.get))
				show(fmt.Sprintf("%s %s at %d sessions ÷ TBXark's", its, m.what, c), medRatio(i, tbx, m.get))
			}
		}
	}
	if o := b.gwOwnSession; o >= 0 && tbx >= 0 {
		// switchboard's servers run in its supervisor's session, which the
		// kernel schedules as a group of its own (autogroups): TBXark set
		// up the same way splits each gap into that placement and the rest.
		split(o, "what the servers' own session costs", "its")
		fmt.Println()
	}
	// The floors split each ratio: switchboard ÷ floor is what
	// Switchboard's own code costs, floor ÷ TBXark what the Go SDK does.
	for i, floor := range b.gwFloor {
		if !floor {
			continue
		}
		split(i, "where each gap comes from", "the floor's")
		show := func(what string, v float64) { fmt.Printf("  %-58s %8s\n", what, num(v)) }
		anon1 := func(f gwFigures) float64 { return f.anon1 }
		show("switchboard anonymous memory, 1 server ÷ the floor's", medRatio(sb, i, anon1))
		show("the floor's anonymous memory, 1 server ÷ TBXark's", medRatio(i, tbx, anon1))
		show("the floor's KiB per idle session", med(i, func(f gwFigures) float64 { return f.idle }))
		fmt.Println()
	}
}

func joinNums(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.0f", x))
	}
	return strings.Join(s, "/")
}

// rotate is 0…n-1 starting at r mod n.
func rotate(n, r int) []int {
	out := make([]int, n)
	for k := range n {
		out[k] = (k + r) % n
	}
	return out
}

// gwCallsPerSession is each session's calls in a throughput run.
const gwCallsPerSession = 100

// gwTargets are the targets this run can measure, and why the others
// cannot be.
func (b *bench) gwTargets() ([]*gwTarget, []string) {
	echoCmd, echoArgs := b.echoCommand()
	shellEcho := shellQuote(append([]string{echoCmd}, echoArgs...))
	streamable := func(addr, _ string) string { return "http://" + addr + "/mcp" }
	named := func(srv, t string) bool { return t == srv+"__echo" }
	plain := func(_, t string) bool { return t == "echo" }
	var out []*gwTarget
	var skipped []string
	picked := func(key string) bool { return slices.Contains(b.gwPick, key) }
	out = append(out, &gwTarget{
		key: "direct", name: "direct HTTP",
		wiring: "the Go echo server itself served by the Go SDK's Streamable HTTP handler (stateful), this program in a hidden mode",
		launch: func(addr string, _ map[string]stdioServer) (*exec.Cmd, error) {
			cmd := exec.Command(b.self, httpEchoArg, addr)
			cmd.Env = env(b.tmp)
			return cmd, nil
		},
		endpoint: streamable, own: plain,
	})
	sbTarget := func(key, name, exe, how string, extra ...string) *gwTarget {
		return &gwTarget{
			key: key, name: name, floor: strings.HasPrefix(key, "switchboard-before"), ours: key != "switchboard", wholeExe: true,
			wiring:     "`switchboard serve --http` (stateful) on stdio servers from --mcp-config, --strict-mcp-config, --no-watch, an allow rule per server (policy on: every call is decided), " + how,
			aggregates: true,
			launch: func(addr string, cfg map[string]stdioServer) (*exec.Cmd, error) {
				args, home, err := b.serveArgs("gw-"+key, cfg, "--http", addr)
				if err != nil {
					return nil, err
				}
				for _, a := range extra {
					args = append(args, strings.ReplaceAll(a, "<home>", home))
				}
				cmd := exec.Command(exe, args...)
				cmd.Env = env(home, b.serveEnv...)
				return cmd, nil
			},
			endpoint: streamable, own: named,
			// Its /healthz: past a token budget the gateway defers tools to
			// tool_search, so a list does not show every server's.
			connected: func(ctx context.Context, run *gwRun) (int, error) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+run.addr+"/healthz", nil)
				resp, err := gwHTTP.Do(req)
				if err != nil {
					return 0, err
				}
				defer resp.Body.Close()
				var h struct {
					Connected int `json:"connected"`
				}
				err = json.NewDecoder(resp.Body).Decode(&h)
				return h.Connected, err
			},
		}
	}
	out = append(out, sbTarget("switchboard", "switchboard", b.sb, "static build"))
	// Issue 36's targets hold with the audit log on and off.
	out = append(out, sbTarget("switchboard-audit", "switchboard, audit on", b.sb,
		"static build, --audit-log to a file in its sandbox (a JSON line per call)", "--audit-log", "<home>/audit.jsonl"))
	if b.sbBefore != "" {
		out = append(out, sbTarget("switchboard-before", "switchboard before", b.sbBefore, "the binary given by -switchboard-before"))
		out = append(out, sbTarget("switchboard-before-audit", "switchboard before, audit on", b.sbBefore,
			"the binary given by -switchboard-before, --audit-log as switchboard-audit", "--audit-log", "<home>/audit.jsonl"))
	}
	for _, v := range []struct{ key, name, how string }{
		{"sdk-proxy", "Go SDK proxy (floor)", "over the SDK's CommandTransport"},
		{"sdk-proxy-jsonl", "Go SDK proxy on jsonl (floor)", "over internal/jsonl, the stdio transport switchboard speaks to its servers"},
		{"sdk-proxy-relay", "Go SDK proxy, relay design (floor)", "over internal/jsonl pinned to " + relayProtocol +
			", a receiving middleware answering tools/call with the upstream's raw result (relayfloor.go: issue 36's design on the SDK's public API)"},
	} {
		variant := strings.TrimPrefix(strings.TrimPrefix(v.key, "sdk-proxy"), "-")
		if variant == "" {
			variant = "sdk"
		}
		out = append(out, &gwTarget{
			key: v.key, name: v.name, floor: true,
			wiring: "the smallest aggregating gateway the Go SDK makes (this program in a hidden mode): one SDK client per stdio server " + v.how +
				", its tools served as <server>__<tool> by an mcp.Server behind the SDK's stateful Streamable HTTP handler, each call's result returned as is; no policy, envelope, timeout or supervisor; GOGC=200 as serve",
			aggregates: true,
			launch: func(addr string, cfg map[string]stdioServer) (*exec.Cmd, error) {
				_, work, err := b.sandbox("gw-" + v.key)
				if err != nil {
					return nil, err
				}
				file := filepath.Join(work, "servers.json")
				if err := writeJSON(file, map[string]any{"mcpServers": cfg}); err != nil {
					return nil, err
				}
				cmd := exec.Command(b.self, sdkProxyArg, variant, addr, file)
				cmd.Env = env(b.tmp)
				return cmd, nil
			},
			endpoint: streamable, own: named,
		})
	}
	tbxTarget := func(key, name, exe, ver string, ownSession bool) *gwTarget {
		wiring := "TBXark/mcp-proxy " + ver + " built with `go build` from -tbxark-src, type streamable-http, one endpoint per server (http://addr/<server>/), tools unprefixed, no auth tokens, logging off"
		if ownSession {
			wiring += "; each server started through setsid(1), so that it runs in a session of its own as switchboard's servers do (its supervisor's): with the kernel's scheduler autogroups (sched_autogroup_enabled), a session is a scheduling group of its own"
		}
		return &gwTarget{
			key: key, name: name, wholeExe: true, ownSession: ownSession,
			wiring:     wiring,
			aggregates: true,
			launch: func(addr string, cfg map[string]stdioServer) (*exec.Cmd, error) {
				home, work, err := b.sandbox("gw-" + key)
				if err != nil {
					return nil, err
				}
				servers := map[string]any{}
				for name, s := range cfg {
					cmd, args := s.Command, s.Args
					if ownSession {
						cmd, args = inOwnSession(cmd, args)
					}
					servers[name] = map[string]any{"command": cmd, "args": args, "options": map[string]any{"logEnabled": false}}
				}
				file := filepath.Join(work, "config.json")
				if err := writeJSON(file, map[string]any{
					"mcpProxy": map[string]any{
						"baseURL": "http://" + addr, "addr": addr, "name": "bench", "version": "1", "type": "streamable-http",
						"options": map[string]any{"logEnabled": false},
					},
					"mcpServers": servers,
				}); err != nil {
					return nil, err
				}
				cmd := exec.Command(exe, "-config", file)
				cmd.Env = env(home)
				return cmd, nil
			},
			endpoint: func(addr, srv string) string { return "http://" + addr + "/" + srv + "/" },
			own:      plain,
		}
	}
	if !picked("tbxark") && !picked("tbxark-session") {
		// Not asked for: nothing to build or install.
	} else if exe, ver, err := b.buildTBXark(); err != nil {
		skipped = append(skipped, "TBXark mcp-proxy unavailable: "+err.Error())
	} else {
		out = append(out, tbxTarget("tbxark", "TBXark mcp-proxy", exe, ver, false))
		if _, err := exec.LookPath("setsid"); err != nil {
			if picked("tbxark-session") {
				skipped = append(skipped, "TBXark with its servers in sessions of their own: no setsid(1) here")
			}
		} else {
			out = append(out, tbxTarget("tbxark-session", "TBXark, own sessions", exe, ver, true))
		}
	}
	node := func(dir, pkg, version, bin string) (string, error) {
		p := &peer{name: dir, dir: dir, pkg: pkg + "@" + version, version: version, bin: bin}
		if err := b.install(p); err != nil {
			return "", err
		}
		return p.exe, nil
	}
	if !picked("supergateway") {
		// Not asked for: nothing to build or install.
	} else if exe, err := node("supergateway", "supergateway", b.supergatewayVer, "supergateway"); err != nil {
		skipped = append(skipped, "supergateway unavailable: "+err.Error())
	} else {
		out = append(out, &gwTarget{
			key: "supergateway", name: "supergateway",
			wiring: "supergateway@" + b.supergatewayVer + " --stdio <echo> --outputTransport streamableHttp --stateful (stateless spawns a server per request); it starts one server process per session, so idle sessions are not measured",
			noIdle: true,
			launch: func(addr string, _ map[string]stdioServer) (*exec.Cmd, error) {
				_, port, _ := net.SplitHostPort(addr)
				home, _, err := b.sandbox("gw-supergateway")
				if err != nil {
					return nil, err
				}
				cmd := exec.Command(exe, "--stdio", shellEcho, "--outputTransport", "streamableHttp", "--stateful", "--port", port, "--logLevel", "none")
				cmd.Env = env(home)
				return cmd, nil
			},
			endpoint: streamable, own: plain,
		})
	}
	if !picked("mcp-proxy") {
		// Not asked for: nothing to build or install.
	} else if exe, err := node("mcp-proxy", "mcp-proxy", b.mcpProxyVer, "mcp-proxy"); err != nil {
		skipped = append(skipped, "mcp-proxy unavailable: "+err.Error())
	} else {
		out = append(out, &gwTarget{
			key: "mcp-proxy", name: "mcp-proxy (punkpeye)",
			wiring: "mcp-proxy@" + b.mcpProxyVer + " --server stream --port <p> -- <echo>: one server process shared by every session, stateful /mcp",
			launch: func(addr string, _ map[string]stdioServer) (*exec.Cmd, error) {
				host, port, _ := net.SplitHostPort(addr)
				home, _, err := b.sandbox("gw-mcp-proxy")
				if err != nil {
					return nil, err
				}
				cmd := exec.Command(exe, append([]string{"--server", "stream", "--host", host, "--port", port, "--", echoCmd}, echoArgs...)...)
				cmd.Env = env(home)
				return cmd, nil
			},
			endpoint: streamable, own: plain,
		})
	}
	if !picked("mcp-hub") {
		// Not asked for: nothing to build or install.
	} else if exe, err := node("mcp-hub", "mcp-hub", b.mcpHubVer, "mcp-hub"); err != nil {
		skipped = append(skipped, "mcp-hub unavailable: "+err.Error())
	} else {
		out = append(out, &gwTarget{
			key: "mcp-hub", name: "mcp-hub",
			wiring:     "mcp-hub@" + b.mcpHubVer + " --port <p> --config <servers>: aggregates the servers at /mcp, which speaks the 2024-11-05 HTTP+SSE transport only (the client uses mcp.SSEClientTransport), tools named <server>__<tool>",
			aggregates: true, sse: true,
			launch: func(addr string, cfg map[string]stdioServer) (*exec.Cmd, error) {
				_, port, _ := net.SplitHostPort(addr)
				home, work, err := b.sandbox("gw-mcp-hub")
				if err != nil {
					return nil, err
				}
				servers := map[string]any{}
				for name, s := range cfg {
					servers[name] = map[string]any{"command": s.Command, "args": s.Args}
				}
				file := filepath.Join(work, "mcp-hub.json")
				if err := writeJSON(file, map[string]any{"mcpServers": servers}); err != nil {
					return nil, err
				}
				cmd := exec.Command(exe, "--port", port, "--config", file)
				cmd.Dir, cmd.Env = work, env(home)
				return cmd, nil
			},
			endpoint: streamable, own: named,
		})
	}
	out = slices.DeleteFunc(out, func(t *gwTarget) bool { return !picked(t.key) })
	b.gwNames, b.gwFloor, b.gwOurs, b.gwOwnSession = nil, nil, nil, -1
	for _, t := range out {
		b.gwNames = append(b.gwNames, t.name)
		b.gwFloor = append(b.gwFloor, t.floor)
		b.gwOurs = append(b.gwOurs, t.ours || t.ownSession)
		if t.ownSession {
			b.gwOwnSession = len(b.gwNames) - 1
		}
	}
	return out, skipped
}

// shellQuote joins args into one sh command line.
func shellQuote(args []string) string {
	var q []string
	for _, a := range args {
		q = append(q, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(q, " ")
}

// inOwnSession is command and args run through setsid(1), so that the
// process runs in a session of its own, as switchboard's servers run in
// their supervisor's: with the kernel's scheduler autogroups a session is
// a scheduling group of its own, which changes what a server's wake-ups
// cost. The caller checks that setsid(1) is there.
func inOwnSession(command string, args []string) (string, []string) {
	return "setsid", append([]string{command}, args...)
}

// programLoadMiB is the size of what an ELF program maps from its file
// (the file size of its PT_LOAD segments: code, read-only data, the
// runtime's function tables, initialised data), in MiB.
func programLoadMiB(path string) (float64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			n += p.Filesz
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no loadable segment", path)
	}
	return float64(n) / (1 << 20), nil
}

// readWhole reads file path to its end, so that all of it is in the
// page cache.
func readWhole(path string) {
	if f, err := os.Open(path); err == nil {
		_, _ = io.Copy(io.Discard, f)
		f.Close()
	}
}

// buildTBXark builds TBXark/mcp-proxy from the source in -tbxark-src
// into bench/.peers/tbxark (the module proxy does not serve it) and
// returns the binary and the version it describes itself as.
func (b *bench) buildTBXark() (string, string, error) {
	src := b.tbxarkSrc
	if src == "" {
		src = filepath.Join(b.peersDir, "tbxark", "src")
	}
	data, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return "", "", fmt.Errorf("no source (go.mod) in %s: check out github.com/TBXark/mcp-proxy there, or pass -tbxark-src", src)
	}
	if !strings.HasPrefix(string(data), "module github.com/tbxark/mcp-proxy") {
		return "", "", fmt.Errorf("%s is not github.com/tbxark/mcp-proxy", src)
	}
	ver := "(unknown version)"
	if v, err := os.ReadFile(filepath.Join(src, "VERSION")); err == nil {
		ver = strings.TrimSpace(string(v))
	} else if _, err := os.Stat(filepath.Join(src, ".git")); err == nil {
		// Only a checkout of its own: in an unpacked archive git would
		// describe the repository around it (this one) instead.
		if out, err := exec.Command("git", "-C", src, "describe", "--tags", "--always").Output(); err == nil {
			ver = strings.TrimSpace(string(out))
		}
	}
	out := filepath.Join(b.peersDir, "tbxark", "mcp-proxy")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", "", err
	}
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build in %s: %v\n%s", src, err, lastLines(string(msg), 5))
	}
	return out, ver, nil
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	l.Close()
	return addr, nil
}

// tail keeps the last lines a process wrote, for errors.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		t.lines = append(t.lines, l)
		if len(t.lines) > 20 {
			t.lines = t.lines[1:]
		}
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// gwHTTP is the HTTP client of every session: one transport, enough idle
// connections that 64 sessions do not open and close connections per
// call.
var gwHTTP = &http.Client{Transport: &http.Transport{
	MaxIdleConns: 1024, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute,
	DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
}}

// gwClient is every session's client: one that declared no capabilities,
// or, with -gateway-elicitation, one that declared elicitation.
var gwClient = mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})

// elicitingClient declares elicitation of forms and URLs and declines
// every question.
func elicitingClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{},
		}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
}

// connect opens one session to server srv through run; an SSE session
// ends with ctx.
func (run *gwRun) connect(ctx context.Context, srv string) (*mcp.ClientSession, error) {
	url := run.t.endpoint(run.addr, srv)
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: gwHTTP, MaxRetries: -1}
	if run.t.sse {
		tr = &mcp.SSEClientTransport{Endpoint: url, HTTPClient: gwHTTP}
	}
	return gwClient.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: run.ask})
}

// gwMeta (-gateway-meta) gives each call the _meta VS Code gives its
// calls: a progress token of its own and the chat's conversation and
// request IDs.
var (
	gwMeta   bool
	gwTokens atomic.Int64
)

func (run *gwRun) call(ctx context.Context, cs *mcp.ClientSession) error {
	params := &mcp.CallToolParams{Name: run.tool, Arguments: map[string]any{"text": "hello switchboard"}}
	if gwMeta {
		params.Meta = mcp.Meta{"progressToken": "bench-" + strconv.FormatInt(gwTokens.Add(1), 10),
			"vscode.conversationId": "bench-conversation", "vscode.requestId": "bench-request"}
	}
	res, err := cs.CallTool(ctx, params)
	if err == nil && res.IsError {
		err = fmt.Errorf("tool error: %v", res.Content)
	}
	return err
}

// stop ends the target and everything it started (its process group).
func (run *gwRun) stop() {
	if run.cmd.Process == nil {
		return
	}
	pg := -run.cmd.Process.Pid
	killGroup(pg, false)
	select {
	case <-run.exited:
	case <-time.After(10 * time.Second):
	}
	killGroup(pg, true) // it, if it is still there, and children that outlived it
	<-run.exited
}

// gwLaunch starts t on n echo servers (srv, or srv000…) and returns once
// a client's echo call succeeded through it, with the time from exec to
// that call; for n > 1, once every server's tools are listed too.
func (b *bench) gwLaunch(t *gwTarget, n int) (*gwRun, time.Duration, error) {
	echoCmd, echoArgs := b.echoCommand()
	cfg := map[string]stdioServer{}
	first := "srv"
	if n == 1 {
		cfg["srv"] = stdioServer{Type: "stdio", Command: echoCmd, Args: echoArgs}
	} else {
		for i := range n {
			cfg[fmt.Sprintf("srv%03d", i)] = stdioServer{Type: "stdio", Command: echoCmd, Args: echoArgs}
		}
		first = "srv000"
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, 0, err
	}
	cmd, err := t.launch(addr, cfg)
	if err != nil {
		return nil, 0, err
	}
	if t.wholeExe {
		// The RSS read after the first call counts the program's own pages
		// the kernel mapped, and its fault-around maps, with each page
		// touched, the neighbours already in the page cache: a binary just
		// written (go build) is wholly there, one that ran days ago maybe
		// in part, so the same program read ~3 MiB apart (switchboard,
		// 26.4 vs 23.7 MiB). Read whole first, every such target is
		// measured in the state of a program installed or run lately.
		readWhole(cmd.Path)
		if mib, err := programLoadMiB(cmd.Path); err == nil {
			if b.gwLoaded == nil {
				b.gwLoaded = map[string]float64{}
			}
			b.gwLoaded[t.name] = mib
		}
	}
	run := &gwRun{t: t, cmd: cmd, addr: addr, log: &tail{}, exited: make(chan struct{}), ask: b.gwProtocol}
	cmd.Stdout, cmd.Stderr = run.log, run.log
	ownGroup(cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	go func() {
		_ = cmd.Wait()
		close(run.exited)
	}()
	var cs *mcp.ClientSession
	var lastErr, why error // why: the last error other than a timeout
	for {
		select {
		case <-run.exited:
			return nil, 0, fmt.Errorf("exited before a call succeeded (%v): %v\n%s", cmd.ProcessState, lastErr, run.log)
		default:
		}
		if ctx.Err() != nil {
			run.stop()
			return nil, 0, fmt.Errorf("no successful call within 2 minutes of launch: %v (before: %v)\n%s", lastErr, why, run.log)
		}
		// ctx, not a shorter one: an SSE session lives as long as its
		// Connect's context.
		cs, lastErr = run.connect(ctx, first)
		if lastErr == nil {
			if run.tool == "" {
				run.tool, lastErr = pickTool(ctx, cs, t, first)
			}
			if lastErr == nil {
				if lastErr = run.call(ctx, cs); lastErr == nil {
					break
				}
			}
			cs.Close()
		}
		if lastErr != nil && !errors.Is(lastErr, context.DeadlineExceeded) {
			why = lastErr
		}
		time.Sleep(5 * time.Millisecond)
	}
	cold := time.Since(start)
	if ir := cs.InitializeResult(); ir != nil {
		run.protocol = ir.ProtocolVersion
	}
	defer cs.Close()
	if n > 1 {
		if err := waitAllListed(ctx, run, cs, cfg); err != nil {
			run.stop()
			return nil, 0, err
		}
	}
	return run, cold, nil
}

// pickTool finds the echo tool of server srv in what the target lists.
func pickTool(ctx context.Context, cs *mcp.ClientSession, t *gwTarget, srv string) (string, error) {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", err
	}
	var names []string
	for _, tool := range res.Tools {
		if t.own(srv, tool.Name) {
			return tool.Name, nil
		}
		names = append(names, tool.Name)
	}
	return "", fmt.Errorf("no echo tool of %s among %v", srv, names)
}

// waitAllListed waits until every server of cfg is up behind run: for an
// aggregating target whose tools name their server, until every server's
// echo is listed; otherwise (one endpoint per server) until each endpoint
// lists its echo.
func waitAllListed(ctx context.Context, run *gwRun, cs *mcp.ClientSession, cfg map[string]stdioServer) error {
	for {
		missing := 0
		if run.t.connected != nil {
			n, err := run.t.connected(ctx, run)
			if err != nil {
				return err
			}
			missing = len(cfg) - n
		} else if run.t.own("x", "x__echo") {
			// Every page: an SDK server pages its list (1,000 tools a page).
			have := map[string]bool{}
			for t, err := range cs.Tools(ctx, nil) {
				if err != nil {
					return err
				}
				have[t.Name] = true
			}
			for s := range cfg {
				if !have[s+"__echo"] {
					missing++
				}
			}
		} else {
			for s := range cfg {
				c, err := run.connect(ctx, s)
				if err != nil {
					missing++
					continue
				}
				if _, err := pickTool(ctx, c, run.t, s); err != nil {
					missing++
				}
				c.Close()
			}
		}
		if missing == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d servers not listed through %s: %v\n%s", missing, len(cfg), run.t.name, ctx.Err(), run.log)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// gwLatency runs b.n timed calls per target, one session each, in blocks
// of 100 calls taking turns.
func (b *bench) gwLatency(runs []*gwRun, order []int) ([][]time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sessions := make([]*mcp.ClientSession, len(runs))
	for _, i := range order {
		cs, err := runs[i].connect(ctx, "srv")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", runs[i].t.name, err)
		}
		defer cs.Close()
		sessions[i] = cs
		for range b.warmup {
			if err := runs[i].call(ctx, cs); err != nil {
				return nil, fmt.Errorf("%s: warm-up: %w", runs[i].t.name, err)
			}
		}
	}
	out := make([][]time.Duration, len(runs))
	for done := 0; done < b.n; done += 100 {
		block := min(100, b.n-done)
		for _, i := range order {
			for range block {
				t0 := time.Now()
				if err := runs[i].call(ctx, sessions[i]); err != nil {
					return nil, fmt.Errorf("%s: %w", runs[i].t.name, err)
				}
				out[i] = append(out[i], time.Since(t0))
			}
		}
	}
	return out, nil
}

// gwThroughput opens c sessions to run and returns calls per second of
// them calling at once, the target process's CPU per call in µs (its
// children, the servers, not counted), and that of the processes below it.
func (b *bench) gwThroughput(run *gwRun, c int) (perSec, cpuPerCall, belowPerCall float64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sessions := make([]*mcp.ClientSession, c)
	for k := range sessions {
		cs, err := run.connect(ctx, "srv")
		if err != nil {
			return 0, 0, 0, err
		}
		defer cs.Close()
		if err := run.call(ctx, cs); err != nil { // warm: the session's first call
			return 0, 0, 0, err
		}
		sessions[k] = cs
	}
	var wg sync.WaitGroup
	errs := make(chan error, c)
	pid := run.cmd.Process.Pid
	below := descendants(pid)
	cpu0, below0 := procCPU(pid), procsCPU(below)
	start := time.Now()
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range gwCallsPerSession {
				if err := run.call(ctx, cs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu, belowCPU := procCPU(pid)-cpu0, procsCPU(below)-below0
	select {
	case err := <-errs:
		return 0, 0, 0, err
	default:
	}
	calls := float64(c * gwCallsPerSession)
	return calls / elapsed.Seconds(), float64(cpu.Microseconds()) / calls, float64(belowCPU.Microseconds()) / calls, nil
}

// gwSettle is how long a target is left idle before its RSS is read for
// the idle-session figure: long enough for a Go runtime's background
// scavenger, Node's collector and switchboard serve's release of freed
// heap once idle for a second (internal/cli/serve_idle.go) to have run.
const gwSettle = 3 * time.Second

// gwIdle opens k sessions to run, leaves them idle, and returns the
// target's RSS growth per session in KiB.
func (b *bench) gwIdle(run *gwRun, k int) (rss, anon float64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pid := run.cmd.Process.Pid
	time.Sleep(gwSettle)
	before, beforeAnon := vmRSS(pid), rssAnon(pid)
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for range k {
		cs, err := run.connect(ctx, "srv")
		if err != nil {
			return 0, 0, fmt.Errorf("after %d sessions: %w", len(sessions), err)
		}
		sessions = append(sessions, cs)
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return 0, 0, fmt.Errorf("after %d sessions: %w", len(sessions), err)
		}
	}
	time.Sleep(gwSettle)
	after, afterAnon := vmRSS(pid), rssAnon(pid)
	if before == 0 || after == 0 {
		return 0, 0, errors.New("cannot read the target's RSS")
	}
	return float64(after-before) / float64(k), float64(afterAnon-beforeAnon) / float64(k), nil
}

// httpEchoArg makes this program the Go echo server on Streamable HTTP at
// the address that follows: the direct row of the gateway scenario.
const httpEchoArg = "__bench-http-echo"

// runHTTPEcho serves the Go echo test server over Streamable HTTP on addr
// until it is signalled.
func runHTTPEcho(addr string, newServer func() *mcp.Server) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := newServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	return http.Serve(ln, h)
}
