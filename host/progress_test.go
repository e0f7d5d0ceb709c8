package host_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// Every progress notification a server sends before its result reaches the
// caller before Call returns, the last one included: the server sends its
// last step right before the result, and the SDK hands notifications to
// their handler concurrently with responses, so without the host's barrier
// the last step often arrived after the call had returned and was dropped.
func TestProgressAllBeforeResult(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo")), nil)
	progressEveryCall(t, h, "mcp__echo__slow")
}

// progressEveryCall makes 40 fast calls of the slow tool, each sending 3
// progress notifications right before its result, and fails unless every
// one was delivered when Call returned.
func progressEveryCall(t *testing.T, h *host.Host, tool string) {
	t.Helper()
	ctx := ctxFor(t, 60*time.Second)
	for i := range 40 {
		var mu sync.Mutex
		var steps []float64
		pctx := host.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
			mu.Lock()
			steps = append(steps, p.Progress)
			mu.Unlock()
		})
		if _, err := h.Call(pctx, tool, map[string]any{"ms": 1, "steps": 3}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := append([]float64(nil), steps...)
		mu.Unlock()
		if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
			t.Fatalf("call %d: progress %v when Call returned, want [1 2 3]", i, got)
		}
	}
}

// The same over Streamable HTTP and the legacy SSE transport: the progress
// events come on the same event stream as the result, before it.
func TestProgressAllBeforeResultHTTP(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	for _, typ := range []config.Type{config.TypeHTTP, config.TypeSSE} {
		t.Run(string(typ), func(t *testing.T) {
			u := map[config.Type]string{config.TypeHTTP: srv.URL, config.TypeSSE: srv.SSEURL}[typ]
			h := newHost(t, cfgOf(remote("r", typ, u)), nil)
			progressEveryCall(t, h, "mcp__r__slow")
		})
	}
}

// A server gets the progress of its own calls only. The host numbers its
// calls' progress tokens in sequence (1, 2, …), so a hostile server that
// sends progress for the tokens it was not given — here 1..50, over and
// over, while another server's call runs — must not reach that call's
// caller (a gateway's client, a person at a terminal) with words of its
// own under another server's name.
func TestProgressOfAnotherServersCallIsDropped(t *testing.T) {
	h := newHost(t, cfgOf(stdio("victim", "echo"), stdio("peer", "hostile-peer")), nil)
	ctx := ctxFor(t, 60*time.Second)
	var mu sync.Mutex
	var got []string
	spray := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		_, err := h.Call(ctx, "mcp__peer__spray_progress", map[string]any{"n": 50, "ms": 1500})
		spray <- err
	}()
	<-started
	for range 5 {
		pctx := host.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
			mu.Lock()
			got = append(got, p.Message)
			mu.Unlock()
		})
		if _, err := h.Call(pctx, "mcp__victim__slow", map[string]any{"ms": 200, "steps": 2}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-spray; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	own := 0
	for _, m := range got {
		if m == testserver.HostileSprayMessage {
			t.Fatalf("the victim's call got the peer's progress %q (all: %q)", m, got)
		}
		if strings.HasPrefix(m, "step ") {
			own++
		}
	}
	if own != 10 {
		t.Fatalf("the victim's calls got %d of their own 10 progress notifications: %q", own, got)
	}
}
