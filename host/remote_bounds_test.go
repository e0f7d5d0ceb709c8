package host_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// endlessJSON answers a tools/call with an application/json body that
// does not end (up to max bytes), counting what it wrote; other requests
// go to a real echo server.
func endlessJSON(t *testing.T, max int64, written *atomic.Int64) string {
	real := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testserver.NewServer("echo") }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"tools/call"`) {
				w.Header().Set("Content-Type", "application/json")
				chunk := bytes.Repeat([]byte(" "), 64<<10)
				for written.Load() < max {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
				return
			}
		}
		real.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// A Streamable HTTP server that answers a call with an application/json
// body that never ends is read up to the message limit (16 MiB, as a
// stdio server's line and an SSE event), not into all of the host's
// memory: the call fails saying so.
func TestRemoteJSONAnswerIsBounded(t *testing.T) {
	var written atomic.Int64
	const max = 96 << 20
	u := endlessJSON(t, max, &written)
	h := newHost(t, cfgOf(resolved("flood", config.Server{Type: config.TypeHTTP, URL: u})), nil)
	_, err := h.Call(ctxFor(t, 60*time.Second), "mcp__flood__echo", map[string]any{"text": "x"})
	if err == nil {
		t.Fatal("the call succeeded on an answer that is not JSON-RPC")
	}
	if got := written.Load(); got > 48<<20 {
		t.Errorf("the host read %d MiB of one answer; the limit is 16 MiB", got>>20)
	}
	if !strings.Contains(err.Error(), "16 MiB") {
		t.Errorf("error = %v, want it to name the 16 MiB limit", err)
	}
}

// A remote whose answer's headers are megabytes long and malformed (an
// escape character in a value) does not become a megabyte status reason:
// net/http quotes the whole line in its error, and the reason is cut.
func TestRemoteErrorReasonIsBounded(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 750 KB: under netguard.MaxHeaderBytes.
		w.Header().Set("X-Junk", strings.Repeat("\x1b[31m", 150<<10))
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	h := newHost(t, cfgOf(resolved("junk", config.Server{Type: config.TypeHTTP, URL: ts.URL + "/mcp"})), nil)
	st := waitState(t, h, "junk", host.StateError, 20*time.Second)
	if len(st.Reason) > 4000 || !strings.Contains(st.Reason, "malformed") {
		t.Errorf("reason (%d bytes) = %.200q…, want net/http's error, cut", len(st.Reason), st.Reason)
	}
}
