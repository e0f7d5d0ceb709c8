package config

import (
	"path/filepath"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		g, name string
		want    bool
	}{
		{"*", "anything", true},
		{"*", "", true},
		{"delete_*", "delete_repo", true},
		{"delete_*", "undelete_repo", false},
		{"*_issue", "create_issue", true},
		{"get_*_file", "get_big_file", true},
		{"get_*_file", "get_file", false},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"echo", "echo", true},
		{"echo", "Echo", false},
		{"**", "x", true},
	} {
		if got := GlobMatch(c.g, c.name); got != c.want {
			t.Errorf("GlobMatch(%q, %q) = %v, want %v", c.g, c.name, got, c.want)
		}
	}
}

// TestLoadToolFilters: every layer can only hide; disabledTools wins; a
// repository's workspace file narrows but never brings a tool back.
func TestLoadToolFilters(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.home, "mcp.json"), `{
  "mcpServers": {
    "gh": {"command": "x", "disabledTools": ["delete_*"]},
    "fs": {"command": "x", "enabledTools": ["read_*", "list_*"]},
  },
  "projects": {"`+f.proj+`": {"toolFilters": {"fs": {"disabledTools": ["read_secret"]}}}},
}`)
	f.write(filepath.Join(f.proj, ".switchboard", "workspace.json"), `{
  "toolFilters": {"gh": {"enabledTools": ["get_*", "delete_repo"]}},
}`)
	f.write(filepath.Join(f.etcDir, "managed-mcp.json"), `{"toolFilters": {"gh": {"disabledTools": ["get_secret*"]}}}`)
	r := f.load(f.opts())
	for _, c := range []struct {
		server, tool string
		hidden       bool
	}{
		{"gh", "get_issue", false},
		{"gh", "create_issue", true},   // the workspace file's enabledTools
		{"gh", "delete_repo", true},    // the user's disabledTools wins over the workspace's enable
		{"gh", "get_secret_key", true}, // managed
		{"fs", "read_file", false},
		{"fs", "write_file", true},  // not in the definition's enabledTools
		{"fs", "read_secret", true}, // the local layer
		{"fs", "list_dir", false},
	} {
		hidden, why := r.Server(c.server).Tools.Hidden(c.tool)
		if hidden != c.hidden {
			t.Errorf("%s/%s hidden = %v (%s), want %v", c.server, c.tool, hidden, why, c.hidden)
		}
		if hidden && why == "" {
			t.Errorf("%s/%s hidden without a reason", c.server, c.tool)
		}
	}
	if _, why := r.Server("gh").Tools.Hidden("delete_repo"); why != `disabledTools "delete_*" in `+filepath.Join(f.home, "mcp.json") {
		t.Errorf("reason = %q", why)
	}
	for _, d := range r.Diagnostics {
		t.Errorf("unexpected diagnostic: %v", d)
	}
}
