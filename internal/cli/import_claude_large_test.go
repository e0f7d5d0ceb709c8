package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// Claude Code keeps every project's history in ~/.claude.json beside its
// servers; files over the 8 MiB a configuration file may hold are common.
// Importing from one, and installing the gateway into it, must work.
func TestImportFromLargeClaudeJSON(t *testing.T) {
	w := newRTWorld(t)
	history := make([]map[string]any, 0, 10000)
	for range 10000 {
		history = append(history, map[string]any{"display": strings.Repeat("x", 1000)})
	}
	w.writeJSON(filepath.Join(w.home, ".claude.json"), map[string]any{
		"numStartups": 40,
		"mcpServers":  map[string]any{"ctx": map[string]any{"type": "http", "url": "https://mcp.context7.com/mcp"}},
		"projects":    map[string]any{"/elsewhere": map[string]any{"history": history}},
	})
	if fi, err := os.Stat(filepath.Join(w.home, ".claude.json")); err != nil || fi.Size() <= safefile.MaxSize {
		t.Fatalf("the file is not over %d bytes: %v, %v", safefile.MaxSize, fi, err)
	}
	out, errOut, code := w.run(false, "mcp", "import", "--from", "claude-code")
	if code != 0 || !strings.Contains(out, "+ ctx") {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = w.run(false, "mcp", "install-gateway", "--client", "claude-code", "--scope", "user", "--command", "/usr/local/bin/switchboard")
	if code != 0 {
		t.Fatalf("install-gateway: exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(w.home, ".claude.json"))
	if err != nil || !strings.Contains(string(b), `"switchboard"`) || !strings.Contains(string(b), `"numStartups"`) {
		t.Fatalf("~/.claude.json after install-gateway: %v, %d bytes", err, len(b))
	}
}
