package config

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure keeps the package a pure core (STYLE.md): it decides from files
// and data, and never spawns, dials or reads the clock.
func TestPure(t *testing.T) {
	forbidden := map[string]bool{"os/exec": true, "net": true, "net/http": true, "time": true, "syscall": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); forbidden[path] {
				t.Errorf("%s imports %s: config must not spawn, dial or read the clock", name, path)
			}
		}
	}
}

func TestLoadDefaults(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	for _, d := range []string{filepath.Join(home, ".switchboard"), filepath.Join(proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".switchboard", "mcp.json"), []byte(servers(cmdDef("u", "x"))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SWITCHBOARD_HOME", "")
	t.Setenv("SWITCHBOARD_MANAGED_DIR", filepath.Join(dir, "etc"))
	t.Chdir(proj)

	r, err := Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Workspace != proj || r.Server("u") == nil || r.Files.Managed != filepath.Join(dir, "etc", "managed-mcp.json") {
		t.Errorf("Load(nil) = workspace %q, servers %v, files %+v", r.Workspace, rows(r), r.Files)
	}

	t.Run("no home", func(t *testing.T) {
		t.Setenv("HOME", "")
		_, err := Load(&LoadOptions{Cwd: proj, LookupEnv: mapLookup(nil)})
		if err == nil || !strings.Contains(err.Error(), "finding the home directory") {
			t.Errorf("Load without a home: err = %v", err)
		}
		// SWITCHBOARD_HOME is enough.
		r, err := Load(&LoadOptions{Cwd: proj, LookupEnv: mapLookup(map[string]string{"SWITCHBOARD_HOME": filepath.Join(home, ".switchboard")})})
		if err != nil || r.Server("u") == nil {
			t.Errorf("Load with SWITCHBOARD_HOME only: %v, %v", err, r)
		}
	})
}
