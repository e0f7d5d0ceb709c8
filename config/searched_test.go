package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadSearched: Searched lists what a scope would read if it appeared
// (the legacy user file and <root>/mcp.json while the first choice is
// missing), and no more once the first choice exists.
func TestLoadSearched(t *testing.T) {
	f := newFixture(t)
	flag := f.write(filepath.Join(f.dir, "flag.json"), servers())
	o := f.opts()
	o.MCPConfigs = []string{flag, `{"mcpServers": {}}`}
	managed := filepath.Join(f.etcDir, "managed-mcp.json")
	ws := filepath.Join(f.proj, ".switchboard", "workspace.json")
	user, legacy := filepath.Join(f.home, "mcp.json"), filepath.Join(f.homeDir, ".switchboard.json")
	dotMCP, plainMCP := filepath.Join(f.proj, ".mcp.json"), filepath.Join(f.proj, "mcp.json")

	want := []string{managed, user, legacy, dotMCP, plainMCP, ws, flag}
	if diff := cmp.Diff(want, f.load(o).Files.Searched); diff != "" {
		t.Errorf("nothing written (-want +got):\n%s", diff)
	}
	f.write(user, servers())
	f.write(dotMCP, servers())
	want = []string{managed, user, dotMCP, ws, flag}
	if diff := cmp.Diff(want, f.load(o).Files.Searched); diff != "" {
		t.Errorf("first choices written (-want +got):\n%s", diff)
	}
	o.StrictMCPConfig = true
	if diff := cmp.Diff([]string{managed, flag}, f.load(o).Files.Searched); diff != "" {
		t.Errorf("strict (-want +got):\n%s", diff)
	}
}
