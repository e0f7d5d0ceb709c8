package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/host"
)

// permWorld has the echo server, whose side_effect tools append a line to
// a file per run: the witness that a call did or did not run.
type permWorld struct {
	*rtWorld
	effect string
}

func newPermWorld(t *testing.T, rules map[string]any) *permWorld {
	w := &permWorld{rtWorld: newRTWorld(t)}
	w.effect = filepath.Join(w.work, "effect.log")
	echo := w.server("echo")
	echo["env"] = map[string]string{"SIDE_EFFECT_FILE": w.effect}
	w.userServers(map[string]any{"echo": echo})
	if rules != nil {
		w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"permissions": rules})
	}
	return w
}

// runs counts the side effects recorded so far.
func (w *permWorld) runs() int {
	w.t.Helper()
	b, err := os.ReadFile(w.effect)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestCallPermissions(t *testing.T) {
	w := newPermWorld(t, map[string]any{
		"allow": []string{"mcp__echo__echo", "mcp__echo__destructive", `mcp__echo__side_effect(note:"ok *")`},
		"deny":  []string{`mcp__echo__side_effect(note:"rm *")`},
	})
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr []string // substrings
		runs   int      // side effects recorded after the call
	}{
		{name: "allowed call runs", args: []string{"call", "mcp__echo__echo", `{"text":"hi"}`}, code: 0},
		{name: "denied call does not run", args: []string{"call", "mcp__echo__side_effect", `{"note":"rm -rf"}`}, code: 3,
			stderr: []string{`error: mcp__echo__side_effect: denied by rule "mcp__echo__side_effect(note:\"rm *\")" (deny, user settings ` + filepath.Join(w.sb, "settings.json") + `)`,
				`hint: remove "mcp__echo__side_effect(note:\"rm *\")" from permissions.deny in user settings`}},
		{name: "unlisted call headless is refused, naming the rule", args: []string{"call", "mcp__echo__idempotent_side_effect", `{"note":"x"}`}, code: 3,
			stderr: []string{
				"error: mcp__echo__idempotent_side_effect: needs permission and nobody can answer here (no permission rule allows mcp__echo__idempotent_side_effect)",
				"hint: run `switchboard permissions allow mcp__echo__idempotent_side_effect` to allow it, or allow it for one run with --settings '{\"permissions\":{\"allow\":[\"mcp__echo__idempotent_side_effect\"]}}'",
			}},
		{name: "the rule the hint names lets it run", args: []string{"call", "mcp__echo__idempotent_side_effect", `{"note":"x"}`,
			"--settings", `{"permissions":{"allow":["mcp__echo__idempotent_side_effect"]}}`}, code: 0, runs: 1},
		{name: "argument rule allows a matching value", args: []string{"call", "mcp__echo__side_effect", `{"note":"ok then"}`}, code: 0, runs: 2},
		{name: "argument rule: another value is asked", args: []string{"call", "mcp__echo__side_effect", `{"note":"sure"}`}, code: 3, runs: 2,
			stderr: []string{"no permission rule allows mcp__echo__side_effect"}},
		{name: "destructive tool named by an exact allow rule runs", args: []string{"call", "mcp__echo__destructive", `{"target":"x"}`}, code: 0, runs: 2},
		{name: "an ask rule still asks for a destructive tool an exact rule allows", args: []string{"call", "mcp__echo__destructive", `{"target":"x"}`,
			"--settings", `{"permissions":{"ask":["mcp__echo__destructive"]}}`}, code: 3, runs: 2,
			stderr: []string{`rule "mcp__echo__destructive" (ask, --settings) says to ask`}},
		{name: "readOnlyHint grants nothing", args: []string{"call", "mcp__echo__env", `{"names":["HOME"]}`}, code: 3, runs: 2,
			stderr: []string{"run `switchboard permissions allow mcp__echo__env`"}},
		{name: "--settings deny beats the user allow", args: []string{"call", "mcp__echo__echo", `{"text":"hi"}`,
			"--settings", `{"permissions":{"deny":["mcp__echo"]}}`}, code: 3, runs: 2, stderr: []string{"(deny, --settings)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := w.run(false, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q; stderr:\n%s", code, tc.code, out, stderr)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if code == 3 && out != "" {
				t.Errorf("a refused call printed %q", out)
			}
			if n := w.runs(); n != tc.runs {
				t.Errorf("side effects recorded: %d, want %d", n, tc.runs)
			}
		})
	}
}

// TestProjectSettingsOnlyTighten: the repository's own settings cannot
// allow (not even the user's server), but can deny.
func TestProjectSettingsOnlyTighten(t *testing.T) {
	w := newPermWorld(t, map[string]any{"allow": []string{"mcp__echo__echo"}})
	w.writeJSON(filepath.Join(w.proj, ".switchboard", "settings.json"), map[string]any{"permissions": map[string]any{
		"allow": []string{"mcp__echo", "mcp__*"},
		"deny":  []string{"mcp__echo__echo"},
	}})
	_, stderr, code := w.run(false, "call", "mcp__echo__side_effect")
	if code != 3 || !strings.Contains(stderr, "no permission rule allows mcp__echo__side_effect") {
		t.Errorf("project allow: exit %d, stderr:\n%s", code, stderr)
	}
	_, stderr, code = w.run(false, "call", "mcp__echo__echo", `{"text":"x"}`)
	if code != 3 || !strings.Contains(stderr, "(deny, project settings "+filepath.Join(w.proj, ".switchboard", "settings.json")+")") {
		t.Errorf("project deny: exit %d, stderr:\n%s", code, stderr)
	}
	if n := w.runs(); n != 0 {
		t.Errorf("side effects: %d", n)
	}
}

// TestCallPermissionPrompt: on a terminal the question is put to the
// person, with secret-looking arguments redacted.
func TestCallPermissionPrompt(t *testing.T) {
	w := newPermWorld(t, nil)
	ask := func(answer string, args ...string) (string, string, int) {
		f, in, out, errOut := w.factory(true)
		f.IO.CanPrompt = true
		in.WriteString(answer)
		code := Run(context.Background(), f, args)
		return out.String(), errOut.String(), code
	}
	_, stderr, code := ask("o\n", "call", "mcp__echo__side_effect", `{"note":"hello"}`)
	if code != 0 || w.runs() != 1 {
		t.Fatalf("answered once: exit %d, runs %d; stderr:\n%s", code, w.runs(), stderr)
	}
	for _, want := range []string{`Allow mcp__echo__side_effect with {"note":"hello"}?`, "why asked: no permission rule allows mcp__echo__side_effect", "[o]nce · [s]ession · [a]lways · [d]eny"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("question lacks %q:\n%s", want, stderr)
		}
	}

	// A refused call never reaches the server, whatever its arguments.
	_, stderr, code = ask("maybe\nd\n", "call", "mcp__echo__side_effect", `{"note":"no","api_token":"s3cr3t-value-123"}`)
	if code != 3 || w.runs() != 1 || !strings.Contains(stderr, "type o (once)") || !strings.Contains(stderr, "call refused when asked") {
		t.Errorf("denied: exit %d, runs %d; stderr:\n%s", code, w.runs(), stderr)
	}
	if strings.Contains(stderr, "s3cr3t-value-123") || !strings.Contains(stderr, `"api_token":"<redacted>"`) {
		t.Errorf("the question does not redact a secret argument:\n%s", stderr)
	}
	_, stderr, code = ask("", "call", "mcp__echo__side_effect", `{"note":"eof"}`)
	if code != 3 || w.runs() != 1 || !strings.Contains(stderr, "input closed: denied") {
		t.Errorf("input closed: exit %d, runs %d; stderr:\n%s", code, w.runs(), stderr)
	}
	_, stderr, code = ask("s\n", "call", "mcp__echo__destructive")
	if code != 0 || !strings.Contains(stderr, "Allow mcp__echo__destructive with no arguments?") {
		t.Errorf("session: exit %d; stderr:\n%s", code, stderr)
	}
}

func TestDeniedExitCode(t *testing.T) {
	denied := fmt.Errorf("calling: %w", &host.DeniedError{Tool: "mcp__a__b"})
	if got := exitCode(denied); got != ExitRefused {
		t.Errorf("exitCode(denied) = %d, want %d", got, ExitRefused)
	}
	if got := exitCode(callErr(denied)); got != ExitRefused {
		t.Errorf("exitCode(callErr(denied)) = %d, want %d", got, ExitRefused)
	}
	if got := exitCode(errors.New("other")); got != ExitFailure {
		t.Errorf("exitCode(other) = %d", got)
	}
}
