package host_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// A timed-out call sends notifications/cancelled: the server's handler sees
// its context cancelled. MCP_TOOL_TIMEOUT (ms) sets the timeout; a
// server's own "timeout" field beats it.
func TestCallTimeoutCancelsOnTheServer(t *testing.T) {
	cancelled := make(chan string, 4)
	srv := mcp.NewServer(&mcp.Implementation{Name: "blocker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "block", Description: "blocks until cancelled"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Tag string `json:"tag"`
		}) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				cancelled <- in.Tag
				return nil, nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return &mcp.CallToolResult{}, nil, nil
			}
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)

	byEnv := remote("byenv", config.TypeHTTP, ts.URL)
	byField := remote("byfield", config.TypeHTTP, ts.URL)
	byField.Effective.Timeout = 100
	env := map[string]string{"MCP_TOOL_TIMEOUT": "300"}
	h := newHost(t, cfgOf(byEnv, byField), &host.Options{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})

	for _, tc := range []struct {
		server string
		want   time.Duration
	}{{"byenv", 300 * time.Millisecond}, {"byfield", 100 * time.Millisecond}} {
		begin := time.Now()
		_, err := h.Call(ctxFor(t, 20*time.Second), "mcp__"+tc.server+"__block", map[string]any{"tag": tc.server})
		took := time.Since(begin)
		if !errors.Is(err, host.ErrTimeout) {
			t.Fatalf("%s: %v, want ErrTimeout", tc.server, err)
		}
		if took < tc.want || took > tc.want+2*time.Second {
			t.Errorf("%s: timed out after %v, configured %v", tc.server, took, tc.want)
		}
		select {
		case tag := <-cancelled:
			if tag != tc.server {
				t.Errorf("cancelled %q, want %q", tag, tc.server)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: the server never saw the cancellation", tc.server)
		}
	}
}

// MCP_TIMEOUT (ms) bounds connecting; a server's startup_timeout beats it.
func TestStartupTimeoutKnobs(t *testing.T) {
	byEnv := stdio("byenv", "hang-init")
	byField := stdio("byfield", "hang-init")
	byField.Effective.StartupTimeout = 150
	h := newHost(t, cfgOf(byEnv, byField), &host.Options{LookupEnv: func(k string) (string, bool) {
		if k == "MCP_TIMEOUT" {
			return "400", true
		}
		return "", false
	}})
	for name, want := range map[string]string{"byenv": "within 400ms", "byfield": "within 150ms"} {
		st := waitState(t, h, name, host.StateError, 10*time.Second)
		if !strings.Contains(st.Reason, want) {
			t.Errorf("%s: reason %q, want %q", name, st.Reason, want)
		}
	}
}
