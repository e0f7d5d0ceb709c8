// Package testhttp serves the in-process test servers of package testserver
// over real loopback HTTP (Streamable HTTP and the legacy SSE transport). It
// lives apart from testserver so that the switchboard binary, which bundles
// the demo server, does not link the testing package.
package testhttp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// Options configures [Start]. The zero value serves the server
// without flags, statefully, to anyone.
type Options struct {
	// Args are the server's flags, as for [Command].
	Args []string
	// RequireHeader, if set, is a "Key: Value" header every request must carry
	// exactly; any other request gets 401 Unauthorized (with
	// WWW-Authenticate: Bearer when Key is Authorization).
	RequireHeader string
	// RequireHeaders are more required headers, each "Key: Value".
	RequireHeaders []string
	// Stateless serves Streamable HTTP without sessions (and so with the
	// 2026-07-28 protocol available); ForgetSessions then has nothing to forget.
	Stateless bool
	// JSONResponse makes Streamable HTTP answer POSTs with application/json
	// instead of an SSE stream.
	JSONResponse bool
}

// Server is a real loopback HTTP server running one test server: Streamable
// HTTP at URL (path /mcp) and the legacy HTTP+SSE transport at SSEURL (path
// /sse). Its methods are safe for concurrent use.
type Server struct {
	// URL is the Streamable HTTP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// SSEURL is the HTTP+SSE endpoint, http://127.0.0.1:PORT/sse.
	SSEURL string
	// Server is the MCP server all sessions share; tests may add or remove
	// features on it (clients then get list_changed).
	Server *mcp.Server

	ts       *httptest.Server
	opts     Options
	filter   func([]byte) []byte // rewrites POST bodies (testserver.RequestFilter)
	required [][2]string
	stderr   *testWriter
	requests atomic.Int64

	mu         sync.Mutex
	streamable *mcp.StreamableHTTPHandler
	sse        *mcp.SSEHandler
	closed     bool
}

// Start starts server name (which must be testserver.InProcess) on a loopback
// port and closes it when the test ends.
func Start(t testing.TB, name string, opts Options) *Server {
	t.Helper()
	tw := &testWriter{t: t}
	if !testserver.InProcess(name) {
		t.Fatalf("testhttp: server %q cannot run in process (see testserver.InProcess)", name)
	}
	s := testserver.NewServer(name, testserver.WithArgs(opts.Args...), testserver.WithStderr(tw))
	h := &Server{Server: s, opts: opts, stderr: tw, filter: testserver.RequestFilter(name)}
	for _, kv := range append([]string{opts.RequireHeader}, opts.RequireHeaders...) {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			t.Fatalf("testserver: required header %q is not \"Key: Value\"", kv)
		}
		h.required = append(h.required, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	h.newHandlers()
	h.ts = httptest.NewServer(http.HandlerFunc(h.serveHTTP))
	h.URL = h.ts.URL + "/mcp"
	h.SSEURL = h.ts.URL + "/sse"
	t.Cleanup(h.Close)
	return h
}

func (h *Server) newHandlers() {
	getServer := func(*http.Request) *mcp.Server { return h.Server }
	h.mu.Lock()
	defer h.mu.Unlock()
	h.streamable = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:    h.opts.Stateless,
		JSONResponse: h.opts.JSONResponse,
	})
	h.sse = mcp.NewSSEHandler(getServer, nil)
}

func (h *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	for _, kv := range h.required {
		if r.Header.Get(kv[0]) != kv[1] {
			if strings.EqualFold(kv[0], "Authorization") {
				w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard-testserver"`)
			}
			http.Error(w, fmt.Sprintf("Unauthorized: missing or wrong %s header", kv[0]), http.StatusUnauthorized)
			return
		}
	}
	h.mu.Lock()
	streamable, sse := h.streamable, h.sse
	h.mu.Unlock()
	if h.filter != nil && r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = h.filter(body)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	switch r.URL.Path {
	case "/mcp":
		streamable.ServeHTTP(w, r)
	case "/sse":
		sse.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// Requests returns how many HTTP requests the server has received, refused
// ones included.
func (h *Server) Requests() int { return int(h.requests.Load()) }

// ForgetSessions makes the server forget every session, as a restarted server
// would: open streams end and the next request of an old session gets 404
// Not Found. New sessions work as before.
func (h *Server) ForgetSessions() {
	h.newHandlers()
	h.closeSessions()
}

func (h *Server) closeSessions() {
	sessions := slices.Collect(h.Server.Sessions())
	for _, ss := range sessions {
		// Close waits for in-flight calls, which may never end (hang).
		go ss.Close()
	}
}

// Close ends every session and stops the server. It is idempotent and
// called automatically at the end of the test.
func (h *Server) Close() {
	h.mu.Lock()
	closed := h.closed
	h.closed = true
	h.mu.Unlock()
	if closed {
		return
	}
	h.stderr.done.Store(true)
	h.closeSessions()
	// Hanging GETs would otherwise keep httptest.Server.Close waiting.
	h.ts.CloseClientConnections()
	h.ts.Close()
}

// testWriter sends a server's stderr to the test log while the test runs.
type testWriter struct {
	t    testing.TB
	done atomic.Bool // logging after the test ends would panic
}

func (w *testWriter) Write(p []byte) (int, error) {
	if w.done.Load() {
		return len(p), nil
	}
	w.t.Logf("testserver stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
