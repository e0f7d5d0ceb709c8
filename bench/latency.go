package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// target is one server the clients drive.
type target struct {
	name      string
	command   string
	args      []string
	tool      string
	arguments map[string]any
}

// targets returns the Go echo server and, when npm is usable,
// server-everything; the error says why server-everything and the
// TypeScript client are missing.
func (b *bench) targets() ([]target, npmtest.Paths, error) {
	cmd, args := b.echoCommand()
	ts := []target{{name: "go echo", command: cmd, args: args, tool: "echo", arguments: map[string]any{"text": "hello switchboard"}}}
	p, err := npmtest.Ensure(func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
	if err != nil {
		return ts, p, err
	}
	ts = append(ts, target{name: "server-everything", command: p.Node, args: []string{p.Everything},
		tool: "echo", arguments: map[string]any{"message": "hello switchboard"}})
	return ts, p, nil
}

type latencySample struct {
	p50, p99, initMs, rssMiB float64
}

// latency: call latency of the clients on the same servers, run back to
// back in each round: the bare Go SDK client, host.Call, the TypeScript
// client, and the bare client through two relays: `switchboard serve
// --stdio` and the SDK-only relay that is its floor.
func (b *bench) latency() error {
	targets, npm, npmErr := b.targets()
	clients := []string{"bare", "host", "ts", "relay", "sdkrelay", "jsonlrelay", "samerelay", "tsrelay"}
	// With setsid(1) the direct clients' server also runs in a session of
	// its own, as serve's servers do (under its supervisor): the kernel's
	// scheduler autogroups make a session a scheduling group of its own,
	// which costs the server's wake-ups, so "relay ÷ these" splits the
	// relay's ratio into the hop and the session.
	_, setsidErr := exec.LookPath("setsid")
	if setsidErr == nil {
		clients = append(clients, "baresession", "tssession")
	}
	labels := map[string]string{"bare": "Go SDK ClientSession.CallTool", "host": "switchboard host.Call", "ts": "TypeScript SDK client (node)",
		"baresession": "Go SDK client, its server in a session of its own",
		"tssession":   "TypeScript SDK client, its server in a session of its own",
		"relay":       "Go SDK client → switchboard serve --stdio → server",
		"sdkrelay":    "Go SDK client → SDK-only relay (floor) → server",
		"jsonlrelay":  "Go SDK client → SDK relay on switchboard's jsonl transport → server",
		"samerelay":   "same as serve --stdio, the client asking for the server's own protocol",
		"tsrelay":     "TypeScript SDK client → switchboard serve --stdio → server"}
	if _, err := b.switchboard(); err != nil {
		return err
	}
	// own[target] is the protocol version the bare client and the server
	// settle on directly: what "samerelay" asks serve --stdio for, so that
	// both hops speak what the direct path speaks.
	own := map[string]string{}
	for _, t := range targets {
		res, _, err := b.latencyRun(clientSpec{Kind: "bare", Mode: "latency", N: 1,
			Command: t.command, Args: t.args, Tool: t.tool, Arguments: t.arguments}, npm.Node, "")
		if err != nil {
			return fmt.Errorf("protocol probe on %s: %w", t.name, err)
		}
		own[t.name] = res.Protocol
	}
	// protocols[target][client] is the version the client's session
	// negotiated on its first hop.
	protocols := map[string]map[string]string{}
	// results[target][client] has one sample per round.
	results := map[string]map[string][]latencySample{}
	ratios := map[string]map[string][]float64{}
	// Per target, per round: serve --stdio ÷ each SDK-only relay.
	overFloor := map[string]map[string][]float64{"sdkrelay": {}, "jsonlrelay": {}}
	// Per target, per round: the TypeScript client through serve --stdio
	// ÷ the same client direct (issue 36's stdio target names both clients).
	tsOverDirect := map[string][]float64{}
	// Per client, per target, per round: the client through serve --stdio
	// ÷ the same client direct with its server in a session of its own.
	overSession := map[string]map[string][]float64{"Go": {}, "TypeScript": {}}
	for _, t := range targets {
		results[t.name] = map[string][]latencySample{}
		ratios[t.name] = map[string][]float64{}
		protocols[t.name] = map[string]string{}
	}
	for r := range b.rounds {
		for _, t := range targets {
			p50 := map[string]float64{}
			for i := range clients {
				c := clients[(i+r)%len(clients)] // rotate who goes first
				if (c == "ts" || c == "tsrelay" || c == "tssession") && npmErr != nil {
					continue
				}
				spec := clientSpec{Kind: c, Mode: "latency", N: b.n, Warmup: b.warmup,
					Command: t.command, Args: t.args, Tool: t.tool, Arguments: t.arguments, SDKRoot: npm.Dir}
				var home string
				if c == "samerelay" {
					spec.Protocol = own[t.name]
				}
				if c == "relay" || c == "samerelay" || c == "tsrelay" {
					// The bare client (or the TypeScript one), talking to the
					// gateway instead of the server.
					args, h, err := b.serveArgs("relay", map[string]stdioServer{"srv": {Type: "stdio", Command: t.command, Args: t.args}})
					if err != nil {
						return err
					}
					// serve names the tool as a gateway serves it, <server>__<tool>
					// within the default name budget, not the host's mcp__ name.
					spec.Kind, spec.Command, spec.Args, spec.Tool, home = "bare", b.sb, args, toolsurface.ServedName("srv", t.tool, toolsurface.DefaultNameBudget), h
					if c == "tsrelay" {
						spec.Kind = "ts"
					}
				}
				if c == "baresession" || c == "tssession" {
					spec.Kind = map[string]string{"baresession": "bare", "tssession": "ts"}[c]
					spec.Command, spec.Args = inOwnSession(t.command, t.args)
				}
				if c == "sdkrelay" || c == "jsonlrelay" {
					// The bare client, talking to an SDK-only relay.
					variant := map[string]string{"sdkrelay": "sdk", "jsonlrelay": "jsonl"}[c]
					spec.Kind = "bare"
					spec.Command, spec.Args = b.sdkRelayCommand(variant, t)
				}
				res, rss, err := b.latencyRun(spec, npm.Node, home)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", c, t.name, err)
				}
				s := latencySample{p50: res.P50, p99: res.P99, initMs: res.InitMs, rssMiB: math.NaN()}
				if rss > 0 {
					s.rssMiB = float64(rss) / 1024
				}
				results[t.name][c] = append(results[t.name][c], s)
				p50[c] = res.P50
				protocols[t.name][c] = res.Protocol
				fmt.Fprintf(os.Stderr, "  round %d  %-18s %-10s p50 %7.1f µs  p99 %8.1f µs\n", r+1, t.name, c, res.P50, res.P99)
			}
			for _, c := range clients {
				if v, ok := p50[c]; ok {
					ratios[t.name][c] = append(ratios[t.name][c], ratio(v, p50["bare"]))
				}
			}
			for f := range overFloor {
				overFloor[f][t.name] = append(overFloor[f][t.name], ratio(p50["relay"], p50[f]))
			}
			if p50["ts"] > 0 && p50["tsrelay"] > 0 {
				tsOverDirect[t.name] = append(tsOverDirect[t.name], ratio(p50["tsrelay"], p50["ts"]))
			}
			if p50["baresession"] > 0 {
				overSession["Go"][t.name] = append(overSession["Go"][t.name], ratio(p50["relay"], p50["baresession"]))
			}
			if p50["tssession"] > 0 && p50["tsrelay"] > 0 {
				overSession["TypeScript"][t.name] = append(overSession["TypeScript"][t.name], ratio(p50["tsrelay"], p50["tssession"]))
			}
		}
	}

	tb := &table{
		title: fmt.Sprintf("Call latency: %d sequential calls per client per round after %d warm-up calls (medians of %d rounds)", b.n, b.warmup, b.rounds),
		head:  []string{"server", "client", "p50 µs", "p99 µs", "p50 ÷ Go SDK", "client RSS MiB", "connect ms"},
	}
	for _, t := range targets {
		for _, c := range clients {
			ss := results[t.name][c]
			if len(ss) == 0 {
				continue
			}
			col := func(f func(latencySample) float64) float64 {
				var xs []float64
				for _, s := range ss {
					xs = append(xs, f(s))
				}
				return median(xs)
			}
			tb.add(t.name, labels[c],
				col(func(s latencySample) float64 { return s.p50 }),
				col(func(s latencySample) float64 { return s.p99 }),
				median(ratios[t.name][c]),
				col(func(s latencySample) float64 { return s.rssMiB }),
				col(func(s latencySample) float64 { return s.initMs }))
		}
	}
	tb.note("Each client is its own child process; RSS is its VmRSS (/proc) with the session open after the calls.")
	tb.note("host.Call runs the server under the supervisor process (not counted in the RSS); the bare client spawns it directly.")
	tb.note("p50 ÷ Go SDK is the median of the per-round ratios (targets: host.Call ≤ 1.10; the gateway relay, two hops, ≤ 2.2).")
	tb.note("The relay rows' client is the bare Go SDK client (the TypeScript one in its own row); their RSS is the client's, not the relay's (see the gateway scenario).")
	tb.note("SDK-only relay (floor): this program as a relay made of nothing but the Go SDK: an mcp.Server on mcp.StdioTransport re-serving the tools")
	tb.note("  its ClientSession (mcp.CommandTransport, no supervisor) lists, each call forwarded with CallTool and returned as is (no policy, naming")
	tb.note("  or envelope), with serve --stdio's runtime settings (GOMAXPROCS=1, GOGC=200): the cost of the two SDK halves any Go relay is built from.")
	tb.note("SDK relay on switchboard's jsonl transport: the same relay with both stdio transports replaced by internal/jsonl, the one serve uses on both sides:")
	tb.note("  the SDK's halves with switchboard's transport and nothing else of switchboard.")
	for _, f := range []string{"sdkrelay", "jsonlrelay"} {
		var per []string
		for _, t := range targets {
			per = append(per, fmt.Sprintf("%s %s", t.name, num(median(overFloor[f][t.name]))))
		}
		tb.note("serve --stdio ÷ %s, median of per-round p50 ratios (above 1: what switchboard adds to it): %s.", map[string]string{"sdkrelay": "SDK-only relay", "jsonlrelay": "SDK relay on jsonl"}[f], strings.Join(per, ", "))
	}
	if len(tsOverDirect) > 0 {
		var per []string
		for _, t := range targets {
			if xs := tsOverDirect[t.name]; len(xs) > 0 {
				per = append(per, fmt.Sprintf("%s %s", t.name, num(median(xs))))
			}
		}
		tb.note("TypeScript client through serve --stdio ÷ the same client direct, median of per-round p50 ratios (issue 36: ≤ 1.5): %s.", strings.Join(per, ", "))
	}
	if setsidErr == nil {
		for _, cl := range []string{"Go", "TypeScript"} {
			var per []string
			for _, t := range targets {
				if xs := overSession[cl][t.name]; len(xs) > 0 {
					per = append(per, fmt.Sprintf("%s %s", t.name, num(median(xs))))
				}
			}
			if len(per) > 0 {
				tb.note("%s client through serve --stdio ÷ the same client direct with its server in a session of its own (setsid(1)), median of per-round p50 ratios: %s.", cl, strings.Join(per, ", "))
			}
		}
		tb.note("  serve's servers run in its supervisor's session, a scheduling group of its own with the kernel's autogroups; the direct rows' servers in the bench's:")
		tb.note("  the \"session of its own\" rows put the direct server where serve's are, so this ratio is the hop alone.")
	} else {
		tb.note("No setsid(1) here: the rows with the direct server in a session of its own were skipped.")
	}
	tb.note("A Go SDK client asks for the newest protocol (2026-07-28) and gets the newest both ends speak. That protocol puts a _meta triple in every")
	tb.note("  request, which the SDK's server decodes and validates per call, so a relay that speaks it to a client while its server speaks an older")
	tb.note("  one pays on its first hop what the direct path never does. \"The client asking for the server's own protocol\" pins the client")
	tb.note("  (ClientSessionOptions.ProtocolVersion) to the version it negotiates with the server directly, so every hop speaks the same protocol.")
	for _, t := range targets {
		var per []string
		for _, c := range clients {
			if v := protocols[t.name][c]; v != "" {
				per = append(per, c+" "+v)
			}
		}
		tb.note("Negotiated on each client's first hop, %s: %s.", t.name, strings.Join(per, ", "))
	}
	if npmErr != nil {
		tb.note("server-everything and the TypeScript client were skipped: %v", npmErr)
	}
	tb.print()
	return nil
}
