package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Call hooks are read from the user's and the administrator's settings
// only; a bad one is an error naming file:line:col, and the hooks of a
// repository's settings are ignored with a warning.
func TestCallHooks(t *testing.T) {
	dir := t.TempDir()
	home, ws, managed := filepath.Join(dir, "sb"), filepath.Join(dir, "ws"), filepath.Join(dir, "etc")
	for _, d := range []string{home, filepath.Join(ws, ".switchboard"), managed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	user := filepath.Join(home, "settings.json")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(user, `{
  "toolChanges": "notify",
  "callHooks": [
    {"command": ["/usr/local/bin/check", "--strict"], "on": ["before"], "tools": ["mcp__github"]},
    {"url": "http://127.0.0.1:8787/after", "on": ["after"], "timeout": 900, "onError": "allow", "name": "dlp"},
    {"url": "https://hooks.example.com/x"},
    {"command": "check"}
  ],
  "projects": {"`+ws+`": {"callHooks": [{"command": "/opt/local-check", "timeout": -1}]}}
}`)
	write(filepath.Join(managed, "managed-settings.json"), `{"toolChanges": "ask", "callHooks": [{"command": "/opt/corp/audit"}]}`)
	write(filepath.Join(ws, ".switchboard", "settings.json"), `{"toolChanges": "accept", "callHooks": [{"command": "/repo/evil"}]}`)

	st := ReadSettings(SettingsPlaces{Home: home, Workspace: ws, ManagedDir: managed})
	if len(st.Problems()) != 0 {
		t.Fatalf("problems: %+v", st.Problems())
	}
	hooks, diags := st.CallHooks()
	var names []string
	for _, h := range hooks {
		names = append(names, h.Name+"@"+h.Position.String())
	}
	wantNames := []string{
		"audit@" + filepath.Join(managed, "managed-settings.json") + ":1:38",
		"check@" + user + ":4:5",
		"dlp@" + user + ":5:5",
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	if h := hooks[1]; !h.Before || h.After || h.TimeoutMs != DefaultHookTimeoutMs || h.FailOpen || len(h.Command) != 2 || h.Tools[0] != "mcp__github" {
		t.Errorf("command hook: %+v", h)
	}
	if h := hooks[2]; h.Before || !h.After || h.TimeoutMs != 900 || !h.FailOpen || h.URL == "" {
		t.Errorf("url hook: %+v", h)
	}
	localCol := len(`  "projects": {"`+ws+`": {"callHooks": [{"command": "/opt/local-check", "timeout": `) + 1
	var got []string
	for _, d := range diags {
		got = append(got, string(d.Severity)+" "+d.Position.String()+" "+d.Message)
	}
	want := []string{
		"error " + user + ":9:" + strconv.Itoa(localCol) + " local settings in " + user + ` (projects["` + ws + `"]): "timeout" must be a whole number of milliseconds from 1 to 120000; until it is fixed every tool call is refused`,
		"error " + user + ":6:13 user settings " + user + `: "url" must be on loopback (localhost, 127.0.0.1 or [::1]), not hooks.example.com: a hook receives every call's arguments; until it is fixed every tool call is refused`,
		"error " + user + `:7:17 user settings ` + user + `: "command" must name the program by its absolute path (or ~/…), not "check": a relative name would be looked up wherever a command runs; until it is fixed every tool call is refused`,
		"warning " + filepath.Join(ws, ".switchboard", "settings.json") + ":1:1 callHooks in project settings " + filepath.Join(ws, ".switchboard", "settings.json") + " are ignored: a repository may not run programs on your calls",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}

	// toolChanges: the administrator's wins; the repository's never counts.
	if mode, from := st.ToolChanges(); mode != ToolChangesAsk || !strings.HasPrefix(from, "managed settings") {
		t.Errorf("ToolChanges() = %q from %q", mode, from)
	}
	noManaged := ReadSettings(SettingsPlaces{Home: home, Workspace: ws})
	if mode, _ := noManaged.ToolChanges(); mode != ToolChangesNotify {
		t.Errorf("ToolChanges() without managed = %q", mode)
	}
	if _, err := LoadSettings(`{"toolChanges": "sometimes"}`); err == nil || !strings.Contains(err.Error(), `"toolChanges" must be "ask", "notify" or "accept"`) {
		t.Errorf("bad toolChanges: %v", err)
	}
}

func TestParseServerSecrets(t *testing.T) {
	s, diags := ParseServer("x", []byte(`{"command": "x", "secrets": "block"}`))
	if len(diags) != 0 || s.Secrets != SecretsBlock {
		t.Errorf("secrets block: %+v %v", s, diags)
	}
	_, diags = ParseServer("x", []byte(`{"command": "x", "secrets": "hide"}`))
	if len(diags) != 1 || diags[0].Position.Line != 1 || diags[0].Position.Col != 29 || !strings.Contains(diags[0].Message, `unknown mode "hide"`) {
		t.Errorf("bad secrets: %+v", diags)
	}
}
