package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

type loadWorld struct {
	home, proj, managed string
}

func newLoadWorld(t *testing.T) *loadWorld {
	dir := t.TempDir()
	w := &loadWorld{home: filepath.Join(dir, "home", ".switchboard"), proj: filepath.Join(dir, "proj"), managed: filepath.Join(dir, "etc")}
	return w
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *loadWorld) opts() *LoadOptions {
	return &LoadOptions{Home: w.home, Workspace: w.proj, ManagedDir: w.managed, LookupEnv: func(string) (string, bool) { return "", false }}
}

func TestLoadScopes(t *testing.T) {
	w := newLoadWorld(t)
	write(t, UserSettingsPath(w.home), `{
		// user rules
		"permissions": {"allow": ["mcp__user_ok", "mcp__shared"], "deny": ["mcp__user_no"]},
		"projects": {
			"`+w.proj+`": {"permissions": {"allow": ["mcp__local_ok"]}},
			"/somewhere/else": {"permissions": {"allow": ["mcp__elsewhere"]}},
		},
	}`)
	write(t, ProjectSettingsPath(w.proj), `{"permissions": {"allow": ["mcp__repo_self", "mcp__user_ok"], "ask": ["mcp__shared"], "deny": ["mcp__repo_no"]}}`)
	write(t, ManagedSettingsPath(w.managed), `{"permissions": {"deny": ["mcp__local_ok__forbidden"]}}`)
	flag, err := config.LoadSettings(`{"permissions": {"allow": ["mcp__flag_ok"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	o := w.opts()
	o.Flag = flag
	p := Load(o)

	for _, tc := range []struct {
		server, tool string
		want         Action
		from         Scope
	}{
		{"user_ok", "x", Allow, ScopeUser},
		{"user_no", "x", Deny, ScopeUser},
		{"local_ok", "x", Allow, ScopeLocal},
		{"local_ok", "forbidden", Deny, ScopeManaged},
		{"elsewhere", "x", Ask, ""},
		{"flag_ok", "x", Allow, ScopeFlag},
		{"repo_self", "x", Ask, ""}, // project allow ignored
		{"repo_no", "x", Deny, ScopeProject},
		{"shared", "x", Ask, ScopeProject},
	} {
		d := p.Decide(call(tc.server, tc.tool))
		var from Scope
		if d.Rule != nil {
			from = d.Rule.Source.Scope
		}
		if d.Action != tc.want || from != tc.from {
			t.Errorf("%s/%s: %s from %q (%s), want %s from %q", tc.server, tc.tool, d.Action, from, d.Reason, tc.want, tc.from)
		}
	}
	var probs []string
	for _, pr := range p.Problems(nil) {
		probs = append(probs, pr.Rule.Text+": "+pr.Source.String())
	}
	want := []string{
		"mcp__repo_self: project settings " + ProjectSettingsPath(w.proj),
		"mcp__user_ok: project settings " + ProjectSettingsPath(w.proj),
	}
	if diff := cmp.Diff(want, probs); diff != "" {
		t.Errorf("Problems (-want +got):\n%s", diff)
	}
}

func TestLoadFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"broken project file", "project", `{"permissions": {"deny": [`, "line 1, column 27"},
		{"bad local entry", "local", "", `"projects" entry for`},
		{"unreadable user file", "user-dir", "", "cannot read it: it is a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newLoadWorld(t)
			user := `{"permissions": {"allow": ["mcp__github"]}}`
			switch tc.file {
			case "project":
				write(t, ProjectSettingsPath(w.proj), tc.text)
			case "managed":
				write(t, ManagedSettingsPath(w.managed), tc.text)
			case "local":
				user = `{"permissions": {"allow": ["mcp__github"]}, "projects": {"` + w.proj + `": {"permissions": {"allow": "mcp__x"}}}}`
			case "user-dir":
				if err := os.MkdirAll(UserSettingsPath(w.home), 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, ManagedSettingsPath(w.managed), `{"permissions": {"allow": ["mcp__github"]}}`)
			}
			if tc.file != "user-dir" {
				write(t, UserSettingsPath(w.home), user)
			}
			p := Load(w.opts())
			d := p.Decide(call("github", "merge"))
			if d.Action != Ask || !strings.Contains(d.Reason, "allow rules are off") || d.Suggest != "" {
				t.Errorf("Decide = %+v; want ask with allow rules off", d)
			}
			if h := d.Hint("x"); h != "fix the settings file named above, or run it where a person can answer" {
				t.Errorf("Hint = %q; want it to say to fix the file (a library hint names no CLI command)", h)
			}
			probs := p.Problems(nil)
			if len(probs) == 0 || !strings.Contains(probs[0].Message, tc.want) || probs[0].Rule != nil {
				t.Errorf("Problems = %+v; want a file problem mentioning %q", probs, tc.want)
			}
		})
	}
}

// A managed settings file that cannot be used denies every MCP call: its
// deny rules are unknown, and the person an ask would reach is not the
// administrator who may lift them. doctor names the file.
func TestLoadBrokenManagedFileDeniesAll(t *testing.T) {
	w := newLoadWorld(t)
	write(t, ManagedSettingsPath(w.managed), `{"permissions": "all"}`)
	write(t, UserSettingsPath(w.home), `{"permissions": {"allow": ["mcp__github"]}}`)
	p := Load(w.opts())
	d := p.Decide(call("github", "merge"))
	if d.Action != Deny || !strings.Contains(d.Reason, "managed settings") || d.Rule != nil {
		t.Errorf("Decide = %+v; want deny naming the managed settings", d)
	}
	if h := d.Hint("x"); h != "ask the administrator to fix the managed settings file" {
		t.Errorf("Hint = %q; want it to send the person to the administrator (a library hint names no CLI command)", h)
	}
	if q := p.With(RulesFrom(Source{Scope: ScopeFlag}, []string{"mcp__github"}, nil, nil)...); q.Decide(call("github", "merge")).Action != Deny {
		t.Errorf("a session allow rule lifted the deny of an unreadable managed file")
	}
	probs := p.Problems(nil)
	if len(probs) == 0 || !strings.Contains(probs[0].Message, `"permissions" must be an object`) || !strings.Contains(probs[0].Fix, "every MCP call is denied") {
		t.Errorf("Problems = %+v", probs)
	}
}

func TestLoadDefaults(t *testing.T) {
	w := newLoadWorld(t)
	write(t, ManagedSettingsPath(w.managed), `{"permissions": {"deny": ["mcp__x"]}}`)
	write(t, UserSettingsPath(w.home), `{"permissions": {"allow": ["mcp__y"]}}`)
	env := map[string]string{"SWITCHBOARD_MANAGED_DIR": w.managed, "SWITCHBOARD_HOME": w.home}
	p := Load(&LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if d := p.Decide(call("x", "t")); d.Action != Deny {
		t.Errorf("managed dir from $SWITCHBOARD_MANAGED_DIR not read: %+v", d)
	}
	if d := p.Decide(call("y", "t")); d.Action != Allow {
		t.Errorf("home from $SWITCHBOARD_HOME not read: %+v", d)
	}
	// Nothing anywhere: every call is asked for.
	empty := newLoadWorld(t)
	if d := Load(empty.opts()).Decide(call("y", "t")); d.Action != Ask || len(Load(empty.opts()).Problems(nil)) != 0 {
		t.Errorf("empty world: %+v", d)
	}
}

// Local rules follow the directory, not its spelling: an entry written
// under the real path applies when the workspace is opened through a
// symlink, and two entries for one directory both count (a deny in either
// wins). Another directory's entry never applies.
func TestLoadLocalThroughSymlink(t *testing.T) {
	w := newLoadWorld(t)
	if err := os.MkdirAll(w.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(w.proj)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(w.proj), "link")
	if err := os.Symlink(w.proj, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(filepath.Dir(w.proj), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, UserSettingsPath(w.home), `{"projects": {
		"`+real+`": {"permissions": {"allow": ["mcp__local_ok", "mcp__both"]}},
		"`+link+`": {"permissions": {"deny": ["mcp__both"]}},
		"`+other+`": {"permissions": {"allow": ["mcp__elsewhere"]}},
	}}`)
	for _, ws := range []string{link, real} {
		o := w.opts()
		o.Workspace = ws
		p := Load(o)
		for _, tc := range []struct {
			server string
			want   Action
		}{
			{"local_ok", Allow},
			{"both", Deny},
			{"elsewhere", Ask},
		} {
			if d := p.Decide(call(tc.server, "x")); d.Action != tc.want {
				t.Errorf("workspace %s: %s is %s (%s), want %s", ws, tc.server, d.Action, d.Reason, tc.want)
			}
		}
	}
}
