package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
