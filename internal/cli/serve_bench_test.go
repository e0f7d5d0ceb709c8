package cli

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// benchWorld is a gatewayWorld for a benchmark, with alpha allowed.
func benchWorld(b *testing.B) *gatewayWorld {
	w := newGatewayWorld(b)
	w.servers(b, "alpha")
	w.permissions(b, []string{"mcp__alpha"}, nil)
	return w
}

func reportLatency(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}

func benchCalls(b *testing.B, cs *mcp.ClientSession, name string) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "ping"}}
	if _, err := cs.CallTool(ctx, params); err != nil { // warm up
		b.Fatal(err)
	}
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		ds = append(ds, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
	}
	b.StopTimer()
	reportLatency(b, ds)
}

// BenchmarkCallDirect: the Go SDK client calls the echo test server
// directly over stdio — the baseline for BenchmarkCallGateway.
func BenchmarkCallDirect(b *testing.B) {
	name, args := testserver.Command("echo")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(name, args...)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCalls(b, cs, "echo")
}

// BenchmarkCallGateway: the same client and server, through
// `switchboard serve --stdio` (permission check, envelope, output cap).
// SWITCHBOARD_BENCH_SERVE_GOGC and _GOMEMLIMIT set GOGC and GOMEMLIMIT for
// serve alone (its own settings are in serve_runtime.go).
func BenchmarkCallGateway(b *testing.B) {
	w := benchWorld(b)
	cmd := w.command(b, "serve", "--stdio")
	if v := os.Getenv("SWITCHBOARD_BENCH_SERVE_GOGC"); v != "" {
		cmd.Env = append(cmd.Env, "GOGC="+v)
	}
	if v := os.Getenv("SWITCHBOARD_BENCH_SERVE_GOMEMLIMIT"); v != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+v)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCalls(b, cs, "alpha__echo")
}

// BenchmarkGatewayHTTP16: 16 Go SDK clients call through one HTTP gateway
// at once; calls/s is the throughput. SWITCHBOARD_BENCH_SERVE_CPUPROFILE
// names a file for a CPU profile of the serve process alone, and
// SWITCHBOARD_BENCH_SERVE_AUDIT=1 turns its audit log on (a file in the
// benchmark's folder):
//
//	SWITCHBOARD_BENCH_SERVE_CPUPROFILE=/tmp/http.prof go test ./internal/cli -run '^$' -bench GatewayHTTP16 -benchtime 20000x
func BenchmarkGatewayHTTP16(b *testing.B) {
	w := benchWorld(b)
	if v := os.Getenv("SWITCHBOARD_BENCH_SERVE_CPUPROFILE"); v != "" {
		w.env = append(w.env, CPUProfileEnv+"="+v)
	}
	args := []string{"--http", "127.0.0.1:0"}
	if os.Getenv("SWITCHBOARD_BENCH_SERVE_AUDIT") == "1" {
		args = append(args, "--audit-log", filepath.Join(b.TempDir(), "audit.jsonl"))
	}
	base, stop := startHTTPGateway(b, w, args...)
	defer stop()
	const clients = 16
	ctx := context.Background()
	var sessions []*mcp.ClientSession
	for i := 0; i < clients; i++ {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	params := &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "ping"}}
	var (
		mu  sync.Mutex
		ds  []time.Duration
		wg  sync.WaitGroup
		bad error
	)
	next := make(chan struct{})
	b.ResetTimer()
	start := time.Now()
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				t0 := time.Now()
				res, err := cs.CallTool(ctx, params)
				d := time.Since(t0)
				mu.Lock()
				ds = append(ds, d)
				if (err != nil || res.IsError) && bad == nil {
					bad = err
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < b.N; i++ {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if bad != nil {
		b.Fatal(bad)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	reportLatency(b, ds)
}
