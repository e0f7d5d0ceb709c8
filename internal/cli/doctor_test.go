package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// doctorWorld has one of each thing doctor checks: a connected server, one
// that dies at startup, a disabled one, one with an unset variable, one
// shadowed by a local definition, a project file that does not parse, and
// permission rules that can never match.
func doctorWorld(t *testing.T) *rtWorld {
	w := newRTWorld(t)
	envy := w.server("demo")
	envy["env"] = map[string]string{"API_TOKEN": "${DOCTOR_UNSET_TOKEN}"}
	off := w.server("demo")
	off["enabled"] = false
	w.writeJSON(filepath.Join(w.sb, "mcp.json"), map[string]any{
		"mcpServers": map[string]any{
			"demo":   w.server("demo"),
			"broken": w.server("exit-init"),
			"off":    off,
			"envy":   envy,
		},
		"projects": map[string]any{w.proj: map[string]any{"mcpServers": map[string]any{"demo": w.server("demo")}}},
	})
	if err := os.WriteFile(filepath.Join(w.proj, ".mcp.json"), []byte("{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"a\",,}\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"permissions": map[string]any{
		"allow": []string{"mcp__demo", "mcp__git*", "mcp__demo__get_*", "*", "mcp__*", `mcp__demo__echo(text:hi)`, "mcp__github__merge_pull_request",
			"mcp__demo__wordcount", `mcp__demo__word_count(text:"*")`},
		"deny": []string{"mcp__*__delete"},
	}})
	w.writeJSON(filepath.Join(w.proj, ".switchboard", "settings.json"), map[string]any{"permissions": map[string]any{
		"allow": []string{"mcp__broken"},
		"deny":  []string{"mcp__demo__roll_dice"},
	}})
	return w
}

func TestDoctorGolden(t *testing.T) {
	w := doctorWorld(t)
	out, stderr, code := w.run(true, "doctor")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	golden(t, "doctor_tty", w.mask(out))

	out, stderr, code = w.run(false, "doctor", "--json")
	if code != 1 {
		t.Fatalf("--json: exit %d, want 1; stderr:\n%s", code, stderr)
	}
	golden(t, "doctor_json", w.mask(out))
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for _, k := range []string{"check", "server", "ok", "message", "fix"} {
			if _, ok := r[k]; !ok {
				t.Errorf("row %v has no key %q", r, k)
			}
		}
	}

	out, _, _ = w.run(false, "doctor")
	if !strings.Contains(out, "fail\tserver\tbroken\terror: ") {
		t.Errorf("piped rows:\n%s", out)
	}
}

func TestDoctorAllOK(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo")})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__demo__echo"}}})
	out, stderr, code := w.run(true, "doctor")
	if code != 0 {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, want := range []string{"pass  server demo", "connected: 4 tools", "1 permission rules, each of which can match", "pass  trust demo   not needed: user scope, written by you; it starts without asking", "All 4 checks passed."} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

// TestDoctorProgramNotOnPath: a stdio server whose program is not on
// PATH fails with that said once, and a fix that names what installs the
// usual package runners.
func TestDoctorProgramNotOnPath(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{
		"py":   map[string]any{"command": "uvx", "args": []string{"mcp-server-fetch"}},
		"mine": map[string]any{"command": "no-such-program-sb", "args": []string{"--x"}},
	})
	// A PATH with neither program, whatever this machine has installed
	// (the host looks programs up in its own environment).
	t.Setenv("PATH", t.TempDir())
	out, stderr, code := w.run(false, "doctor", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, want := range []string{
		`"message": "error: cannot start \"uvx\": executable file not found in $PATH"`,
		`"fix": "install uv, which provides \"uvx\", or give \"command\" its full path"`,
		`"message": "error: cannot start \"no-such-program-sb\": executable file not found in $PATH"`,
		`"fix": "install \"no-such-program-sb\" so that it is on PATH, or give \"command\" its full path"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor --json lacks %s:\n%s", want, out)
		}
	}
}

// TestDoctorBrokenSettings: a settings file that does not parse is a
// failed check with its line and column, and turns allow rules off.
func TestDoctorBrokenSettings(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo")})
	if err := os.MkdirAll(w.sb, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.sb, "settings.json"), []byte("{\"permissions\": {\"allow\": [\"mcp__demo\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := w.run(false, "doctor", "--json")
	if code != 1 || !strings.Contains(out, `"message": "user settings ~/.switchboard/settings.json: line 2, column 1: `) {
		t.Errorf("exit %d:\n%s", code, out)
	}
	_, stderr, code := w.run(false, "call", "mcp__demo__echo", `{"text":"x"}`)
	if code != 3 || !strings.Contains(stderr, "allow rules are off") {
		t.Errorf("call with a broken settings file: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestDoctorInlineHookProblem: a hook of inline --settings has no file to
// name; its problem reads from --settings, not from an empty position
// (": --settings: …").
func TestDoctorInlineHookProblem(t *testing.T) {
	w := newRTWorld(t)
	out, _, code := w.run(false, "doctor", "--settings", `{"callHooks": 5}`)
	if code != 1 || !regexpMatch(`(?m)^fail\thooks\t-\t--settings: "callHooks" must be`, out) {
		t.Errorf("exit %d; want a hooks row that starts with --settings:\n%s", code, out)
	}
}

// TestDoctorProfiles: a profile naming a server that does not exist, or a
// glob matching none, fails with the nearest name; a repository's
// redefinition of the user's profile fails naming file:line:col.
func TestDoctorProfiles(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo")})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"profiles": map[string]any{
		"review": map[string]any{"servers": []string{"dmeo", "docs-*"}},
		"ok":     map[string]any{"servers": []string{"demo"}},
	}})
	w.writeJSON(filepath.Join(w.proj, ".switchboard", "settings.json"), map[string]any{"profiles": map[string]any{"ok": map[string]any{}}})
	out, _, code := w.run(false, "doctor")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{
		"fail\tprofiles", `profile names server "dmeo", which is not configured here`, `did you mean "demo"?`,
		"warn\tprofiles", `profile pattern "docs-*" matches no server configured here`,
		`.switchboard/settings.json:3:5: field "profiles.ok": a repository may not redefine profile "ok"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

// TestDoctorProfileOtherWorkspaceServer: a user profile naming a server
// this workspace does not configure (another repository's project server),
// far from every name here, is a warning: doctor still passes.
func TestDoctorProfileOtherWorkspaceServer(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo")})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"profiles": map[string]any{
		"coding": map[string]any{"servers": []string{"demo", "postgres"}},
	}})
	out, _, code := w.run(false, "doctor")
	if code != 0 {
		t.Errorf("exit %d, want 0:\n%s", code, out)
	}
	if !regexp.MustCompile(`(?m)^warn\tprofiles\t.*profile names server "postgres", which is not configured here`).MatchString(out) {
		t.Errorf("no warn row for postgres:\n%s", out)
	}
	if strings.Contains(out, "each naming configured servers") {
		t.Errorf("a pass row says every server is configured:\n%s", out)
	}
}

// TestDoctorProfileScope (issue 34): doctor --profile NAME checks only the
// servers the profile includes: a broken server it leaves out fails a
// plain doctor, not this one.
func TestDoctorProfileScope(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo"), "broken": map[string]any{"command": filepath.Join(w.proj, "no-such-command")}})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"profiles": map[string]any{"ok": map[string]any{"servers": []string{"demo"}}}})
	out, _, code := w.run(false, "doctor", "--json")
	if code != 1 || !strings.Contains(out, `"server": "broken"`) {
		t.Errorf("doctor: exit %d, want 1 with broken failing:\n%s", code, out)
	}
	out, _, code = w.run(false, "doctor", "--json", "--profile", "ok")
	if code != 0 || strings.Contains(out, `"server": "broken"`) || !strings.Contains(out, `"server": "demo"`) {
		t.Errorf("doctor --profile ok: exit %d, want 0, checking demo and not broken:\n%s", code, out)
	}
}

// TestDoctorProfileWarnings: what a profile's settings write that does
// nothing is a warning, and doctor shows it as one (warn, exit 0), not as
// a failure: a field the profile ignores, and a user's definition of a
// name the managed settings define, which the managed one wins over
// (status --profile of that name says so too, and shows the managed one).
func TestDoctorProfileWarnings(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo"), "other": w.server("demo")})
	w.writeJSON(filepath.Join(w.work, "managed", "managed-settings.json"), map[string]any{"profiles": map[string]any{
		"review": map[string]any{"servers": []string{"demo"}},
	}})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"profiles": map[string]any{
		"review": map[string]any{"servers": []string{"other"}},
		"odd":    map[string]any{"servers": []string{"demo"}, "sandbox": "strict"},
	}})
	out, _, code := w.run(false, "doctor", "--json")
	var checks []doctorCheck
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if code != 0 {
		t.Errorf("doctor: exit %d, want 0 (warnings only):\n%s", code, out)
	}
	want := map[string]bool{
		`profile "review" is defined by the managed settings`:        false,
		`field "profiles.odd.sandbox": unknown field; it is ignored`: false,
	}
	for _, c := range checks {
		if c.Check != "profiles" {
			continue
		}
		for w := range want {
			if strings.Contains(c.Message, w) {
				want[w] = true
				if c.Level != doctorWarn || !c.OK {
					t.Errorf("%q: level %s, ok %v; want warn, ok", c.Message, c.Level, c.OK)
				}
			}
		}
	}
	for w, seen := range want {
		if !seen {
			t.Errorf("doctor lacks a profiles row %q:\n%s", w, out)
		}
	}
	// The summary counts the warnings apart: "passed" alone would hide them.
	out, _, _ = w.run(true, "doctor")
	if !regexp.MustCompile(`(?m)^All \d+ checks passed, 2 with a warning\.$`).MatchString(out) {
		t.Errorf("doctor's summary does not count its two warnings:\n%s", out)
	}
	out, stderr, code := w.run(false, "status", "--json", "--profile", "review")
	var st statusJSON
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("status --profile review: exit %d, %v:\n%s%s", code, err, out, stderr)
	}
	if !strings.Contains(stderr, `warning: `) || !strings.Contains(stderr, `profile "review" is defined by the managed settings (`) ||
		!strings.Contains(stderr, `which win: this user definition is ignored`) {
		t.Errorf("status --profile review: stderr %q, want the warning that the user's review is ignored", stderr)
	}
	for _, s := range st.Servers {
		if connected := s.State == "connected"; connected != (s.Name == "demo") {
			t.Errorf("status --profile review: %s is %s, want only demo (the managed review) connected", s.Name, s.State)
		}
	}
	if n := strings.Count(stderr, "which win: this user definition is ignored"); n != 1 {
		t.Errorf("status --profile review warns %d times, want once:\n%s", n, stderr)
	}
	// Without --profile, status lists which profiles include each server:
	// it says that the user's review is not the one shown.
	_, stderr, code = w.run(false, "status")
	if code != 0 || !strings.Contains(stderr, `warning: `) || !strings.Contains(stderr, `which win: this user definition is ignored`) {
		t.Errorf("status: exit %d, stderr %q; want 0 and the warning that the user's review is ignored", code, stderr)
	}
}
