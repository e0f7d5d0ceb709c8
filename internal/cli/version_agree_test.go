package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// `version`, the clientInfo the host sends servers and the serverInfo the
// gateway gives its clients are one version string (issue 17).
func TestVersionAgrees(t *testing.T) {
	w := newRTWorld(t)
	out, stderr, code := w.run(false, "version", "--json")
	if code != 0 {
		t.Fatalf("version: exit %d: %s", code, stderr)
	}
	var v struct{ Version string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Version == "" {
		t.Fatalf("version --json = %q: %v", out, err)
	}

	// The clientInfo a server is sent.
	var (
		mu     sync.Mutex
		client *mcp.Implementation
	)
	srv := mcp.NewServer(&mcp.Implementation{Name: "peer", Version: "1"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			mu.Lock()
			client = req.Session.InitializeParams().ClientInfo
			mu.Unlock()
		},
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	w.userServers(map[string]any{"peer": map[string]any{"type": "http", "url": hs.URL}})
	if _, stderr, code := w.run(false, "tools"); code != 0 {
		t.Fatalf("tools: exit %d: %s", code, stderr)
	}
	mu.Lock()
	got := client
	mu.Unlock()
	if got == nil || got.Name != "switchboard" || got.Version != v.Version {
		t.Errorf("clientInfo = %+v, want switchboard %s", got, v.Version)
	}

	// The serverInfo the gateway answers initialize with.
	w.userServers(map[string]any{})
	f, in, gout, gerr := w.factory(false)
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n")
	Run(context.Background(), f, []string{"serve", "--stdio"})
	var resp struct {
		Result struct {
			ServerInfo mcp.Implementation `json:"serverInfo"`
		} `json:"result"`
	}
	line, _, _ := strings.Cut(gout.String(), "\n")
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("gateway answered %q (stderr %q): %v", gout.String(), gerr.String(), err)
	}
	if resp.Result.ServerInfo.Version != v.Version {
		t.Errorf("gateway serverInfo = %+v, want version %s", resp.Result.ServerInfo, v.Version)
	}
}

// `switchboard --version` and `-v` print what `switchboard version` prints
// (a newcomer types them first, as with claude, codex and gh).
func TestVersionFlag(t *testing.T) {
	w := newRTWorld(t)
	want, stderr, code := w.run(false, "version")
	if code != 0 || !strings.HasPrefix(want, "switchboard ") {
		t.Fatalf("version: exit %d, %q: %s", code, want, stderr)
	}
	for _, flag := range []string{"--version", "-v"} {
		out, stderr, code := w.run(false, flag)
		if code != 0 || out != want {
			t.Errorf("%s: exit %d, stdout %q, want %q (stderr %q)", flag, code, out, want, stderr)
		}
	}
}
