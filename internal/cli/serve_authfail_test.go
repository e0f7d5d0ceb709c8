package cli

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
)

// serve --http gives each client address one budget of refused
// credentials for /mcp and the console's login page: an address that
// guessed keys at /ui/login too often is answered 429 at /mcp too, even
// with a good key; the same key from another address works.
func TestServeLimitsRefusedCredentialsPerAddress(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sources of 127.0.0.0/8 besides 127.0.0.1 are Linux's")
	}
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	key := w.addKey(t, "alice")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0")
	defer stop()
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		tr := &http.Transport{DialContext: d.DialContext}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	do := func(c *http.Client, req *http.Request) (int, string, string) {
		t.Helper()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	}
	login := func(c *http.Client, k string) int {
		req, _ := http.NewRequest("POST", base+"/ui/login", strings.NewReader(url.Values{"key": {k}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", base)
		code, _, _ := do(c, req)
		return code
	}
	initialize := func(c *http.Client, k string) (int, string, string) {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+k)
		return do(c, req)
	}
	guesser := from("127.0.0.2")
	n := 0
	for ; n < 100 && login(guesser, "sbk_0badc0de_guess") == http.StatusUnauthorized; n++ {
	}
	if n != 10 {
		t.Errorf("%d wrong keys refused at /ui/login before the address was held off, want 10", n)
	}
	if code, retry, body := initialize(guesser, key); code != http.StatusTooManyRequests || retry == "" {
		t.Errorf("the good key at /mcp from the address that guessed: %d (Retry-After %q) %s\nwant 429", code, retry, body)
	}
	if code, _, body := initialize(from("127.0.0.3"), key); code != http.StatusOK {
		t.Errorf("the good key from another address: %d %s", code, body)
	}
	if code := login(from("127.0.0.3"), key); code != http.StatusSeeOther {
		t.Errorf("the good key at /ui/login from another address: %d, want signed in", code)
	}
}
