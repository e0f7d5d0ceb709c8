package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// linkedWorld is an rtWorld whose project is also reached through the
// symbolic link alias (work/alias → work/proj).
func linkedWorld(t *testing.T) (*rtWorld, string) {
	t.Helper()
	w := newRTWorld(t)
	alias := filepath.Join(w.work, "alias")
	if err := os.Symlink(w.proj, alias); err != nil {
		t.Skipf("cannot make symbolic links here: %v", err)
	}
	return w, alias
}

// runIn runs a command line with cwd as the working directory.
func (w *rtWorld) runIn(cwd string, args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	f, _, out, errOut := w.factory(false)
	f.Cwd = cwd
	code = Run(context.Background(), f, args)
	return out.String(), errOut.String(), code
}

// TestLocalScopeTwoSpellings: a user file holding the workspace under two
// spellings (an older entry under the link, a newer one under the target)
// loses nothing: list shows the servers of both and says which entry to
// keep; add edits the entry that holds the name; remove clears every entry.
func TestLocalScopeTwoSpellings(t *testing.T) {
	w, alias := linkedWorld(t)
	user := filepath.Join(w.sb, "mcp.json")
	w.writeJSON(user, map[string]any{"projects": map[string]any{
		alias:  map[string]any{"mcpServers": map[string]any{"a": map[string]any{"command": "a-link"}, "c": map[string]any{"command": "c"}}},
		w.proj: map[string]any{"mcpServers": map[string]any{"a": map[string]any{"command": "a-target"}, "b": map[string]any{"command": "b"}}},
	}})

	out, errOut, code := w.runIn(alias, "mcp", "list")
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"a\tstdio\tlocal\tyes\ta-link\t", "b\tstdio\tlocal\tyes\tb\t", "c\tstdio\tlocal\tyes\tc\t"} {
		if !strings.Contains(out, want) {
			t.Errorf("list through the link lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "warning: ") || !strings.Contains(errOut, `"`+alias+`" and "`+w.proj+`" are two entries for the same workspace`) {
		t.Errorf("no warning naming both keys:\n%s", errOut)
	}
	out, _, _ = w.runIn(w.proj, "mcp", "list")
	if !strings.Contains(out, "a\tstdio\tlocal\tyes\ta-target\t") {
		t.Errorf("through the target, its own entry wins:\n%s", out)
	}

	// c is only in the link's entry: replaced there, not added twice.
	if _, errOut, code := w.runIn(w.proj, "mcp", "add", "--force", "c", "--", "c2"); code != 0 {
		t.Fatalf("add --force c: exit %d\n%s", code, errOut)
	}
	for _, key := range []string{alias, w.proj} {
		has, err := config.HasServer(user, config.LocalObjPath(key), "c")
		if want := key == alias; err != nil || has != want {
			t.Errorf("c under %s: %v, %v; want %v", key, has, err, want)
		}
	}
	// remove: no spelling keeps a.
	out, errOut, code = w.runIn(alias, "mcp", "remove", "a")
	if code != 0 || !strings.Contains(out, `Removed server "a" from local scope`) {
		t.Fatalf("remove a: exit %d\n%s%s", code, out, errOut)
	}
	for _, key := range []string{alias, w.proj} {
		if has, err := config.HasServer(user, config.LocalObjPath(key), "a"); has || err != nil {
			t.Errorf("a left under %s (%v)", key, err)
		}
	}
	if out, _, _ := w.runIn(w.proj, "mcp", "list"); strings.Contains(out, "a\t") {
		t.Errorf("a is still listed:\n%s", out)
	}
}

// TestLocalSettingsThroughSymlink: the per-workspace entries of the user
// settings (project server pre-approvals, private networks) apply however
// the workspace is spelled, and only to that directory.
func TestLocalSettingsThroughSymlink(t *testing.T) {
	byName := map[string]any{"enabledMcpjsonServers": []string{"repo"}}
	reject := map[string]any{"disabledMcpjsonServers": []string{"repo"}}
	for _, tc := range []struct {
		name     string
		projects func(w *rtWorld, alias string) map[string]any
		via      func(w *rtWorld, alias string) string
		want     string
	}{
		{"keyed by the target, entered through the link",
			func(w *rtWorld, _ string) map[string]any { return map[string]any{w.proj: byName} },
			func(_ *rtWorld, alias string) string { return alias }, "connected"},
		{"keyed by the link, entered through the target",
			func(_ *rtWorld, alias string) map[string]any { return map[string]any{alias + "/": byName} },
			func(w *rtWorld, _ string) string { return w.proj }, "connected"},
		{"a rejection under either spelling wins",
			func(w *rtWorld, alias string) map[string]any { return map[string]any{w.proj: byName, alias: reject} },
			func(w *rtWorld, _ string) string { return w.proj }, "disabled"},
		{"another directory's entry does not apply",
			func(w *rtWorld, _ string) map[string]any { return map[string]any{w.work: byName} },
			func(_ *rtWorld, alias string) string { return alias }, "needs-approval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, alias := linkedWorld(t)
			w.userServers(map[string]any{"mine": w.server("echo")})
			w.writeJSON(filepath.Join(w.proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"repo": w0server()}})
			w.writeJSON(filepath.Join(w.sb, UserSettingsFile), map[string]any{"projects": tc.projects(w, alias)})
			states, reasons := statusStates(t, w, "--workspace", tc.via(w, alias))
			if states["repo"] != tc.want {
				t.Errorf("repo is %s (%s), want %s", states["repo"], reasons["repo"], tc.want)
			}
		})
	}
}

func TestAllowPrivateNetworkThroughSymlink(t *testing.T) {
	on := map[string]any{config.AllowPrivateNetworkKey: true}
	w, alias := linkedWorld(t)
	other := filepath.Join(w.work, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	f, _, _, _ := w.factory(false)
	for _, tc := range []struct {
		key, workspace string
		want           bool
	}{
		{w.proj, alias, true},
		{alias, w.proj, true},
		{alias, other, false},
		{other, alias, false},
	} {
		w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"projects": map[string]any{tc.key: on}})
		if got := f.allowPrivateNetwork(tc.workspace); got != tc.want {
			t.Errorf("entry %s, workspace %s: allowPrivateNetwork = %v, want %v", tc.key, tc.workspace, got, tc.want)
		}
	}
}

// TestInstallGatewayLocalThroughSymlink: Claude Code's own entry for the
// directory, under whichever spelling it keeps, is the one edited.
func TestInstallGatewayLocalThroughSymlink(t *testing.T) {
	w, alias := linkedWorld(t)
	claude := filepath.Join(w.home, ".claude.json")
	w.writeJSON(claude, map[string]any{"projects": map[string]any{
		alias: map[string]any{"allowedTools": []string{}, "mcpServers": map[string]any{}},
	}})
	if _, errOut, code := w.runIn(w.proj, "mcp", "install-gateway", "--client", "claude-code", "--scope", "local", "--command", "/opt/sb/switchboard"); code != 0 {
		t.Fatalf("install-gateway: exit %d\n%s", code, errOut)
	}
	projects, _ := readJSONC(t, claude)["projects"].(map[string]any)
	if len(projects) != 1 {
		t.Fatalf("projects = %v, want the one entry", projects)
	}
	entry, _ := projects[alias].(map[string]any)
	servers, _ := entry["mcpServers"].(map[string]any)
	if servers["switchboard"] == nil || entry["allowedTools"] == nil {
		t.Errorf("the entry under %s = %v, want the gateway added beside its other keys", alias, entry)
	}
}

// TestStatusNamesLocalEntry: the status footer names the "projects" entry
// in use, spelled as the file spells it, when the workspace is entered
// through a link.
func TestStatusNamesLocalEntry(t *testing.T) {
	w, alias := linkedWorld(t)
	w.writeJSON(filepath.Join(w.sb, "mcp.json"), map[string]any{"projects": map[string]any{
		w.proj: map[string]any{"mcpServers": map[string]any{"echo": w.server("echo")}},
	}})
	f, _, out, errOut := w.factory(true)
	f.Cwd = alias
	if code := Run(context.Background(), f, []string{"status"}); code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	if want := `under "projects" → "` + w.proj + `"`; !strings.Contains(out.String(), want) {
		t.Errorf("status lacks %s:\n%s", want, out)
	}
	if !strings.Contains(out.String(), "connected") {
		t.Errorf("the local server did not start through the link:\n%s", out)
	}
}
