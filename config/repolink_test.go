package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckRepoFile: a repository file that is, or lies under, a link out
// of the repository is refused; one that stays inside is not (issue 22).
func TestCheckRepoFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	home := filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(root, "conf"), filepath.Join(root, "linked-out"), filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	precious := filepath.Join(home, "precious.json")
	if err := os.WriteFile(precious, []byte(`{"mine": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := func(target, at string) string {
		p := filepath.Join(root, at)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		path string
		out  bool
	}{
		{"plain file not there yet", filepath.Join(root, ".mcp.json"), false},
		{"link to a user file", link(precious, "a/.mcp.json"), true},
		{"relative link out", link("../../home/precious.json", "b/.mcp.json"), true},
		{"dangling link out", link("../../home/new.json", "c/.mcp.json"), true},
		{"directory link out", filepath.Join(link(filepath.Join(home, ".ssh"), "d/.switchboard"), "workspace.json"), true},
		{"link inside", link("../conf/mcp.json", "e/.mcp.json"), false},
		{"link loop", link("loop2", "f/loop1"), true},
		{"outside root", precious, false},
	}
	link("loop1", "f/loop2")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRepoFile(root, c.path)
			var lo *LinkOutError
			if got := errors.As(err, &lo); got != c.out {
				t.Fatalf("CheckRepoFile(%s) = %v, want refused %v", c.path, err, c.out)
			}
			if err != nil && (strings.Contains(err.Error(), "home") || lo.Path != c.path) {
				t.Errorf("the error names the link's target or another path: %v", err)
			}
		})
	}

	// SetWorkspaceEnablement refuses through a link out, and leaves the
	// target as it was.
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".switchboard"), 0o755)
	if err := os.Symlink(precious, WorkspaceFile(ws)); err != nil {
		t.Fatal(err)
	}
	err := SetWorkspaceEnablement(ws, "x", false)
	var lo *LinkOutError
	if !errors.As(err, &lo) {
		t.Fatalf("SetWorkspaceEnablement through a link out: %v", err)
	}
	if b, _ := os.ReadFile(precious); string(b) != `{"mine": true}` {
		t.Fatalf("the link's target was written: %s", b)
	}
}

// TestSetLocalEnablement: the user's own layer is written in the user
// file under the workspace's entry, and read back as lifting a disable
// that the repository's workspace file could not lift.
func TestSetLocalEnablement(t *testing.T) {
	f := newFixture(t)
	user := f.write(filepath.Join(f.home, "mcp.json"), `// mine
{"mcpServers": {"off": {"command": "x", "enabled": false}}}`)
	f.write(filepath.Join(f.proj, ".switchboard", "workspace.json"), `{"enabledMcpServers": ["off"]}`)
	if got := f.load(f.opts()).Server("off").Availability; got != Disabled {
		t.Fatalf("the repository's enable lifted the user's enabled:false: %v", got)
	}
	if err := SetLocalEnablement(user, ProjectKey(f.proj), "off", true); err != nil {
		t.Fatal(err)
	}
	if got := f.load(f.opts()).Server("off").Availability; got != Available {
		t.Fatalf("the user's own enable did not lift it: %v", got)
	}
	b, _ := os.ReadFile(user)
	if !strings.HasPrefix(string(b), "// mine\n") || !strings.Contains(string(b), `"enabledMcpServers": ["off"]`) {
		t.Fatalf("user file after the edit:\n%s", b)
	}
	if err := SetLocalEnablement(user, ProjectKey(f.proj), "off", false); err != nil {
		t.Fatal(err)
	}
	if got := f.load(f.opts()).Server("off").Availability; got != Disabled {
		t.Fatalf("the user's own disable did not count: %v", got)
	}
}
