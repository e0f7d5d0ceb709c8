package gateway_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (127.0.0.x: on Linux the whole /8 is the loopback's).
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("sources of 127.0.0.0/8 besides 127.0.0.1 are Linux's")
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// An address that presents wrong credentials is answered 401 for its
// first DefaultAuthFailures, then 429 with Retry-After, its credential
// unchecked — a good key from it too; a good key from another address
// works at once, as does one from an address with a few refusals; and
// requests with no credential at all (a client's first, to find the
// OAuth metadata) are not counted.
func TestAuthFailuresLimitedPerAddress(t *testing.T) {
	key, id, _ := gateway.NewKey()
	auth := gateway.NewAuth(&gateway.AuthOptions{SharedToken: "the-shared-token-1234", File: writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice": {Keys: []gateway.AuthKey{{ID: id, SHA256: gateway.KeyHash(key)}}},
	}})})
	g := servedGateway(t, "alpha", auth)
	srv := guardedServer(t, g, auth, nil)
	ctx := ctxFor(t, 60*time.Second)

	const ping = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	post := func(c *http.Client, token string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", strings.NewReader(ping))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	wrong := []string{"sbk_" + id + "_not-the-secret", "guess-of-the-shared-token", "sbk_00000000_x"}

	guesser := clientFrom(t, "127.0.0.2")
	for i := range gateway.DefaultAuthFailures {
		if code, _, body := post(guesser, wrong[i%len(wrong)]); code != http.StatusUnauthorized {
			t.Fatalf("wrong credential %d: %d %s, want 401", i+1, code, body)
		}
	}
	code, h, body := post(guesser, wrong[0])
	if code != http.StatusTooManyRequests || !strings.Contains(body, "try again in") {
		t.Fatalf("wrong credential %d: %d %s, want 429", gateway.DefaultAuthFailures+1, code, body)
	}
	if s, err := strconv.Atoi(h.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Errorf("Retry-After %q, want whole seconds within a minute", h.Get("Retry-After"))
	}
	if code, _, _ := post(guesser, key); code != http.StatusTooManyRequests {
		t.Errorf("the good key from the address that guessed: %d, want 429 (not checked)", code)
	}
	if code, _, body := post(clientFrom(t, "127.0.0.3"), key); code != http.StatusOK {
		t.Errorf("the good key from another address: %d %s", code, body)
	}
	if code, _, body := post(clientFrom(t, "127.0.0.3"), "the-shared-token-1234"); code != http.StatusOK {
		t.Errorf("the shared token from another address: %d %s", code, body)
	}
	someFailed := clientFrom(t, "127.0.0.4")
	for range gateway.DefaultAuthFailures - 1 {
		post(someFailed, wrong[1])
	}
	if code, _, body := post(someFailed, key); code != http.StatusOK {
		t.Errorf("the good key from an address with a few refusals: %d %s", code, body)
	}
	none := clientFrom(t, "127.0.0.5")
	for i := range 2 * gateway.DefaultAuthFailures {
		if code, _, _ := post(none, ""); code != http.StatusUnauthorized {
			t.Fatalf("request %d without a credential: %d, want 401", i+1, code)
		}
	}
	if code, _, body := post(none, key); code != http.StatusOK {
		t.Errorf("the good key after requests without one: %d %s", code, body)
	}
}

// A gateway that asks for no credential (loopback, none set) limits
// nothing: whatever Authorization a client sends is not looked at.
func TestAuthFailuresNoneWithoutCredentials(t *testing.T) {
	g := servedGateway(t, "alpha", nil)
	srv := httptest.NewServer(g.Handler(nil))
	t.Cleanup(srv.Close)
	ctx := ctxFor(t, 30*time.Second)
	for i := range 2 * gateway.DefaultAuthFailures {
		code, _ := postMCP(t, ctx, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			map[string]string{"Authorization": "Bearer whatever"})
		if code != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, code)
		}
	}
}

// Behind a reverse proxy on the same machine (a loopback-bound gateway,
// docs/gateway.md) every client's peer is the proxy: its failures are
// counted under the last X-Forwarded-For entry, the one the proxy added,
// so that one guesser is limited and the rest of the team is not. A
// client's own X-Forwarded-For before it does not count.
func TestAuthFailuresBehindALocalProxyCountPerClient(t *testing.T) {
	key, id, _ := gateway.NewKey()
	auth := gateway.NewAuth(&gateway.AuthOptions{File: writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice": {Keys: []gateway.AuthKey{{ID: id, SHA256: gateway.KeyHash(key)}}},
	}})})
	g := servedGateway(t, "alpha", auth)
	srv := guardedServer(t, g, auth, nil)
	ctx := ctxFor(t, 60*time.Second)
	const ping = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	post := func(forwarded, token string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", strings.NewReader(ping))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Forwarded-For", forwarded)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	// The guesser varies what it sends itself; the proxy appends its
	// address.
	for i := range gateway.DefaultAuthFailures {
		if code := post("10.9.8."+strconv.Itoa(i)+", 203.0.113.7", "sbk_"+id+"_wrong"); code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d, want 401", i+1, code)
		}
	}
	if code := post("203.0.113.7", key); code != http.StatusTooManyRequests {
		t.Errorf("the guesser's next request: %d, want 429", code)
	}
	if code := post("198.51.100.9", key); code != http.StatusOK {
		t.Errorf("a teammate behind the same proxy: %d, want 200", code)
	}
}

// An embedder that guards its own handler with the SDK's
// auth.RequireBearerToken and Auth.Verifier gets the same limit: past
// DefaultAuthFailures refused credentials from one address, its good key
// is refused unchecked too, while another address's works.
func TestAuthFailuresLimitTheSDKVerifier(t *testing.T) {
	key, id, _ := gateway.NewKey()
	a := gateway.NewAuth(&gateway.AuthOptions{File: writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice": {Keys: []gateway.AuthKey{{ID: id, SHA256: gateway.KeyHash(key)}}},
	}})})
	srv := httptest.NewServer(auth.RequireBearerToken(a.Verifier(), nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+auth.TokenInfoFromContext(r.Context()).UserID)
	})))
	t.Cleanup(srv.Close)
	get := func(c *http.Client, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	guesser := clientFrom(t, "127.0.0.2")
	if code, body := get(guesser, key); code != http.StatusOK || !strings.Contains(body, "hello alice") {
		t.Fatalf("the good key: %d %s", code, body)
	}
	for i := range gateway.DefaultAuthFailures {
		if code, body := get(guesser, "sbk_"+id+"_not-the-secret"); code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d %s", i+1, code, body)
		}
	}
	if code, body := get(guesser, key); code != http.StatusUnauthorized || !strings.Contains(body, "too many refused credentials") {
		t.Errorf("the good key from the address that guessed: %d %s, want 401 unchecked", code, body)
	}
	if code, body := get(clientFrom(t, "127.0.0.3"), key); code != http.StatusOK {
		t.Errorf("the good key from another address: %d %s", code, body)
	}
}
