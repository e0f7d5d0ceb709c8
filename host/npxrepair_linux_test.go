package host_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// npxCopies are the npx copies below root holding pkg, found by its
// package.json: root/…/_npx/<hash>.
func npxCopies(t *testing.T, root, pkg string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && filepath.Base(filepath.Dir(p)) == "_npx" {
			if _, err := os.Stat(filepath.Join(p, "node_modules", pkg, "package.json")); err == nil {
				out = append(out, p)
			}
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// An npx server whose copy a cut-short download left with part of one of
// its packages missing (made here by hand) starts all the same: the host
// reads Node's "Cannot find module" naming a file of the copy it started
// the server with, checks the file is really missing there, removes the
// copy, says so, and starts the server again, npx installing it whole.
// Sandboxed (the copy in the sandbox's private cache; the user's ~/.npm
// untouched) and unconfined (the copy in ~/.npm). Without the repair,
// npx runs the broken copy on every start. (HOME is this test's own: not
// parallel.)
func TestNpxCopyCutShortIsRepaired(t *testing.T) {
	_, home := homeWithRegistry(t)
	ws := t.TempDir()
	const pkg, dep = "switchboard-echo-esm", "switchboard-echo-server"

	start := func(phase string, rs config.ResolvedServer) (*host.Host, host.ServerStatus, string) {
		t.Helper()
		var logs syncBuffer
		cfg := cfgOf(rs)
		cfg.Workspace = ws
		h := newHost(t, cfg, &host.Options{Gate: approved, ToolsWait: 90 * time.Second, StartupTimeout: 90 * time.Second,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		h.Tools(ctxFor(t, 2*time.Minute))
		st := statusOf(h, rs.Name)
		t.Logf("%s: state %s: %s", phase, st.State, st.Reason)
		if st.State != host.StateConnected {
			t.Fatalf("%s: state %s: %s\n%s\n%s", phase, st.State, st.Reason, strings.Join(st.StderrTail, "\n"), logs.String())
		}
		res := mustCall(t, h, "mcp__"+rs.Name+"__echo", map[string]any{"text": "started, " + phase})
		if !strings.Contains(textOf(res), phase) {
			t.Errorf("%s: echo = %q", phase, textOf(res))
		}
		h.Close()
		return h, st, logs.String()
	}
	breakCopy := func(where string, root string) string {
		t.Helper()
		copies := npxCopies(t, root, pkg)
		if len(copies) != 1 {
			t.Fatalf("%s: npx copies of %s below %s: %v", where, pkg, root, copies)
		}
		// A package half extracted: its folder and package.json there,
		// its code not. npm's record of the copy (node_modules/
		// .package-lock.json) newer than every folder in it, as after
		// an install, so npx takes the copy as whole and runs it: Node
		// then cannot find the module.
		if err := os.Remove(filepath.Join(copies[0], "node_modules", dep, "index.js")); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(filepath.Join(copies[0], "node_modules", ".package-lock.json"), later, later); err != nil {
			t.Fatal(err)
		}
		return copies[0]
	}

	// Sandboxed: a repository's server.
	sandboxed := npxServer("esm", pkg)
	start("sandboxed, cold", sandboxed)
	private := filepath.Join(config.DefaultHome(func(string) (string, bool) { return "", false }, home), "sandbox")
	cp := breakCopy("sandboxed", private)
	_, _, logs := start("sandboxed, the copy repaired", sandboxed)
	if !strings.Contains(logs, "was incomplete") || !strings.Contains(logs, cp) {
		t.Errorf("the repair was not said, naming %s:\n%s", cp, logs)
	}
	if _, err := os.Stat(filepath.Join(cp, "node_modules", dep, "index.js")); err != nil {
		t.Errorf("npx did not install the copy whole again: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, ".npm")); len(ents) > 0 {
		t.Errorf("the sandboxed npx wrote the user's ~/.npm: %v", ents)
	}

	// Unconfined: the user's own server, its copy in ~/.npm.
	mine := resolved("mine", config.Server{Type: config.TypeStdio, Command: "npx", Args: []string{"-y", pkg}})
	start("unconfined, cold", mine)
	cp = breakCopy("unconfined", filepath.Join(home, ".npm"))
	_, _, logs = start("unconfined, the copy repaired", mine)
	if !strings.Contains(logs, "was incomplete") || !strings.Contains(logs, cp) {
		t.Errorf("the repair was not said, naming %s:\n%s", cp, logs)
	}
	if _, err := os.Stat(filepath.Join(cp, "node_modules", dep, "index.js")); err != nil {
		t.Errorf("npx did not install the copy whole again: %v", err)
	}
}
