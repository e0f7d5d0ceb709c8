package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// servedGateway is a gateway for HTTP (Options.Stateless) of one echo
// server named server, synced, closed when the test ends.
func servedGateway(t *testing.T, server string, auth *gateway.Auth) *gateway.Gateway {
	t.Helper()
	sb := openSB(t, []config.ResolvedServer{stdio(server, "echo")}, nil)
	g := gateway.New(sb, &gateway.Options{Stateless: true, Auth: auth})
	t.Cleanup(func() { g.Close() })
	ctx := ctxFor(t, 30*time.Second)
	sb.Host().WaitReady(ctx)
	if err := g.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return g
}

// One mux serves two gateways — one through Handler at /mcp, the other's
// Endpoint at /mcp/beta — and the first's Endpoint once more at
// /mcp/again, all behind one guard: each path serves its own gateway's
// tools, each endpoint has sessions of its own, and the guard refuses
// what it refuses on every path.
func TestHandlerMountsAtSeveralPaths(t *testing.T) {
	ctx := ctxFor(t, 60*time.Second)
	auth := gateway.NewAuth(&gateway.AuthOptions{SharedToken: "mount-token"})
	alpha, beta := servedGateway(t, "alpha", auth), servedGateway(t, "beta", auth)
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	guard := gateway.NewHTTPGuard(auth, addr, addr, nil, nil)
	mux := http.NewServeMux()
	mux.Handle("/", alpha.Handler(&gateway.HTTPOptions{Guard: guard}))
	mux.Handle("/mcp/beta", beta.Endpoint(&gateway.HTTPOptions{Guard: guard}))
	mux.Handle("/mcp/again", alpha.Endpoint(&gateway.HTTPOptions{Guard: guard}))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close) // after the clients' Cleanup: it waits for their streams

	hc := &http.Client{Transport: authTransport{"mount-token"}}
	connect := func(path string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "mounts", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.URL + path, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect to %s: %v", path, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	for path, want := range map[string]string{"/mcp": "alpha__echo", "/mcp/beta": "beta__echo", "/mcp/again": "alpha__echo"} {
		if names := toolNames(t, ctx, connect(path)); !has(names, want) {
			t.Errorf("%s lists %q; want %s", path, names, want)
		}
	}

	post := func(path string, header map[string]string) (int, string) {
		t.Helper()
		return postMCP(t, ctx, srv.URL+path,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`, header)
	}
	for _, path := range []string{"/mcp", "/mcp/beta", "/mcp/again"} {
		if code, _ := post(path, nil); code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", path, code)
		}
		if code, _ := post(path, map[string]string{"Authorization": "Bearer mount-token", "Origin": "http://evil.example"}); code != http.StatusForbidden {
			t.Errorf("%s from a foreign origin: %d, want 403", path, code)
		}
	}
	// A session begun at /mcp is unknown at /mcp/again, the same
	// gateway's other endpoint.
	code, sid := post("/mcp", map[string]string{"Authorization": "Bearer mount-token"})
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize at /mcp: %d, session %q", code, sid)
	}
	ping := func(path string) int {
		code, _ := postMCP(t, ctx, srv.URL+path, `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			map[string]string{"Authorization": "Bearer mount-token", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
		return code
	}
	if code := ping("/mcp"); code != http.StatusOK {
		t.Errorf("the session's ping at /mcp: %d", code)
	}
	if code := ping("/mcp/again"); code != http.StatusNotFound {
		t.Errorf("the session's ping at /mcp/again: %d, want 404 (sessions are per endpoint)", code)
	}
	// /healthz answers without the token; /metrics is not served by a
	// gateway without Metrics.
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
}

// Without a Guard, the endpoint takes the gateway's Auth and accepts no
// browser Origin at all (fail closed), while a client that sends none is
// served.
func TestEndpointWithoutGuard(t *testing.T) {
	ctx := ctxFor(t, 60*time.Second)
	g := servedGateway(t, "alpha", nil)
	srv := httptest.NewServer(g.Endpoint(nil))
	defer srv.Close()
	if code, _ := postMCP(t, ctx, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Origin": srv.URL}); code != http.StatusForbidden {
		t.Errorf("a browser Origin (even the server's own) without a Guard: %d, want 403", code)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "noguard", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatalf("connect without an Origin: %v", err)
	}
	defer cs.Close()
	if names := toolNames(t, ctx, cs); !has(names, "alpha__echo") {
		t.Errorf("lists %q", names)
	}
}

// postMCP posts body to url as an MCP client over Streamable HTTP does,
// with header's fields added, and returns the status and the session ID
// answered (Mcp-Session-Id).
func postMCP(t *testing.T, ctx context.Context, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}
