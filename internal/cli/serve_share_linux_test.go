package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// serve --max-sessions-per-principal caps one key holder's sessions below
// --max-sessions: with her one session busy (its stream open), alice's
// second is refused with 503 naming the flag.
func TestServeMaxSessionsPerPrincipal(t *testing.T) {
	w := newCancelWorld(t, false, nil)
	key, err := gateway.AddKey(filepath.Join(w.sbHome, gateway.AuthFileName), "alice", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	base, stop := startHTTPGateway(t, w.gatewayWorld, "--http", "127.0.0.1:0", "--max-sessions", "10", "--max-sessions-per-principal", "1")
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	do := func(method, sid, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if method == http.MethodGet {
			return resp, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"alice","version":"1"}}}`
	resp, body := do("POST", "", initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("alice's first session: %d %s", resp.StatusCode, body)
	}
	do("POST", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	stream, _ := do("GET", sid, "")
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("alice's stream: %d", stream.StatusCode)
	}
	defer stream.Body.Close()
	bufio.NewReader(stream.Body).ReadString('\n')
	if resp, body := do("POST", "", initialize); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "--max-sessions-per-principal") {
		t.Errorf("alice's second session, with her first busy: %d %s\nwant 503 naming --max-sessions-per-principal", resp.StatusCode, body)
	}
}
