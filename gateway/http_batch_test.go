package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// sessionOn initializes a session at url on protocol version, and returns
// its ID.
func sessionOn(t *testing.T, ctx context.Context, url, version string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	return sid
}

// A JSON-RPC batch, which protocols before 2025-06-18 have, is bounded:
// at most 64 messages (the SDK ran every call of a 4 MiB batch at once,
// 20,000 echo calls from one POST), and none in a session initialized on
// 2025-06-18 or later, whatever Mcp-Protocol-Version the request names
// (the SDK asks only that header). A short batch of a 2025-03-26 session
// is answered as before. On every endpoint: the fast one, the SDK-only
// one and the stateless one.
func TestBatchesBounded(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	sb := openSB(t, []config.ResolvedServer{stdio("echo", "echo")}, benchHost)
	g := gateway.New(sb, &gateway.Options{Stateless: true, FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	fastURL, sdkURL := fastAndSDK(t, g, gateway.HTTPOptions{})
	stateless := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Stateless: true}))
	t.Cleanup(stateless.Close)
	batch := func(n int) string {
		var calls []string
		for i := 1; i <= n; i++ {
			calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"b%d"}}}`, i, i))
		}
		return "[" + strings.Join(calls, ",") + "]"
	}
	old := map[string]string{"Mcp-Protocol-Version": "2025-03-26"}
	for _, url := range []string{fastURL, sdkURL} {
		current := sessionOn(t, ctx, url, "2025-11-25")
		older := sessionOn(t, ctx, url, "2025-03-26")
		if a := rawPost(t, ctx, url, current, batch(2), old); a.status != http.StatusBadRequest || !strings.Contains(a.body, "session version: 2025-11-25") {
			t.Errorf("%s: a batch in a 2025-11-25 session, sent as 2025-03-26: %d %.300s", url, a.status, a.body)
		}
		if a := rawPost(t, ctx, url, older, batch(2), old); a.status != http.StatusOK || !strings.Contains(a.body, `"id":1`) || !strings.Contains(a.body, `"id":2`) {
			t.Errorf("%s: a batch of 2 in a 2025-03-26 session: %d %.300s", url, a.status, a.body)
		}
		if a := rawPost(t, ctx, url, older, batch(65), old); a.status != http.StatusBadRequest || !strings.Contains(a.body, "at most 64") {
			t.Errorf("%s: a batch of 65 in a 2025-03-26 session: %d %.300s", url, a.status, a.body)
		}
	}
	if a := rawPost(t, ctx, stateless.URL+"/mcp", "", batch(65), nil); a.status != http.StatusBadRequest || !strings.Contains(a.body, "at most 64") {
		t.Errorf("stateless: a batch of 65: %d %.300s", a.status, a.body)
	}
}
