package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/proc"
)

// Every refusal doctor and status can recognise in a sandboxed server's
// stderr is named as the sandbox's, with the exact setting that allows
// it: a hidden path, a read-only one written, a module installed where
// the sandbox does not look (Node's and Python's), a destination its
// network does not list. A repository's server gets it as a definition of
// the user's own (local scope); the user's server in its own. (HOME is
// this test's: not parallel.)
func TestSandboxRefusalRecognised(t *testing.T) {
	// Not below /tmp, which every sandbox shows (its own).
	home, err := os.MkdirTemp("/var/tmp", "sandbox-refusal-home-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	t.Setenv("HOME", home)
	site := filepath.Join(home, ".local", "lib", "python3.11", "site-packages")
	os.MkdirAll(filepath.Join(site, "requests"), 0o755)
	nodePath := filepath.Join(home, ".nvm", "versions", "node", "v20", "lib", "node_modules")
	os.MkdirAll(filepath.Join(nodePath, "express"), 0o755)
	os.WriteFile(filepath.Join(nodePath, "express", "package.json"), []byte("{}"), 0o644)
	t.Setenv("NODE_PATH", nodePath)
	dist := filepath.Join(home, "srv", "dist")
	os.MkdirAll(dist, 0o755)

	ws := filepath.Join(home, "proj")
	ref := filepath.Join(home, "reference")
	p := &config.SandboxPolicy{Write: []string{ws}, Read: []string{ref}, Protected: []string{filepath.Join(ws, ".git")}, Workspace: ws, Home: home,
		Allow: []string{"registry.npmjs.org:443"}, Downloads: []config.SandboxDownload{{Dest: "registry.npmjs.org:443"}}}
	user := &config.ResolvedServer{Name: "srv", Scope: config.ScopeUser, File: filepath.Join(home, ".switchboard", "mcp.json"),
		Written: config.Server{Command: "node", Sandbox: &config.Sandbox{FS: &config.SandboxFS{Write: []string{"."}, Read: []string{ref}}}}}
	repo := &config.ResolvedServer{Name: "srv", Scope: config.ScopeProject, Written: config.Server{Command: "npx", Args: []string{"-y", "x"}}}
	o := &runtimeOptions{}
	for _, tt := range []struct {
		name    string
		rs      *config.ResolvedServer
		state   host.State
		stderr  string
		what    string // in What; "" for nothing recognised
		fix     string // in Fix
		granted string // the path or destination the fix's JSON adds
	}{
		{"hidden path", user, host.StateError, "cat: /var/tmp/notes.txt: No such file or directory",
			"it was refused /var/tmp/notes.txt, which its sandbox does not show", `add "/var/tmp/notes.txt" to its "sandbox": {"fs": {"read": […]}}`, "/var/tmp/notes.txt"},
		{"read-only path written", user, host.StateError, "Error: EROFS: read-only file system, open '" + ref + "/out.md'",
			"shows " + ref + "/out.md read-only, and it writes there", `"fs": {"write": […]}`, ref + "/out.md"},
		{"python module", user, host.StateError, "ModuleNotFoundError: No module named 'requests.adapters'",
			"could not load the module requests.adapters, which is in " + site, `"fs": {"read": […]}`, site},
		{"node module by name", user, host.StateError, "Error: Cannot find module 'express'",
			"could not load the module express, which is in " + nodePath, `"fs": {"read": […]}`, nodePath},
		{"node module by path", user, host.StateError, "Error: Cannot find module '" + dist + "/index.js'",
			"which is in " + dist, `"fs": {"read": […]}`, dist},
		{"module nowhere", user, host.StateError, "Error: Cannot find module 'nowhere-to-be-found'",
			"could not load the module nowhere-to-be-found, which may be installed where its sandbox does not look", `to run it unconfined`, ""},
		{"unlisted destination, still connecting", user, host.StateConnecting, "npm error request to https://npm.corp.example/x failed, reason: getaddrinfo ENOTFOUND npm.corp.example",
			"could not reach npm.corp.example:443, which its sandbox does not list", `add "npm.corp.example:443" to its "sandbox": {"network"}`, "npm.corp.example:443"},
		{"a repository's server", repo, host.StateError, "cat: /var/tmp/notes.txt: No such file or directory",
			"it was refused /var/tmp/notes.txt", "switchboard mcp add-json --scope local srv '", "/var/tmp/notes.txt"},
		{"a repository's server writes its .git", repo, host.StateError, "fatal: Unable to create '" + ws + "/.git/index.lock': Read-only file system",
			"its sandbox keeps " + ws + "/.git read-only (git runs its hooks and config outside any sandbox), and it writes there",
			"switchboard mcp add-json --scope local srv '", ws + "/.git"},
		{"the registry it may use", repo, host.StateError, "npm error request to https://registry.npmjs.org/x failed, reason: socket hang up ECONNREFUSED", "", "", ""},
		{"connected: history", user, host.StateConnected, "cat: /var/tmp/notes.txt: No such file or directory", "", "", ""},
	} {
		st := host.ServerStatus{Name: "srv", State: tt.state, StderrTail: []string{"before", tt.stderr}}
		r, ok := sandboxRefusal(tt.rs, st, p, o)
		if tt.what == "" {
			if ok {
				t.Errorf("%s: recognised %+v", tt.name, r)
			}
			continue
		}
		if !ok || !strings.Contains(r.What, tt.what) || !strings.Contains(r.Fix, tt.fix) {
			t.Errorf("%s:\n what %q\n fix  %q\nwant %q and %q", tt.name, r.What, r.Fix, tt.what, tt.fix)
			continue
		}
		if tt.granted == "" {
			continue
		}
		// The fix holds the setting, as JSON the user can paste.
		var raw json.RawMessage
		if tt.rs.Scope == config.ScopeProject {
			i := strings.Index(r.Fix, "'{")
			var def config.Server
			if err := json.NewDecoder(strings.NewReader(strings.ReplaceAll(r.Fix[i+1:], `'\''`, "'"))).Decode(&def); err != nil || def.Sandbox == nil || def.Command != "npx" {
				t.Errorf("%s: the local definition in %s: %v", tt.name, r.Fix, err)
				continue
			}
			raw, _ = json.Marshal(def.Sandbox)
		} else {
			i := strings.Index(r.Fix, `so: "sandbox": `) + len(`so: "sandbox": `)
			if err := json.NewDecoder(strings.NewReader(r.Fix[i:])).Decode(&raw); err != nil {
				t.Errorf("%s: the sandbox in %s: %v", tt.name, r.Fix, err)
				continue
			}
		}
		var sb config.Sandbox
		if err := json.Unmarshal(raw, &sb); err != nil {
			t.Errorf("%s: the sandbox %s: %v", tt.name, raw, err)
			continue
		}
		if !strings.Contains(string(raw), `"`+tt.granted+`"`) {
			t.Errorf("%s: the setting %s does not grant %s", tt.name, raw, tt.granted)
		}
	}
}

// Within the default wait, doctor and status name the sandbox for a
// server still connecting whose stderr already shows the refusal (a
// server that prints its error and then waits, as npm did while it
// retried), with the setting, and say that waiting longer will not help.
func TestDoctorNamesTheSandboxWhileConnecting(t *testing.T) {
	t.Parallel()
	if why := proc.SandboxSupport(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no sandbox on this CI machine: %s", why)
		}
		t.Skip(why)
	}
	hidden, err := os.MkdirTemp("/var/tmp", "sandbox-refusal-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(hidden) })
	notes := filepath.Join(hidden, "notes.txt")
	os.WriteFile(notes, []byte("x"), 0o644)
	w := newRTWorld(t)
	w.userServers(map[string]any{"srv": map[string]any{"command": "sh", "args": []string{"-c", "cat " + notes + "; exec sleep 60"}, "sandbox": true}})
	out, errOut, _ := w.run(false, "doctor", "--json")
	var checks []doctorCheck
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errOut)
	}
	var sandbox, server *doctorCheck
	for i, c := range checks {
		switch c.Check {
		case "sandbox":
			sandbox = &checks[i]
		case "server":
			server = &checks[i]
		}
	}
	if sandbox == nil || sandbox.Level != doctorFail || !strings.Contains(sandbox.Message, "it was refused "+notes) || !strings.Contains(sandbox.Fix, `"`+notes+`"`) {
		t.Errorf("sandbox check %+v", sandbox)
	}
	if server == nil || strings.Contains(server.Fix, "wait longer") {
		t.Errorf("server check %+v: a refusal is no reason to wait", server)
	}
	out, _, _ = w.run(false, "status")
	if !strings.Contains(out, "sandbox: it was refused "+notes) {
		t.Errorf("status:\n%s", out)
	}
	_, errOut, _ = w.run(false, "tools")
	if !strings.Contains(errOut, "srv's sandbox refused it something: it was refused "+notes) || strings.Contains(errOut, "--wait") {
		t.Errorf("tools:\n%s", errOut)
	}
}

// A git server runs connected in its sandbox and fails only when it
// commits, in a tool's result, since .git is kept read-only: doctor says
// so beforehand, with the setting that lets it write .git. Other servers
// (github-mcp-server among them) get no such note.
func TestDoctorNotesAGitServersReadOnlyGit(t *testing.T) {
	t.Parallel()
	if why := proc.SandboxSupport(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no sandbox on this CI machine: %s", why)
		}
		t.Skip(why)
	}
	w := newRTWorld(t)
	echo := w.server("echo")
	args := func(word string) []any {
		a := []any{"-c", `exec "$0" "$@"`}
		a = append(a, echo["command"])
		for _, x := range echo["args"].([]string) {
			a = append(a, x)
		}
		return append(a, "--name", word)
	}
	w.userServers(map[string]any{
		"git":    map[string]any{"command": "sh", "args": args("mcp-server-git"), "sandbox": true},
		"github": map[string]any{"command": "sh", "args": args("github-mcp-server"), "sandbox": true},
	})
	out, errOut, _ := w.run(false, "doctor", "--json")
	var checks []doctorCheck
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errOut)
	}
	got := map[string]doctorCheck{}
	for _, c := range checks {
		if c.Check == "sandbox" {
			got[c.Server] = c
		}
	}
	gitDir := filepath.Join(w.proj, ".git")
	if c := got["git"]; c.Level != doctorNote || !strings.Contains(c.Message, "it looks like a git server, and its sandbox keeps "+gitDir+" read-only") ||
		!strings.Contains(c.Fix, `"write":[".","`+gitDir+`"]`) {
		t.Errorf("git: %+v", c)
	}
	if c := got["github"]; c.Level != doctorPass {
		t.Errorf("github: %+v", c)
	}
}

func TestGitServer(t *testing.T) {
	for cmd, want := range map[string]bool{
		"uvx mcp-server-git --repository .":              true,
		"npx -y @cyanheads/git-mcp-server":               true,
		"git mcp":                                        true,
		"docker run -i ghcr.io/github/github-mcp-server": false,
		"npx -y @modelcontextprotocol/server-gitlab":     false,
	} {
		f := strings.Fields(cmd)
		if got := gitServer(config.Server{Command: f[0], Args: f[1:]}); got != want {
			t.Errorf("%s: %v, want %v", cmd, got, want)
		}
	}
}
