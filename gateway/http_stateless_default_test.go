package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// An embedder's obvious code — gateway.New(sb, nil), then Handler — serves
// a request without a session as the stateless request it is: a client
// before 2026-07-28 is not promised list_changed it can never be sent, as
// with Options.Stateless set.
func TestHandlerOfAGatewayMadeWithoutStateless(t *testing.T) {
	ctx := ctxFor(t, 60*time.Second)
	sb := openSB(t, []config.ResolvedServer{stdio("alpha", "echo")}, nil)
	g := gateway.New(sb, nil)
	t.Cleanup(func() { g.Close() })
	srv := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Stateless: true}))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+gateway.DefaultHTTPPath, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"tools":{`) {
		t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	if strings.Contains(string(b), `"listChanged":true`) {
		t.Errorf("a stateless request is promised list_changed: %s", b)
	}
}
