package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestGatewayHoldsThenStartsApproved: `serve --stdio` holds a project
// server (its tools are not offered, a call is refused); `mcp approve` in
// another process makes the running gateway start it, without a restart.
func TestGatewayHoldsThenStartsApproved(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "mine")
	cmd, args := testserver.Command("echo")
	writeJSON(t, filepath.Join(w.ws, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"repo": map[string]any{"command": cmd, "args": args},
	}})
	w.permissions(t, []string{"mcp__mine", "mcp__repo"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	ev := &clientEvents{decision: "once", changed: make(chan struct{}, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "trust-test", Version: "1"}, ev.options())
	serve := w.command(t, "serve", "--stdio")
	var stderr strings.Builder
	serve.Stderr = &stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()

	names := listNames(t, ctx, cs)
	if !names["mine__echo"] || names["repo__echo"] {
		t.Fatalf("tools before approval: %v", names)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "repo__echo", Arguments: map[string]any{"text": "x"}}); err == nil && !res.IsError {
		t.Errorf("a call to the held server ran: %+v", res.Content)
	}

	approve := w.command(t, "mcp", "approve", "repo", "--yes")
	if out, err := approve.CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !listNames(t, ctx, cs)["repo__echo"] {
		select {
		case <-ev.changed:
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the approved server's tools never appeared; stderr:\n%s", stderr.String())
		}
	}
	if txt, isErr := callText(t, ctx, cs, "repo__echo", map[string]any{"text": "approved now"}); isErr || !strings.Contains(txt, "approved now") {
		t.Errorf("call after approval: isError %v, %q", isErr, txt)
	}
	if _, err := os.Stat(filepath.Join(w.sbHome, "trust.json")); err != nil {
		t.Error(err)
	}
}
