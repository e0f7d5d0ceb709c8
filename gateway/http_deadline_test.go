package gateway_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// trickle sends a POST of path with a 1000-byte body to addr, one byte
// every 100 ms, and returns how long the server kept the connection open
// (at most within) and the status line it answered, if any.
func trickle(t *testing.T, addr, path string, within time.Duration) (time.Duration, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if _, err := io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	status := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c).ReadString('\n')
		status <- strings.TrimSpace(line)
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var line string
	for {
		select {
		case line = <-status:
			// The answer may come before the connection is closed: wait
			// for the close (a write that fails) too.
		case <-tick.C:
		}
		if time.Since(start) > within {
			return time.Since(start), line
		}
		if _, err := c.Write([]byte("a")); err != nil {
			return time.Since(start), line
		}
	}
}

// Every path of the gateway's handler bounds the time its request's body
// may take, not only the MCP endpoint: a client that trickles a body to
// /healthz or /metrics, which read none, has its connection closed within
// about the body timeout instead of holding it as long as it likes.
func TestHandlerBoundsEveryBody(t *testing.T) {
	g := servedGateway(t, "alpha", nil)
	srv := httptest.NewServer(g.Handler(&gateway.HTTPOptions{BodyTimeout: 300 * time.Millisecond}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, path := range []string{"/healthz", "/no-such-page", "/mcp"} {
		if took, line := trickle(t, addr, path, 5*time.Second); took > 3*time.Second {
			t.Errorf("a trickled body to %s held the connection %v (answer %q), want it closed within about 300ms", path, took, line)
		}
	}
}

// BodyDeadline ends its bound once the body is read whole: a handler that
// reads it and then works long (a console's playground call) is not cut,
// nor is its request's context cancelled; a body that trickles is.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	cancelled := make(chan bool, 1)
	h := gateway.BodyDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "slow body: "+err.Error(), http.StatusRequestTimeout)
			return
		}
		select {
		case <-r.Context().Done():
			cancelled <- true
			return
		case <-time.After(800 * time.Millisecond):
			cancelled <- false
		}
		io.WriteString(w, "read "+string(b))
	}), 200*time.Millisecond)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL, strings.NewReader("hello"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "read hello" || <-cancelled {
		t.Errorf("a whole body, then 800ms of work: %d %q", resp.StatusCode, b)
	}
	if took, line := trickle(t, strings.TrimPrefix(srv.URL, "http://"), "/", 5*time.Second); took > 3*time.Second || !strings.Contains(line, "408") {
		t.Errorf("a trickled body: held %v, answered %q; want 408 within about 200ms", took, line)
	}
}
