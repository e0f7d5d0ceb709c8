package tasks_test

import (
	"context"
	"net/http"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/tasks"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// BenchmarkOverhead measures what the adapter costs a call that is not a
// task: it alternates calls on a session without the adapter and one
// through it, to two servers of the same kind (so both see the same
// machine load), and reports the p50 of each and their ratio:
//
//	go test ./internal/tasks -run '^$' -bench Overhead -benchtime 3000x -count 3
//
// "echo" is a server that offers no tasks (the adapter only looks at each
// message); "tasks" offers them (2025-11-25), and its tool "plain" has no
// taskSupport (the adapter reads each tools/call's tool name). See
// docs/benchmarks.md for figures.
func BenchmarkOverhead(b *testing.B) {
	for _, transport := range []string{"stdio", "http"} {
		for _, server := range []string{"echo", "tasks"} {
			b.Run(transport+"/"+server, func(b *testing.B) { benchOverhead(b, transport, server) })
		}
	}
}

func benchSession(b *testing.B, transport, server string, adapter bool) *mcp.ClientSession {
	b.Helper()
	var args []string
	if server == "tasks" {
		args = []string{"-protocol", legacy}
	}
	var t mcp.Transport
	a := tasks.New(nil)
	b.Cleanup(a.Close)
	switch transport {
	case "stdio":
		name, argv := testserver.Command(server, args...)
		t = &mcp.CommandTransport{Command: exec.Command(name, argv...), TerminateDuration: time.Second}
		if adapter {
			t = tasks.Wrap(t, a)
		}
	default:
		srv := testhttp.Start(b, server, testhttp.Options{Args: args})
		rt := http.DefaultTransport.(*http.Transport).Clone()
		var hrt http.RoundTripper = rt
		if adapter {
			hrt = a.RoundTripper(rt)
		}
		t = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: hrt}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(ctx, nil); err != nil { // as the host lists before it calls
		b.Fatal(err)
	}
	return cs
}

func benchOverhead(b *testing.B, transport, server string) {
	tool, args := "echo", map[string]any{"text": "hello switchboard"}
	if server == "tasks" {
		tool = "plain"
	}
	call := func(cs *mcp.ClientSession) time.Duration {
		t0 := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
		return time.Since(t0)
	}
	bare, through := benchSession(b, transport, server, false), benchSession(b, transport, server, true)
	call(bare)
	call(through)
	var without, with []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			without = append(without, call(bare))
			with = append(with, call(through))
		} else {
			with = append(with, call(through))
			without = append(without, call(bare))
		}
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[(len(ds)-1)/2] }
	pw, pa := p50(without), p50(with)
	b.ReportMetric(float64(pw.Nanoseconds())/1e3, "bare-p50-µs")
	b.ReportMetric(float64(pa.Nanoseconds())/1e3, "adapter-p50-µs")
	b.ReportMetric(float64(pa)/float64(pw), "adapter/bare-p50")
}
