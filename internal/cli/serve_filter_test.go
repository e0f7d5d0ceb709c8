package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewayHidesFilteredTools: a tool a filter hides is absent from the
// gateway's tools/list, a client's call of it is refused with the filter
// named, and a filter written while the gateway runs takes effect without
// a restart (issue 17 point 3).
func TestGatewayHidesFilteredTools(t *testing.T) {
	w := freshWorld(t, "")
	if err := os.MkdirAll(w.sbHome, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := echoServers("a")
	doc["mcpServers"].(map[string]any)["a"].(map[string]any)["disabledTools"] = []string{"add"}
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), doc)
	writeJSON(t, filepath.Join(w.sbHome, UserSettingsFile), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__a"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, stderr := stdioGateway(t, ctx, w)
	waitServed(t, ctx, cs, stderr, "start", "a")
	names := listNames(t, ctx, cs)
	if names["a__add"] || !names["a__slow"] {
		t.Fatalf("tools/list with add hidden: %v", names)
	}
	refused(t, ctx, cs, "a__add", map[string]any{"a": 1, "b": 2}, "3")

	// Hide echo too, while the gateway runs.
	w.run(t, "mcp", "tools", "disable", "a", "echo")
	deadline := time.Now().Add(30 * time.Second)
	for listNames(t, ctx, cs)["a__echo"] {
		if time.Now().After(deadline) {
			t.Fatalf("echo is still served after mcp tools disable; stderr:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	refused(t, ctx, cs, "a__echo", map[string]any{"text": "hi"}, "hi")
	if !listNames(t, ctx, cs)["a__slow"] {
		t.Error("the other tools went too")
	}
}

// refused checks that calling a hidden tool through the gateway does not
// run it: the gateway does not serve the name, so the client gets an
// error (or an error result) and never the tool's answer.
func refused(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, answer string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("%s: %v", name, err)
		}
		return
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && strings.Contains(tc.Text, answer) {
			t.Errorf("the hidden tool %s answered: %q", name, tc.Text)
		}
	}
	if !res.IsError {
		t.Errorf("%s: not an error", name)
	}
}
