package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// Two clients the gateway cannot tell apart — 2026-07-28 requests, no
// credential, one address: two agents on this machine — may have a call
// with the same request ID in flight at once. A notifications/cancelled
// naming that ID cannot say whose call it is, so it cancels neither;
// before, it cancelled whichever call had come last, the other client's,
// and left the sender's running. Shutdown then ends both: an answer says
// who ended its call.
func TestCancelOfASharedIDCancelsNeither(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	file := filepath.Join(t.TempDir(), "cancels")
	sb := openSB(t, []config.ResolvedServer{stdio("c", "cancel-log", "-cancel-file", file)}, allowServer("c"))
	g := gateway.New(sb, &gateway.Options{Stateless: true, FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	for _, sdkOnly := range []bool{false, true} {
		srv := httptest.NewServer(g.Handler(&gateway.HTTPOptions{SDKOnly: sdkOnly}))
		url := srv.URL + "/mcp"
		const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
		std := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "c__wait"}
		var answers []<-chan rawAnswer
		for range 2 {
			n := gateway.CallsInFlight(g)
			done := make(chan rawAnswer, 1)
			go func() {
				done <- rawPost(t, ctx, url, "", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"c__wait","arguments":{},`+meta+`}}`, std)
			}()
			for gateway.CallsInFlight(g) <= n {
				select {
				case <-ctx.Done():
					t.Fatal("waiting for the call to start")
				case <-time.After(10 * time.Millisecond):
				}
			}
			answers = append(answers, done)
		}
		cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"mine",` + meta + `}}`
		if a := rawPost(t, ctx, url, "", cancel, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/cancelled"}); a.status != http.StatusAccepted {
			t.Fatalf("cancel: %d %s", a.status, a.body)
		}
		sctx, stop := context.WithCancel(ctx)
		stop() // no grace: cancel what runs
		g.Shutdown(sctx)
		for i, done := range answers {
			if a := <-done; strings.Contains(a.body, "cancelled by its client") {
				t.Errorf("SDKOnly %v: call %d of two with ID 7 was cancelled by a notifications/cancelled naming 7: %.300s", sdkOnly, i+1, a.body)
			}
		}
		srv.Close()
		if !sdkOnly {
			// The gateway refuses calls after Shutdown: one more for the
			// SDK's endpoint.
			g.Close()
			sb = openSB(t, []config.ResolvedServer{stdio("c", "cancel-log", "-cancel-file", file)}, allowServer("c"))
			g = gateway.New(sb, &gateway.Options{Stateless: true, FirstSyncWait: 20 * time.Second})
			t.Cleanup(func() { g.Close() })
			if err := g.WaitSynced(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}
