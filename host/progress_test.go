package host_test

import (
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// Every progress notification a server sends before its result reaches the
// caller before Call returns, the last one included: the server sends its
// last step right before the result, and the SDK hands notifications to
// their handler concurrently with responses, so without the host's barrier
// the last step often arrived after the call had returned and was dropped.
func TestProgressAllBeforeResult(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo")), nil)
	ctx := ctxFor(t, 60*time.Second)
	for i := range 40 {
		var mu sync.Mutex
		var steps []float64
		pctx := host.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
			mu.Lock()
			steps = append(steps, p.Progress)
			mu.Unlock()
		})
		if _, err := h.Call(pctx, "mcp__echo__slow", map[string]any{"ms": 1, "steps": 3}); err != nil {
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
