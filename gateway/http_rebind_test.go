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

// A loopback gateway that asks for no credential answers only to loopback
// Host names on everything its guard serves, /metrics included: a page of
// another site whose name was rebound to 127.0.0.1 sends a same-origin
// GET with no Origin header, and must not read the servers' and tools'
// names and counts. A loopback Host is still served.
func TestLoopbackGatewayRefusesARebindingHostOnMetrics(t *testing.T) {
	sb := openSB(t, []config.ResolvedServer{stdio("alpha", "echo")}, nil)
	auth := gateway.NewAuth(&gateway.AuthOptions{}) // no credential at all
	g := gateway.New(sb, &gateway.Options{Stateless: true, Auth: auth, Metrics: gateway.NewMetrics(sb.Host())})
	t.Cleanup(func() { g.Close() })
	ctx := ctxFor(t, 30*time.Second)
	sb.Host().WaitReady(ctx)
	if err := g.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	_, port, _ := strings.Cut(addr, ":")
	srv.Config.Handler = g.Handler(&gateway.HTTPOptions{Guard: gateway.NewHTTPGuard(auth, "127.0.0.1:0", addr, nil, nil)})
	srv.Start()
	t.Cleanup(srv.Close)

	get := func(path, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"evil.example:" + port, "EVIL.example", "127.0.0.1.evil.example:" + port} {
		if code, body := get("/metrics", host); code != http.StatusForbidden || strings.Contains(body, "switchboard_") {
			t.Errorf("GET /metrics with Host %q: %d, want 403 and no metrics\n%.300s", host, code, body)
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port} {
		if code, body := get("/metrics", host); code != http.StatusOK || !strings.Contains(body, `switchboard_server_up{server="alpha"} 1`) {
			t.Errorf("GET /metrics with Host %q: %d, want 200 with alpha's metrics\n%.300s", host, code, body)
		}
	}
}
