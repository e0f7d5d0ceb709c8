package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/trust"
)

// trustWorld is an rtWorld with the project server "repo" (repoDef) and
// the echo test server in user scope as "mine".
func trustWorld(t *testing.T, repoDef map[string]any) *rtWorld {
	w := newRTWorld(t)
	w.userServers(map[string]any{"mine": w.server("echo")})
	w.writeJSON(filepath.Join(w.proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"repo": repoDef}})
	return w
}

// statusState runs status --json (with extra global flags first) and
// returns name → state and name → reason.
func statusStates(t *testing.T, w *rtWorld, flags ...string) (map[string]string, map[string]string) {
	t.Helper()
	out, errOut, code := w.run(false, append(flags, "status", "--json")...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	var got struct {
		Servers []struct{ Name, State, Error string } `json:"servers"`
	}
	if err := jsonUnmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	states, reasons := map[string]string{}, map[string]string{}
	for _, s := range got.Servers {
		states[s.Name], reasons[s.Name] = s.State, s.Error
	}
	return states, reasons
}

// TestPreApproval: --settings (inline and file), user, local and managed
// settings approve in advance; a local entry for another workspace and the
// repository's own settings do not.
func TestPreApproval(t *testing.T) {
	enableAll := map[string]any{"enableAllProjectMcpServers": true}
	byName := map[string]any{"enabledMcpjsonServers": []string{"repo"}}
	for _, tc := range []struct {
		name  string
		setup func(w *rtWorld) []string // returns global flags
		want  string
	}{
		{"none", func(w *rtWorld) []string { return nil }, "needs-approval"},
		{"--settings inline", func(w *rtWorld) []string {
			return []string{"--settings", `{"enableAllProjectMcpServers": true}`}
		}, "connected"},
		{"--settings inline by name", func(w *rtWorld) []string {
			return []string{"--settings", `{"enabledMcpjsonServers": ["a", "repo"]}`}
		}, "connected"},
		{"--settings other name", func(w *rtWorld) []string {
			return []string{"--settings", `{"enabledMcpjsonServers": ["a"]}`}
		}, "needs-approval"},
		{"--settings file", func(w *rtWorld) []string {
			p := filepath.Join(w.work, "s.json")
			w.writeJSON(p, byName)
			return []string{"--settings", p}
		}, "connected"},
		{"user settings", func(w *rtWorld) []string {
			w.writeJSON(filepath.Join(w.sb, UserSettingsFile), enableAll)
			return nil
		}, "connected"},
		{"local settings", func(w *rtWorld) []string {
			w.writeJSON(filepath.Join(w.sb, UserSettingsFile), map[string]any{"projects": map[string]any{w.proj: byName}})
			return nil
		}, "connected"},
		{"local settings of another workspace", func(w *rtWorld) []string {
			w.writeJSON(filepath.Join(w.sb, UserSettingsFile), map[string]any{"projects": map[string]any{"/elsewhere": enableAll}})
			return nil
		}, "needs-approval"},
		{"managed settings", func(w *rtWorld) []string {
			w.writeJSON(filepath.Join(w.work, "managed", ManagedSettingsFile), byName)
			return nil
		}, "connected"},
		{"user rejection beats --settings", func(w *rtWorld) []string {
			w.writeJSON(filepath.Join(w.sb, UserSettingsFile), map[string]any{"disabledMcpjsonServers": []string{"repo"}})
			return []string{"--settings", `{"enableAllProjectMcpServers": true}`}
		}, "disabled"},
		{"repo settings", func(w *rtWorld) []string {
			w.writeJSON(filepath.Join(w.proj, ".switchboard", "settings.json"), enableAll)
			w.writeJSON(filepath.Join(w.proj, ".switchboard", "settings.local.json"), byName)
			return nil
		}, "needs-approval"},
		{"corrupt user settings fail closed", func(w *rtWorld) []string {
			os.MkdirAll(w.sb, 0o700)
			os.WriteFile(filepath.Join(w.sb, UserSettingsFile), []byte(`{"enableAllProjectMcpServers": true,,`), 0o600)
			return nil
		}, "needs-approval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := trustWorld(t, w0server())
			flags := tc.setup(w)
			states, reasons := statusStates(t, w, flags...)
			if states["repo"] != tc.want {
				t.Errorf("repo is %s (%s), want %s", states["repo"], reasons["repo"], tc.want)
			}
			if states["mine"] != "connected" {
				t.Errorf("the user's own server is %s: %s", states["mine"], reasons["mine"])
			}
		})
	}
}

// w0server is the echo server's definition, built without a world (the
// test binary is the same for all).
func w0server() map[string]any {
	return (&rtWorld{}).server("echo")
}

// TestRepoServerEnvironment: a project server (approved or pre-approved)
// does not see a secret planted in the parent environment, but sees the
// base set and what it names; the user's own server sees everything.
func TestRepoServerEnvironment(t *testing.T) {
	t.Setenv("SECRET_TOKEN", "planted-secret-value")
	t.Setenv("MY_REF", "referenced")
	t.Setenv("MY_PASS", "passed-through")
	t.Setenv("UNNAMED", "not-named")
	def := w0server()
	def["env"] = map[string]any{"FROM_REF": "${MY_REF}"}
	def["env_passthrough"] = []string{"MY_PASS"}
	w := trustWorld(t, def)
	names := `{"names": ["SECRET_TOKEN", "MY_REF", "MY_PASS", "UNNAMED", "FROM_REF", "PATH"]}`
	call := func(server string, flags ...string) string {
		t.Helper()
		f, _, out, errOut := w.factory(false)
		f.Getenv = os.LookupEnv
		args := append(flags, "call", "mcp__"+server+"__env", names)
		if code := Run(context.Background(), f, args); code != 0 {
			t.Fatalf("call %s: exit %d\n%s", server, code, errOut)
		}
		return out.String()
	}
	allow := `"permissions": {"allow": ["mcp__repo__env", "mcp__mine__env"]}`
	for i, flags := range [][]string{
		{"--settings", `{"enableAllProjectMcpServers": true, ` + allow + `}`}, // pre-approved: still filtered
		{"--settings", `{` + allow + `}`},                                     // approved below
	} {
		if i == 1 {
			if _, errOut, code := w.run(false, "mcp", "approve", "repo", "--yes"); code != 0 {
				t.Fatalf("approve: %d\n%s", code, errOut)
			}
		}
		got := call("repo", flags...)
		for _, want := range []string{"SECRET_TOKEN unset", "UNNAMED unset", "MY_REF=referenced", "MY_PASS=passed-through", "FROM_REF=referenced", "PATH="} {
			if !strings.Contains(got, want) {
				t.Errorf("project server (flags %v): output lacks %q:\n%s", flags, want, got)
			}
		}
		if strings.Contains(got, "planted-secret-value") {
			t.Errorf("project server saw the planted secret:\n%s", got)
		}
	}
	// The user's own server gets the secret; the value it was given is
	// kept out of what the model reads (docs/security.md, What the model
	// reads): set, and replaced, rather than "unset".
	got := call("mine", "--settings", `{`+allow+`}`)
	for _, want := range []string{"SECRET_TOKEN=<redacted>", "UNNAMED=not-named"} {
		if !strings.Contains(got, want) {
			t.Errorf("user server: output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "planted-secret-value") {
		t.Errorf("the user server's result shows the secret it was given:\n%s", got)
	}
}

// TestInteractiveApproval: on a terminal, a project server is shown in
// full and asked about before anything starts; yes is stored, no holds it
// for this run only.
func TestInteractiveApproval(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp-planted") // in the parent: the review lists it as passing
	def := w0server()
	def["env"] = map[string]any{"NODE_OPTIONS": "--require ./hook.js", "API_KEY": "sk-literal-secret", "DEBUG": "1", "GH_AUTH": "Bearer ${GITHUB_TOKEN}"}
	def["cwd"] = "sub dir"
	w := trustWorld(t, def)
	os.MkdirAll(filepath.Join(w.proj, "sub dir"), 0o755)
	run := func(answer string) (string, map[string]string, map[string]string) {
		f, in, _, errOut := w.factory(true)
		f.IO.CanPrompt = true
		in.WriteString(answer)
		opts := &StatusOptions{runtimeOptions: rtOptions(f), JSON: true}
		opts.Wait = 20 * time.Second
		if err := statusRun(context.Background(), opts); err != nil {
			t.Fatalf("status: %v\n%s", err, errOut)
		}
		states, reasons := statusStates(t, w) // headless: what was stored
		return errOut.String(), states, reasons
	}
	review, states, reasons := run("n\n")
	for _, want := range []string{
		`Project server "repo"`,
		"command:  " + trust.CommandLine(w0server()["command"].(string), w0server()["args"].([]string)),
		"cwd:      'sub dir'",
		"DEBUG=1",
		"API_KEY=<redacted>\n",
		"GH_AUTH=<redacted> (made from ${GITHUB_TOKEN})",
		"and, because the definition names them: GITHUB_TOKEN",
		"NODE_OPTIONS='--require ./hook.js'",
		"⚠ NODE_OPTIONS changes how node loads code: this server can run any code before its own",
		"from your environment it gets only: ",
		"Not approved: repo will not start in this run.",
	} {
		if !strings.Contains(review, want) {
			t.Errorf("review lacks %q:\n%s", want, review)
		}
	}
	if strings.Contains(review, "sk-literal-secret") || strings.Contains(review, "ghp-planted") {
		t.Errorf("review shows a secret value:\n%s", review)
	}
	if states["repo"] != "needs-approval" || !strings.Contains(reasons["repo"], "mcp approve repo") {
		t.Errorf("after no: %s (%s)", states["repo"], reasons["repo"])
	}
	if trust.Open(w.sb).Approved(w.proj) != nil {
		t.Error("no was stored as an approval")
	}

	review, _, _ = run("maybe\ny\n")
	if !strings.Contains(review, "type y or n") || !strings.Contains(review, "Approved repo.") {
		t.Errorf("review after yes:\n%s", review)
	}
	if got := trust.Open(w.sb).Approved(w.proj); len(got) != 1 || got[0] != "repo" {
		t.Fatalf("approved = %v", got)
	}
	states, reasons = statusStates(t, w)
	if states["repo"] != "connected" {
		t.Errorf("after yes: %s (%s)", states["repo"], reasons["repo"])
	}

	// The repository changes the definition: stale, and the review says what
	// changed and what it was.
	def["args"] = append(append([]string(nil), def["args"].([]string)...), "-unknown-flag")
	w.writeJSON(filepath.Join(w.proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"repo": def}})
	review, states, reasons = run("")
	for _, want := range []string{"It CHANGED since you approved it", ": args", "command was: "} {
		if !strings.Contains(review, want) {
			t.Errorf("stale review lacks %q:\n%s", want, review)
		}
	}
	if states["repo"] != "approval-stale" || !strings.Contains(reasons["repo"], "(args)") {
		t.Errorf("after change: %s (%s)", states["repo"], reasons["repo"])
	}
}

// TestApproveCommands covers mcp approve, revoke and reset-project-choices.
func TestApproveCommands(t *testing.T) {
	w := trustWorld(t, w0server())
	type step struct {
		args      []string
		code      int
		out, errs string
	}
	for _, s := range []step{
		{[]string{"mcp", "approve", "nosuch", "--yes"}, 1, "", `no server named "nosuch"`},
		{[]string{"mcp", "approve", "mine", "--yes"}, 2, "", `server "mine" is not a project server (user scope`},
		{[]string{"mcp", "approve", "repo"}, 2, "", "cannot ask for confirmation: no terminal"},
		// Nothing to revoke fails, as a logout without tokens does.
		{[]string{"mcp", "revoke", "repo"}, 1, "", "repo was not approved in workspace"},
		{[]string{"mcp", "revoke", "rpeo"}, 1, "", `did you mean repo?`},
		{[]string{"mcp", "approve", "repo", "--yes"}, 0, "Approved repo for workspace", `Project server "repo"`},
		{[]string{"mcp", "approve", "repo", "--yes"}, 0, "repo is already approved", ""},
		{[]string{"mcp", "revoke", "repo"}, 0, "Revoked the approval of repo in workspace", ""},
		{[]string{"mcp", "revoke"}, 2, "", "revoke takes one server name, or --all"},
		{[]string{"mcp", "revoke", "repo", "--all"}, 2, "", "not both"},
		{[]string{"mcp", "approve", "repo", "--yes"}, 0, "Approved", ""},
		{[]string{"mcp", "revoke", "--all"}, 0, "Forgot 1 approval(s)", ""},
		{[]string{"mcp", "approve", "repo", "--yes"}, 0, "Approved", ""},
		{[]string{"mcp", "reset-project-choices"}, 0, "Forgot 1 approval(s) in workspace", ""},
		{[]string{"mcp", "reset-project-choices"}, 0, "No project server approvals to forget", ""},
	} {
		out, errOut, code := w.run(false, s.args...)
		if code != s.code || !strings.Contains(out, s.out) || !strings.Contains(errOut, s.errs) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout ~ %q, stderr ~ %q", s.args, code, s.code, out, errOut, s.out, s.errs)
		}
	}
	// The revoke message says a running server is not killed.
	w.run(false, "mcp", "approve", "repo", "--yes")
	out, _, _ := w.run(false, "mcp", "revoke", "repo")
	if !strings.Contains(out, "not stopped") || !strings.Contains(out, "ask for approval before it starts again") {
		t.Errorf("revoke message: %s", out)
	}
	// A corrupt store: approval refuses, nothing starts, status says why.
	os.WriteFile(filepath.Join(w.sb, trust.FileName), []byte("{garbage"), 0o600)
	_, errOut, code := w.run(false, "mcp", "approve", "repo", "--yes")
	if code != 1 || !strings.Contains(errOut, "is corrupt") {
		t.Errorf("approve on a corrupt store: exit %d\n%s", code, errOut)
	}
	_, errOut, code = w.run(false, "status")
	if code != 0 || !strings.Contains(errOut, "trust store") || !strings.Contains(errOut, "nothing is approved") {
		t.Errorf("status on a corrupt store: exit %d\n%s", code, errOut)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// TestApprovalWhileRunning: a long-running host (the gateway) holds a
// project server; `mcp approve` in another process, then a configuration
// reload (serve watches the Switchboard directory, where trust.json lives),
// starts it without restarting anything else.
func TestApprovalWhileRunning(t *testing.T) {
	w := trustWorld(t, w0server())
	f, _, _, _ := w.factory(false)
	cfg, err := f.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	lt, err := f.launchTrust(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(cfg, &host.Options{Gate: lt.Gate, CloseGrace: 200 * time.Millisecond})
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.WaitReady(ctx)
	state := func() host.State {
		for _, st := range h.Status() {
			if st.Name == "repo" {
				return st.State
			}
		}
		return ""
	}
	if st := state(); st != host.StateNeedsApproval {
		t.Fatalf("before: %s", st)
	}
	if _, errOut, code := w.run(false, "mcp", "approve", "repo", "--yes"); code != 0 {
		t.Fatalf("approve: %d\n%s", code, errOut)
	}
	res := h.Apply(cfg)
	if len(res.Regated) != 1 || res.Regated[0] != "repo" {
		t.Errorf("Apply = %+v, want repo regated", res)
	}
	h.WaitReady(ctx)
	if st := state(); st != host.StateConnected {
		t.Errorf("after approval and reload: %s", st)
	}
}
