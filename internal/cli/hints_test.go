package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// TestDeniedHint: the library's refusal hints name no CLI command; the
// CLI points at doctor exactly when a settings file that cannot be used
// decided the call, and passes every other hint through.
func TestDeniedHint(t *testing.T) {
	write := func(t *testing.T, path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	req := policy.Request{Tool: "mcp__github__merge", Server: "github", ToolName: "merge"}
	for _, tc := range []struct {
		name  string
		files func(home, proj, managed string)
		want  string
	}{
		{"broken managed file", func(home, proj, managed string) {
			write(t, policy.ManagedSettingsPath(managed), `{"permissions": "all"}`)
		}, "ask the administrator to fix the managed settings file (`switchboard doctor` shows the error)"},
		{"broken project file: allow rules off", func(home, proj, managed string) {
			write(t, policy.ProjectSettingsPath(proj), `{"permissions": {"deny": [`)
		}, "fix the settings file named above (`switchboard doctor` shows where), or run it where a person can answer"},
		{"a deny rule", func(home, proj, managed string) {
			write(t, policy.UserSettingsPath(home), `{"permissions": {"deny": ["mcp__github"]}}`)
		}, ""}, // "" : the library's hint, passed through
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			home, proj, managed := filepath.Join(dir, "home"), filepath.Join(dir, "proj"), filepath.Join(dir, "etc")
			tc.files(home, proj, managed)
			p := policy.Load(&policy.LoadOptions{Home: home, Workspace: proj, ManagedDir: managed,
				LookupEnv: func(string) (string, bool) { return "", false }})
			d := p.Decide(req)
			de := &host.DeniedError{Tool: req.Tool, Decision: d, Hint: d.Hint("~/.switchboard/settings.json")}
			want := tc.want
			if want == "" {
				want = de.Hint
				if d.Action != policy.Deny || d.Rule == nil || de.Hint == "" {
					t.Fatalf("decision = %+v (hint %q), want a deny by a rule, with a hint", d, de.Hint)
				}
			}
			if got := deniedHint(de); got != want {
				t.Errorf("deniedHint = %q, want %q (decision %+v)", got, want, d)
			}
		})
	}
	if got := deniedHint(&host.DeniedError{Asked: true}); got != "" {
		t.Errorf("deniedHint of a refused question = %q, want none", got)
	}
}

// TestApprovalHintAndDiagnostic: what the CLI adds to the library's facts.
func TestApprovalHintAndDiagnostic(t *testing.T) {
	for _, tc := range []struct {
		state host.State
		want  string
	}{
		{host.StateNeedsApproval, "held; run `switchboard mcp approve fs`"},
		{host.StateApprovalStale, "held; run `switchboard mcp approve fs` to review it again"},
		{host.StateDisabled, "held"},
		{host.StateConnected, "held"},
	} {
		if got := approvalHint(tc.state, "fs", "held"); got != tc.want {
			t.Errorf("approvalHint(%s) = %q, want %q", tc.state, got, tc.want)
		}
	}
	ds := []config.Diagnostic{
		{Server: "ghost", Undefined: true, Message: "m", Fix: "define it in a configuration file, or remove it from enabledMcpServers"},
		{Server: "x", Message: "m", Fix: "library fix"},
	}
	got := cliDiagnostics(ds)
	if want := "add it with `switchboard mcp add ghost …`, or remove it from enabledMcpServers"; got[0].Fix != want {
		t.Errorf("fix = %q, want %q", got[0].Fix, want)
	}
	if got[1].Fix != "library fix" || ds[0].Fix == got[0].Fix {
		t.Errorf("cliDiagnostics changed another fix or its input: %+v, input %+v", got, ds)
	}
	if cliDiagnostics(nil) != nil {
		t.Errorf("cliDiagnostics(nil) is not nil")
	}
}
