package testserver_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// headerTransport adds fixed headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func connectTransport(t *testing.T, tr mcp.Transport) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	// Not cancelled after Connect: the SSE client transport ties its event
	// stream to Connect's context, and cancelling it ends the session.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, tr, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	t.Run("streamable", func(t *testing.T) {
		cs, err := connectTransport(t, &mcp.StreamableClientTransport{Endpoint: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(call(t, cs, "echo", map[string]any{"text": "over http"})); got != "over http" {
			t.Errorf("echo = %q", got)
		}
	})
	t.Run("sse", func(t *testing.T) {
		cs, err := connectTransport(t, &mcp.SSEClientTransport{Endpoint: srv.SSEURL})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(call(t, cs, "add", map[string]any{"a": 1, "b": 2})); got != "3" {
			t.Errorf("add = %q", got)
		}
	})
	if srv.Requests() < 4 {
		t.Errorf("Requests() = %d after two sessions", srv.Requests())
	}
}

func TestHTTPRequireHeader(t *testing.T) {
	t.Parallel()
	srv := testhttp.Start(t, "echo", testhttp.Options{
		RequireHeader:  "Authorization: Bearer s3cret",
		RequireHeaders: []string{"X-Tenant: acme"},
	})
	// Plain HTTP first: the refusal is a real 401.
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("without headers: %s, WWW-Authenticate %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}

	for _, tt := range []struct {
		name    string
		headers headerTransport
		ok      bool
	}{
		{"none", nil, false},
		{"wrong token", headerTransport{"Authorization": "Bearer nope", "X-Tenant": "acme"}, false},
		{"missing tenant", headerTransport{"Authorization": "Bearer s3cret"}, false},
		{"both", headerTransport{"Authorization": "Bearer s3cret", "X-Tenant": "acme"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hc := &http.Client{Transport: tt.headers}
			if tt.headers == nil {
				hc = http.DefaultClient
			}
			for _, tr := range []mcp.Transport{
				&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: -1},
				&mcp.SSEClientTransport{Endpoint: srv.SSEURL, HTTPClient: hc},
			} {
				cs, err := connectTransport(t, tr)
				if tt.ok != (err == nil) {
					t.Fatalf("%T: Connect error = %v, want ok=%v", tr, err, tt.ok)
				}
				if err != nil {
					continue
				}
				got := textOf(call(t, cs, "headers", nil))
				if _, sse := tr.(*mcp.SSEClientTransport); sse {
					continue // the SDK's SSE server does not pass headers on to tools
				}
				if !strings.Contains(got, "Authorization: Bearer s3cret") || !strings.Contains(got, "X-Tenant: acme") {
					t.Errorf("%T: headers tool saw %q", tr, got)
				}
			}
		})
	}
}

func TestHTTPForgetSessions(t *testing.T) {
	t.Parallel()
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	cs, err := connectTransport(t, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	call(t, cs, "echo", map[string]any{"text": "before"})
	id := cs.ID()
	srv.ForgetSessions()

	// The old session is gone: a request naming it gets 404.
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", legacy)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("old session after ForgetSessions: %s, want 404", resp.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
	if err == nil {
		t.Error("call on a forgotten session succeeded")
	} else if !errors.Is(err, mcp.ErrConnectionClosed) && !strings.Contains(err.Error(), "404") && !strings.Contains(err.Error(), "not found") {
		t.Logf("call on a forgotten session: %v", err)
	}

	// A new session works.
	cs2, err := connectTransport(t, &mcp.StreamableClientTransport{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(call(t, cs2, "echo", map[string]any{"text": "after"})); got != "after" {
		t.Errorf("echo on a new session = %q", got)
	}
}

func TestHTTPStateless(t *testing.T) {
	t.Parallel()
	srv := testhttp.Start(t, "demo", testhttp.Options{Stateless: true, JSONResponse: true})
	cs, err := connectTransport(t, &mcp.StreamableClientTransport{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Errorf("stateless server negotiated %q, want 2026-07-28 or later", v)
	}
	if got := textOf(call(t, cs, "echo", map[string]any{"text": "stateless"})); got != "stateless" {
		t.Errorf("echo = %q", got)
	}
}

// The demo server itself is tested in internal/demoserver; here it is
// reached by name, as a process, like every other test server.
func TestDemoProcess(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, "demo")
	if got := textOf(call(t, cs, "add", map[string]any{"a": 1, "b": 1})); got != "1 + 1 = 2" {
		t.Errorf("add = %q", got)
	}
}

func TestNewServerRefusesProcessOnly(t *testing.T) {
	t.Parallel()
	for _, name := range testserver.Names() {
		func() {
			defer func() {
				r := recover()
				if (r == nil) != testserver.InProcess(name) {
					t.Errorf("NewServer(%q): panic %v, InProcess %v", name, r, testserver.InProcess(name))
				}
			}()
			testserver.NewServer(name)
		}()
		if testserver.Describe(name) == "" {
			t.Errorf("Describe(%q) is empty", name)
		}
	}
}

// Close must not wait for a handler that never returns.
func TestHTTPCloseWithHungCall(t *testing.T) {
	t.Parallel()
	srv := testhttp.Start(t, "hang-call", testhttp.Options{})
	cs, err := connectTransport(t, &mcp.StreamableClientTransport{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hang"}) }()
	time.Sleep(100 * time.Millisecond)
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a call that never returns")
	}
}
