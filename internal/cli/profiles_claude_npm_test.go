package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// Issue 34's real client: `install-gateway --client claude-code
// --all-profiles` writes an entry per profile into ~/.claude.json, and
// Claude Code itself (`claude mcp list`) starts each and finds it connected
// with its tools fetched. What each entry lists is its profile's tools only
// (TestInstalledProfileGatewaysRun starts the same entries' commands).
func TestProfileGatewaysBehindClaudeCode(t *testing.T) {
	p := npmtest.Install(t)
	w := newGatewayWorld(t)
	w.servers(t, "alpha", "beta")
	writeJSON(t, filepath.Join(w.sbHome, "settings.json"), map[string]any{"profiles": map[string]any{
		"review": map[string]any{"servers": []string{"alpha"}},
		"coding": map[string]any{"servers": []string{"beta"}},
	}})
	out, err := w.command(t, "mcp", "install-gateway", "--client", "claude-code", "--all-profiles").CombinedOutput()
	if err != nil {
		t.Fatalf("install-gateway: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(w.home, ".claude.json"))
	if err != nil {
		t.Fatalf("no ~/.claude.json: %v\n%s", err, out)
	}
	var claudeJSON struct {
		MCPServers map[string]struct {
			Args []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &claudeJSON); err != nil {
		t.Fatalf("~/.claude.json: %v\n%s", err, b)
	}
	for _, entry := range []string{"switchboard-review", "switchboard-coding"} {
		args := strings.Join(claudeJSON.MCPServers[entry].Args, " ")
		if !strings.Contains(args, "--profile "+strings.TrimPrefix(entry, "switchboard-")) {
			t.Errorf("entry %s runs %q, want its --profile", entry, args)
		}
	}
	list := string(runClient(t, w, "claude mcp list", 90*time.Second, p.Claude, "mcp", "list"))
	for _, entry := range []string{"switchboard-review", "switchboard-coding"} {
		if line := claudeListLine(list, entry); !strings.Contains(line, "Connected") || strings.Contains(line, "failed") {
			t.Errorf("claude mcp list does not show %s connected with its tools:\n%s", entry, list)
		}
	}
}
