//go:build unix

package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// This program as npm's script shell (what npm runs as
// `$npm_config_script_shell -c COMMAND`): when npm runs the package
// (npm_lifecycle_event=npx) the command runs in the server's directory;
// an install script runs where npm started it; either way the user's own
// script shell is back in place and the variables are gone.
func TestNpmScriptShell(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	base := []string{"PATH=" + os.Getenv("PATH"), "npm_config_script_shell=/bin/sh"}
	env, ok := NpmScriptShell(dir, base)
	if !ok {
		t.Fatal("NpmScriptShell: not available, though TestMain calls MaybeRunSupervisor")
	}
	exe, _ := os.Executable()
	if !containsKV(env, "npm_config_script_shell="+exe) || containsKV(env, "npm_config_script_shell=/bin/sh") {
		t.Fatalf("env = %q: npm's script shell is not this program alone", env)
	}
	const script = `pwd; echo "shell=$npm_config_script_shell"; env | grep -c SWITCHBOARD_SCRIPT_SHELL || true`
	for _, tc := range []struct {
		event, wantDir string
	}{
		{"npx", dir},
		{"postinstall", elsewhere},
	} {
		cmd := exec.Command(exe, "-c", script)
		cmd.Dir = elsewhere
		cmd.Env = append(env, "npm_lifecycle_event="+tc.event)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.event, err, out)
		}
		want := tc.wantDir + "\nshell=/bin/sh\n0\n"
		if got, _ := filepath.EvalSymlinks(strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])); got != mustEval(t, tc.wantDir) || !strings.HasSuffix(string(out), "\nshell=/bin/sh\n0\n") {
			t.Errorf("%s: output %q, want %q", tc.event, out, want)
		}
	}
}

func containsKV(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
