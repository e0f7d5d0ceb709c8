package gateway_test

import (
	"context"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

// BenchmarkGatewayCall is the gateway's own cost per call, in one process
// so that a CPU or allocation profile sees it: a Go SDK client calls
// through a Gateway (over an in-memory transport) whose host reaches the
// echo test server over stdio with a PolicyPermit allowing it, as `serve`
// runs. Each iteration also makes one bare call to a second echo server
// process, alternating which goes first, and the p50 of each and their
// ratio are reported from the same run. The process hop of `serve --stdio`
// is not included (internal/cli's BenchmarkCallGateway has it):
//
//	go test ./gateway -run '^$' -bench GatewayCall -benchtime 3000x -count 5 -benchmem
//	go test ./gateway -run '^$' -bench GatewayCall -benchtime 10000x -cpuprofile gw.prof -memprofile gwmem.prof
func BenchmarkGatewayCall(b *testing.B) {
	ctx := context.Background()
	h := host.New(&config.Resolved{Servers: []config.ResolvedServer{stdio("echo", "echo")}}, &host.Options{
		LookupEnv:  func(string) (string, bool) { return "", false },
		CloseGrace: 500 * time.Millisecond,
		Permit: host.PolicyPermit(policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser},
			[]string{"mcp__echo"}, nil, []string{"mcp__echo__destructive"})...), nil),
	})
	defer h.Close()
	g := gateway.New(h, nil)
	defer g.Close()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	h.WaitReady(wctx)
	if err := g.Sync(wctx); err != nil {
		b.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	name, args := testserver.Command("echo")
	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(name, args...), TerminateDuration: time.Second}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()

	arguments := map[string]any{"text": "hello switchboard"}
	call := func(cs *mcp.ClientSession, tool string) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", tool, err, res)
		}
		return d
	}
	call(cs, "mcp__echo__echo") // warm up both
	call(bare, "echo")
	gw := make([]time.Duration, 0, b.N)
	direct := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			gw = append(gw, call(cs, "mcp__echo__echo"))
			direct = append(direct, call(bare, "echo"))
		} else {
			direct = append(direct, call(bare, "echo"))
			gw = append(gw, call(cs, "mcp__echo__echo"))
		}
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2].Nanoseconds()) / 1e3
	}
	g50, d50 := p50(gw), p50(direct)
	b.ReportMetric(d50, "direct-p50-µs")
	b.ReportMetric(g50, "gateway-p50-µs")
	b.ReportMetric(g50/d50, "gateway/direct-p50")
}
