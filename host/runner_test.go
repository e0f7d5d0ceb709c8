package host_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// needTool returns the path of program, or skips the test without it (and
// fails it under CI=true, where every end-to-end test must run).
func needTool(t *testing.T, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found, and CI=true: this test must run", program)
		}
		t.Skipf("%s not found", program)
	}
	return p
}

// repoWorkspace is a checkout: a temporary folder with .git in it.
func repoWorkspace(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// startOnce starts server name of cfg and returns its status once it has
// connected or failed.
func startOnce(t *testing.T, cfg *config.Resolved, name string) host.ServerStatus {
	t.Helper()
	h := newHost(t, cfg, &host.Options{Environ: os.Environ, ToolsWait: 30 * time.Second})
	h.Tools(ctxFor(t, 60*time.Second))
	return statusOf(h, name)
}

// Issue 28, point 6, for Python: the user's `python3 -m sbprobe` started
// in a checkout that ships its own sbprobe.py runs the installed module
// (here on the user's PYTHONPATH), not the repository's: sys.path[0] is
// the start directory for -m, and Switchboard sets PYTHONSAFEPATH.
func TestUserPythonModuleIgnoresRepository(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	python := needTool(t, "python3")
	marks := t.TempDir()
	probe := "import os, sys\nopen(os.path.join(os.environ['MARKS'], %q), 'w').write('ran')\nsys.exit(3)\n"
	userLib := repoWorkspace(t, map[string]string{"sbprobe.py": strings.Replace(probe, "%q", `"user"`, 1)})
	ws := repoWorkspace(t, map[string]string{".git/HEAD": "", "sbprobe.py": strings.Replace(probe, "%q", `"repo"`, 1)})
	rs := resolved("py", config.Server{Type: config.TypeStdio, Command: python, Args: []string{"-m", "sbprobe"},
		Cwd: ".", Env: map[string]string{"PYTHONPATH": userLib, "MARKS": marks}})
	startOnce(t, &config.Resolved{Servers: []config.ResolvedServer{rs}, Workspace: ws}, "py")
	if _, err := os.Stat(filepath.Join(marks, "repo")); err == nil {
		t.Error("the repository's sbprobe.py ran")
	}
	if _, err := os.Stat(filepath.Join(marks, "user")); err != nil {
		t.Errorf("the user's module did not run (Python before 3.11 ignores PYTHONSAFEPATH): %v", err)
	}
}

// A user-scope server whose script is a relative path to a file of the
// checkout is not started, with the reason and the fix; the same entry in
// local scope (written for this workspace) runs it, and so does a user
// server given an absolute cwd outside the checkout.
func TestUserServerRepositoryScript(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	sh := needTool(t, "sh")
	marks := t.TempDir()
	script := "#!/bin/sh\n: > \"$MARKS/$1\"\nexit 3\n"
	ws := repoWorkspace(t, map[string]string{".git/HEAD": "", "run.sh": script})
	mine := repoWorkspace(t, map[string]string{"run.sh": script})
	def := func(arg, cwd string) config.Server {
		return config.Server{Type: config.TypeStdio, Command: sh, Args: []string{"run.sh", arg},
			Cwd: cwd, Env: map[string]string{"MARKS": marks}}
	}
	user := resolved("user", def("user", "."))
	managed := resolved("managed", def("managed", "."))
	managed.Scope = config.ScopeManaged
	prog := resolved("prog", config.Server{Type: config.TypeStdio, Command: "./run.sh", Args: []string{"prog"}, Cwd: ".", Env: map[string]string{"MARKS": marks}})
	local := resolved("local", def("local", "."))
	local.Scope = config.ScopeLocal
	outside := resolved("outside", def("outside", mine))
	cfg := &config.Resolved{Servers: []config.ResolvedServer{user, managed, prog, local, outside}, Workspace: ws}
	h := newHost(t, cfg, &host.Options{Environ: os.Environ, ToolsWait: 30 * time.Second})
	h.Tools(ctxFor(t, 60*time.Second))
	for _, name := range []string{"user", "managed", "prog"} {
		st := statusOf(h, name)
		if !strings.Contains(st.Reason, "the repository would decide what it runs") || !strings.Contains(st.Reason, "fix: give its absolute path") {
			t.Errorf("%s: %s %q, want it held with the reason", name, st.State, st.Reason)
		}
		if _, err := os.Stat(filepath.Join(marks, name)); err == nil {
			t.Errorf("%s: the repository's run.sh ran", name)
		}
	}
	for _, name := range []string{"local", "outside"} {
		if _, err := os.Stat(filepath.Join(marks, name)); err != nil {
			t.Errorf("%s did not run its script: %v (%q)", name, err, statusOf(h, name).Reason)
		}
	}
}

// Runners that cannot be moved out of the checkout are not started while
// a file that steers them is there (bunx and bunfig.toml, pnpm dlx and
// .npmrc, uv run and pyproject.toml), and start as usual without one.
func TestUserRunnerSteeredByRepository(t *testing.T) {
	t.Parallel()
	steered := repoWorkspace(t, map[string]string{".git/HEAD": "", "bunfig.toml": "", "sub/.keep": "", ".npmrc": "", "pyproject.toml": ""})
	plain := repoWorkspace(t, map[string]string{".git/HEAD": ""})
	// The program does not exist: a server that is not held fails to
	// start with exec's error instead.
	missing := filepath.Join(t.TempDir(), "nowhere")
	for _, tc := range []struct {
		name string
		def  config.Server
		file string
	}{
		{"bunx", config.Server{Command: missing + "/bunx", Args: []string{"some-server"}, Cwd: "sub"}, "bunfig.toml"},
		{"pnpm", config.Server{Command: missing + "/pnpm", Args: []string{"dlx", "some-server"}, Cwd: "."}, ".npmrc"},
		{"uv", config.Server{Command: missing + "/uv", Args: []string{"run", "--with", "x", "x"}, Cwd: "."}, "pyproject.toml"},
	} {
		tc.def.Type = config.TypeStdio
		for _, ws := range []string{steered, plain} {
			st := startOnce(t, &config.Resolved{Servers: []config.ResolvedServer{resolved(tc.name, tc.def)}, Workspace: ws}, tc.name)
			held := strings.Contains(st.Reason, "reads "+tc.file+", a file of the repository")
			if held != (ws == steered) {
				t.Errorf("%s in %s: %q; held = %v", tc.name, ws, st.Reason, held)
			}
		}
	}
}
