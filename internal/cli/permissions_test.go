package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// settingsRules reads the permission lists of the settings file at path:
// those of the top level (local "") or of the "projects" entry local.
func settingsRules(t *testing.T, path, local string) (allow, ask, deny []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := config.ParseSettings(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if local != "" {
		entry, _ := s["projects"].(map[string]any)[local].(map[string]any)
		s = config.Settings(entry)
	}
	return s.Permissions()
}

// TestCallPermissionAlways: "always" on a terminal writes the exact allow
// rule — to the workspace's local settings by default, or to the user
// settings when asked — keeping the file's comments, and a second process
// then runs the tool without asking (headless, where an ask is exit 3).
func TestCallPermissionAlways(t *testing.T) {
	w := newPermWorld(t, nil)
	settings := filepath.Join(w.sb, "settings.json")
	if err := os.WriteFile(settings, []byte("{\n  // mine: keep this\n  \"theme\": \"dark\",\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ask := func(answer string, args ...string) (string, int) {
		f, in, _, errOut := w.factory(true)
		f.IO.CanPrompt = true
		in.WriteString(answer)
		code := Run(context.Background(), f, args)
		return errOut.String(), code
	}
	// Headless first: refused.
	if _, stderr, code := w.run(false, "call", "mcp__echo__side_effect", `{"note":"1"}`); code != 3 {
		t.Fatalf("headless before always: exit %d\n%s", code, stderr)
	}
	stderr, code := ask("a\n\n", "call", "mcp__echo__side_effect", `{"note":"2"}`)
	if code != 0 || w.runs() != 1 {
		t.Fatalf("always: exit %d, runs %d\n%s", code, w.runs(), stderr)
	}
	for _, want := range []string{
		`always: writes the allow rule "mcp__echo__side_effect" to your settings`,
		"[o]nce · [s]ession · [a]lways · [d]eny",
		"write it for [w]orkspace " + w.proj + " only (default) or [e]very workspace (user settings)?",
		`Wrote the allow rule "mcp__echo__side_effect" to local settings ~/.switchboard/settings.json (workspace ` + w.proj + ")",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("question lacks %q:\n%s", want, stderr)
		}
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), "// mine: keep this") {
		t.Errorf("the comment is gone:\n%s", b)
	}
	if allow, _, _ := settingsRules(t, settings, w.proj); !cmp.Equal(allow, []string{"mcp__echo__side_effect"}) {
		t.Errorf("local allow = %v:\n%s", allow, b)
	}
	// A second process, headless: it runs without asking.
	if _, stderr, code := w.run(false, "call", "mcp__echo__side_effect", `{"note":"3"}`); code != 0 || w.runs() != 2 {
		t.Fatalf("headless after always: exit %d, runs %d\n%s", code, w.runs(), stderr)
	}

	// A destructive tool: "always" writes its exact name, which allows it
	// (a broad grant would not). Everywhere: the user settings.
	stderr, code = ask("a\ne\n", "call", "mcp__echo__destructive", `{"target":"x"}`)
	if code != 0 || !strings.Contains(stderr, `Wrote the allow rule "mcp__echo__destructive" to user settings ~/.switchboard/settings.json`) {
		t.Fatalf("always, user: exit %d\n%s", code, stderr)
	}
	if allow, _, _ := settingsRules(t, settings, ""); !cmp.Equal(allow, []string{"mcp__echo__destructive"}) {
		t.Errorf("user allow = %v", allow)
	}
	if _, stderr, code := w.run(false, "call", "mcp__echo__destructive", `{"target":"y"}`); code != 0 {
		t.Fatalf("destructive after always: exit %d\n%s", code, stderr)
	}

	// "session" is not written.
	before, _ := os.ReadFile(settings)
	if stderr, code = ask("s\n", "call", "mcp__echo__idempotent_side_effect", `{"note":"s"}`); code != 0 {
		t.Fatalf("session: exit %d\n%s", code, stderr)
	}
	if after, _ := os.ReadFile(settings); string(after) != string(before) {
		t.Errorf("a session answer wrote the settings:\n%s", after)
	}
	// Where an ask rule decided, no allow rule helps: always is not offered.
	stderr, code = ask("a\nd\n", "call", "mcp__echo__echo", `{"text":"x"}`, "--settings", `{"permissions":{"ask":["mcp__echo__echo"]}}`)
	if code != 3 || strings.Contains(stderr, "[a]lways") || !strings.Contains(stderr, "type o (once), s (for this session) or d (deny)") {
		t.Errorf("always under an ask rule: exit %d\n%s", code, stderr)
	}
}

// TestGatewayAlwaysWritesTheRule: the gateway's elicitation offers
// "always", says where it writes, and writes the exact allow rule to the
// workspace's local settings; a second process then runs the tool
// headless without asking.
func TestGatewayAlwaysWritesTheRule(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ev := &clientEvents{decision: gateway.DecisionAlways, changed: make(chan struct{}, 16)}
	cs, stderr := stdioGatewayAnswering(t, ctx, w, ev)
	// The gateway's own name for the tool (docs/gateway.md, Tool names: it may drop mcp__).
	pid := ""
	for name := range listNames(t, ctx, cs) {
		if strings.HasSuffix(name, "alpha__pid") {
			pid = name
		}
	}
	if txt, isErr := callText(t, ctx, cs, pid, nil); isErr {
		t.Fatalf("call answered always: %q\nstderr:\n%s", txt, stderr.String())
	}
	ev.mu.Lock()
	asked := append([]string(nil), ev.asked...)
	ev.mu.Unlock()
	settings := filepath.Join(w.sbHome, "settings.json")
	if len(asked) != 1 || !strings.Contains(asked[0], `always: write the allow rule "mcp__alpha__pid" to local settings `) ||
		!strings.Contains(asked[0], "(workspace "+w.ws+")") {
		t.Fatalf("questions %q", asked)
	}
	if allow, _, _ := settingsRules(t, settings, config.ProjectKey(w.ws)); !cmp.Equal(allow, []string{"mcp__alpha__pid"}) {
		b, _ := os.ReadFile(settings)
		t.Fatalf("local allow = %v:\n%s", allow, b)
	}
	// The same session is not asked again.
	if _, isErr := callText(t, ctx, cs, pid, nil); isErr {
		t.Errorf("second call failed")
	}
	ev.mu.Lock()
	n := len(ev.asked)
	ev.mu.Unlock()
	if n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
	// Another process, headless.
	out, err := w.command(t, "call", "mcp__alpha__pid").CombinedOutput()
	if err != nil {
		t.Fatalf("headless call after always: %v\n%s", err, out)
	}
	var js []map[string]any
	tools, err := w.command(t, "tools", "--json").Output()
	if err != nil || json.Unmarshal(tools, &js) != nil {
		t.Fatalf("tools --json: %v\n%s", err, tools)
	}
	for _, tool := range js {
		if tool["name"] == "mcp__alpha__pid" && (tool["permission"] != "allow" || tool["rule"] != "mcp__alpha__pid") {
			t.Errorf("tools --json after always: %v", tool)
		}
	}
}
