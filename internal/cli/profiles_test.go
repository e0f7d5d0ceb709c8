package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMCPListProfiles: mcp list shows which profiles include each server,
// in its table (a column only when there are profiles) and in --json.
func TestMCPListProfiles(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo"), "docs-a": w.server("demo")})
	out, _, _ := w.run(false, "mcp", "list")
	if strings.Contains(out, "review") {
		t.Fatalf("no profiles yet:\n%s", out)
	}
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"profiles": map[string]any{
		"review": map[string]any{"servers": []string{"docs-*"}},
		"all":    map[string]any{},
	}})
	out, _, code := w.run(false, "mcp", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var list []struct {
		Name     string   `json:"name"`
		Profiles []string `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range list {
		got[s.Name] = s.Profiles
	}
	if !slices.Equal(got["demo"], []string{"all"}) || !slices.Equal(got["docs-a"], []string{"all", "review"}) {
		t.Errorf("profiles = %v", got)
	}
	out, _, _ = w.run(true, "mcp", "list")
	if !strings.Contains(out, "PROFILES") && !strings.Contains(out, "profiles") || !strings.Contains(out, "all,review") {
		t.Errorf("the table lacks the profiles column:\n%s", out)
	}
}
