package config

import (
	"os"
	"path/filepath"
	"testing"
)

// A file removed while the scope reads its other file is forgotten: when a
// broken file appears at its path later, the contents it had before it was
// removed do not come back (review 16).
func TestLastGoodForgetsAFileTheScopeNoLongerReads(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second func(f *fixture) string
	}{
		{"user", func(f *fixture) string { return filepath.Join(f.home, "mcp.json") }, func(f *fixture) string { return filepath.Join(f.homeDir, ".switchboard.json") }},
		{"project", func(f *fixture) string { return filepath.Join(f.proj, ".mcp.json") }, func(f *fixture) string { return filepath.Join(f.proj, "mcp.json") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			first, second := tc.first(f), tc.second(f)
			f.write(first, servers(cmdDef("removed", "evil-old")))
			f.write(second, servers(cmdDef("other", "fine")))
			o := f.opts()
			o.LastGood = &LastGood{}
			names := func(r *Resolved) map[string]bool {
				m := map[string]bool{}
				for _, s := range r.Servers {
					m[s.Name] = true
				}
				return m
			}
			if got := names(f.load(o)); !got["removed"] {
				t.Fatalf("first load: %v", got)
			}
			// The user removes the file: its server goes, the other file of the scope is read.
			if err := os.Remove(first); err != nil {
				t.Fatal(err)
			}
			if got := names(f.load(o)); got["removed"] || !got["other"] {
				t.Fatalf("after removal: %v", got)
			}
			// A new file is being typed at the same path (half-written).
			f.write(first, `{"mcpServers": {"new": `)
			if got := names(f.load(o)); got["removed"] {
				t.Errorf("the server of a file removed earlier is back: %v", got)
			}
		})
	}
}

// A file replaced by a symbolic link to nothing (its target removed: a
// dotfiles checkout moved away) is gone: its old contents do not stay in
// effect (review 16).
func TestLastGoodForgetsAFileNowADanglingLink(t *testing.T) {
	f := newFixture(t)
	user := f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("old", "old-cmd")))
	o := f.opts()
	o.LastGood = &LastGood{}
	f.load(o)
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.dir, "dotfiles", "mcp.json"), user); err != nil {
		t.Fatal(err)
	}
	for _, s := range f.load(o).Servers {
		if s.Name == "old" {
			t.Errorf("the server of a file now a dangling symlink is still in effect")
		}
	}
}
