package host_test

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

// The call benchmarks compare host.Call with a bare Go SDK
// ClientSession.CallTool on the same fast server (the echo test server, a
// child process each). Timings on a shared 2-core machine are noisy, so
// BenchmarkCallOverhead interleaves the two clients call by call and reports
// the p50 of each and their ratio from the same run (target ≤ 1.10):
//
//	go test ./host -run '^$' -bench CallOverhead -benchtime 5000x -count 5
//
// The /policy cases add PolicyPermit with an allow rule, as the CLI runs.
//
// See docs/benchmarks.md for figures.

var echoArgs = map[string]any{"text": "hello switchboard"}

// bareSession connects a bare SDK client to its own echo server process,
// with the same (empty) capabilities the host advertises.
func bareSession(b *testing.B) *mcp.ClientSession {
	b.Helper()
	name, args := testserver.Command("echo")
	client := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "v0"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(name, args...), TerminateDuration: time.Second}, nil)
	if err != nil {
		b.Fatalf("bare connect: %v", err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchHost starts a host on one echo server and makes one call, so the
// server is connected and its names routed before the clock starts. With
// withPolicy, calls go through PolicyPermit with an allow rule for the
// server, as the CLI's and the gateway's do (the policy decision, the
// argument copy and the annotation lookup included).
func benchHost(b *testing.B, withPolicy bool) *host.Host {
	b.Helper()
	opts := &host.Options{
		LookupEnv:  func(string) (string, bool) { return "", false },
		CloseGrace: 500 * time.Millisecond,
	}
	if withPolicy {
		opts.Permit = host.PolicyPermit(policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser},
			[]string{"mcp__echo"}, nil, []string{"mcp__echo__destructive"})...), nil)
	}
	h := host.New(cfgOf(stdio("echo", "echo")), opts)
	b.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.Call(ctx, "mcp__echo__echo", echoArgs); err != nil {
		b.Fatalf("warm-up call: %v", err)
	}
	return h
}

func bareCall(b *testing.B, cs *mcp.ClientSession) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: echoArgs})
	if err != nil || res.IsError {
		b.Fatalf("bare call: %v %v", err, res)
	}
}

func hostCall(b *testing.B, h *host.Host) {
	res, err := h.Call(context.Background(), "mcp__echo__echo", echoArgs)
	if err != nil || res.IsError {
		b.Fatalf("host call: %v %v", err, res)
	}
}

// percentile returns the p-th percentile (0–100) of ds, sorting ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)-1)*p/100]
}

func reportLatency(b *testing.B, prefix string, ds []time.Duration) time.Duration {
	p50 := percentile(ds, 50)
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, prefix+"p50-µs")
	b.ReportMetric(float64(percentile(ds, 99).Nanoseconds())/1e3, prefix+"p99-µs")
	return p50
}

// BenchmarkCallBare is one bare SDK call per iteration.
func BenchmarkCallBare(b *testing.B) {
	cs := bareSession(b)
	bareCall(b, cs)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		t0 := time.Now()
		bareCall(b, cs)
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	reportLatency(b, "", ds)
}

// BenchmarkCallHost is one host.Call per iteration (routing, breaker,
// timeout, stats and the write probe included; policy in the /policy case).
func BenchmarkCallHost(b *testing.B) {
	for _, pol := range []bool{false, true} {
		b.Run(policyName(pol), func(b *testing.B) { benchCallHost(b, pol) })
	}
}

func policyName(withPolicy bool) string {
	if withPolicy {
		return "policy"
	}
	return "nopolicy"
}

func benchCallHost(b *testing.B, withPolicy bool) {
	timedHostCalls(b, benchHost(b, withPolicy))
}

// timedHostCalls makes b.N calls of h and reports their CPU and latency.
func timedHostCalls(b *testing.B, h *host.Host) {
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		t0 := time.Now()
		hostCall(b, h)
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	reportLatency(b, "", ds)
}

// BenchmarkCallOverhead alternates a bare call and a host call, so both see
// the same machine load, and reports each p50 and host/bare.
func BenchmarkCallOverhead(b *testing.B) {
	for _, pol := range []bool{false, true} {
		b.Run(policyName(pol), func(b *testing.B) { benchCallOverhead(b, pol) })
	}
}

func benchCallOverhead(b *testing.B, withPolicy bool) {
	cs := bareSession(b)
	h := benchHost(b, withPolicy)
	bareCall(b, cs)
	bare := make([]time.Duration, 0, b.N)
	hosted := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		// Alternate which goes first, so neither always runs on a warmer cache.
		if i%2 == 0 {
			t0 := time.Now()
			bareCall(b, cs)
			t1 := time.Now()
			hostCall(b, h)
			bare, hosted = append(bare, t1.Sub(t0)), append(hosted, time.Since(t1))
		} else {
			t0 := time.Now()
			hostCall(b, h)
			t1 := time.Now()
			bareCall(b, cs)
			hosted, bare = append(hosted, t1.Sub(t0)), append(bare, time.Since(t1))
		}
	}
	b.StopTimer()
	pb := reportLatency(b, "bare-", bare)
	ph := reportLatency(b, "host-", hosted)
	if pb > 0 {
		b.ReportMetric(float64(ph)/float64(pb), "host/bare-p50")
	}
}

// BenchmarkCallRelayPath is host.Call of the echo server on the relay path
// of tools/call, and through the SDK's ClientSession.CallTool
// (Options.SDKCalls): allocations, CPU and p50 per call of each, with the
// server speaking 2025-11-25 (as most servers do) and 2026-07-28 (every
// server on go-sdk v1.8: the request carries the client's identity, the
// answer the server's).
//
//	go test ./host -run '^$' -bench CallRelayPath -benchtime 3000x -count 3
func BenchmarkCallRelayPath(b *testing.B) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		for _, sdk := range []bool{false, true} {
			name := "relay"
			if sdk {
				name = "sdk"
			}
			b.Run(protocol+"/"+name, func(b *testing.B) {
				h := host.New(cfgOf(stdio("echo", "echo", "-protocol", protocol)), &host.Options{
					LookupEnv: func(string) (string, bool) { return "", false }, CloseGrace: 500 * time.Millisecond, SDKCalls: sdk,
				})
				b.Cleanup(func() { h.Close() })
				hostCall(b, h)
				b.ReportAllocs()
				timedHostCalls(b, h)
			})
		}
	}
}
