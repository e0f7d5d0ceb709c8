package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// realTempDir is t.TempDir with its own links resolved (macOS's /var is
// /private/var), so that expected keys can be spelled exactly.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make symbolic links here: %v", err)
	}
}

func TestProjectKey(t *testing.T) {
	tmp := realTempDir(t)
	data := filepath.Join(tmp, "data", "proj")
	mkdirs(t, data)
	link := filepath.Join(tmp, "proj")
	symlink(t, data, link)
	for _, tc := range []struct{ in, want string }{
		{data, data},
		{data + "/", data},
		{link, data},
		{link + "/sub/..", data},
		{filepath.Join(tmp, "gone") + "/", filepath.Join(tmp, "gone")}, // unresolvable: cleaned only
		{filepath.Join(link, "gone"), filepath.Join(link, "gone")},     // a missing child: not resolved either
		{"relative/dir", ""},
		{"", ""},
	} {
		if got := ProjectKey(tc.in); got != tc.want {
			t.Errorf("ProjectKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMatchProjectKeys(t *testing.T) {
	tmp := realTempDir(t)
	data := filepath.Join(tmp, "data", "proj")
	other := filepath.Join(tmp, "data", "other")
	mkdirs(t, data, other)
	link := filepath.Join(tmp, "proj")    // → data
	link2 := filepath.Join(tmp, "proj2")  // → data
	toOther := filepath.Join(tmp, "oth")  // → other
	dangling := filepath.Join(tmp, "dng") // → nowhere
	symlink(t, data, link)
	symlink(t, data, link2)
	symlink(t, other, toOther)
	symlink(t, filepath.Join(tmp, "nowhere"), dangling)
	gone := filepath.Join(tmp, "gone")

	for _, tc := range []struct {
		name      string
		keys      []string
		workspace string
		want      []string
	}{
		{"resolved key, reached through a link", []string{other, data}, link, []string{data}},
		{"link key, reached through the target", []string{link, other}, data, []string{link}},
		{"link key, reached through another link", []string{link}, link2, []string{link}},
		{"exact, then cleaned, then resolved", []string{data, link + "/", link}, link, []string{link, link + "/", data}},
		{"the resolved path before other links", []string{link, data}, link2, []string{data, link}},
		{"a key with ..", []string{filepath.Join(tmp, "data", "x", "..", "proj")}, link, []string{filepath.Join(tmp, "data", "x", "..", "proj")}},
		{"ties: the later key first", []string{link, link2}, data, []string{link2, link}},
		{"a repeated key once", []string{data, other, data}, data, []string{data}},
		{"other directories never", []string{other, toOther, dangling, gone, "relative", "", "."}, data, nil},
		{"a missing workspace: its own spelling only", []string{gone + "/", dangling, data, gone}, gone, []string{gone, gone + "/"}},
		{"a dangling link: its own spelling only", []string{filepath.Join(tmp, "nowhere"), dangling}, dangling, []string{dangling}},
		{"no workspace", []string{data}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MatchProjectKeys(tc.keys, tc.workspace)); diff != "" {
				t.Errorf("MatchProjectKeys(%q, %q) (-want +got):\n%s", tc.keys, tc.workspace, diff)
			}
		})
	}
}

// linkedFixture is a fixture whose project is also reached through the
// symbolic link alias (dir/alias → dir/work/proj).
func linkedFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	real, err := filepath.EvalSymlinks(f.proj)
	if err != nil {
		t.Fatal(err)
	}
	f.proj = real
	alias := filepath.Join(f.dir, "alias")
	symlink(t, f.proj, alias)
	return f, alias
}

func TestLoadLocalThroughSymlink(t *testing.T) {
	t.Run("written under the target, read through the link", func(t *testing.T) {
		f, alias := linkedFixture(t)
		f.write(filepath.Join(f.home, "mcp.json"), `{"projects": {"`+f.proj+`": {"mcpServers": {"l": {"command": "x"}}}}}`)
		o := f.opts()
		o.Cwd = alias // os.Getwd may return $PWD's spelling
		r := f.load(o)
		if r.Workspace != alias {
			t.Fatalf("workspace = %q, want %q (the root keeps the spelling it was reached by)", r.Workspace, alias)
		}
		if diff := cmp.Diff([]row{{"l", ScopeLocal, TrustUser, Available, "", nil, "x"}}, rows(r)); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
		if len(r.Diagnostics) > 0 {
			t.Errorf("diagnostics: %v", r.Diagnostics)
		}
	})
	t.Run("written under the link, read through the target", func(t *testing.T) {
		f, alias := linkedFixture(t)
		f.write(filepath.Join(f.home, "mcp.json"), `{"projects": {"`+alias+`/": {"mcpServers": {"l": {"command": "x"}}}}}`)
		if diff := cmp.Diff([]row{{"l", ScopeLocal, TrustUser, Available, "", nil, "x"}}, rows(f.load(f.opts()))); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
	t.Run("--workspace through the link", func(t *testing.T) {
		f, alias := linkedFixture(t)
		f.write(filepath.Join(f.home, "mcp.json"), `{"projects": {"`+f.proj+`": {"mcpServers": {"l": {"command": "l"}}, "disabledMcpServers": ["u"]}}, "mcpServers": {"u": {"command": "u"}}}`)
		o := f.opts()
		o.Cwd = f.dir
		o.Workspace = alias
		if diff := cmp.Diff([]row{
			{"l", ScopeLocal, TrustUser, Available, "", nil, "l"},
			{"u", ScopeUser, TrustUser, Disabled, "disabledMcpServers in " + filepath.Join(f.home, "mcp.json"), nil, "u"},
		}, rows(f.load(o))); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
}

func TestLoadLocalTwoSpellings(t *testing.T) {
	f, alias := linkedFixture(t)
	user := f.write(filepath.Join(f.home, "mcp.json"), `{
  "projects": {
    "`+f.proj+`": {"mcpServers": {"a": {"command": "from-target"}, "b": {"command": "b"}}},
    "`+alias+`": {"mcpServers": {"a": {"command": "from-alias"}, "c": {"command": "c"}}}
  }
}`)
	for _, tc := range []struct {
		cwd, first, second string
		line               int
	}{
		// The spelling the workspace was reached by wins.
		{alias, alias, f.proj, 3},
		{f.proj, f.proj, alias, 4},
	} {
		t.Run(filepath.Base(tc.cwd), func(t *testing.T) {
			o := f.opts()
			o.Cwd = tc.cwd
			r := f.load(o)
			want := []row{
				{"a", ScopeLocal, TrustUser, Available, "", nil, "from-" + map[string]string{alias: "alias", f.proj: "target"}[tc.cwd]},
				{"b", ScopeLocal, TrustUser, Available, "", nil, "b"},
				{"c", ScopeLocal, TrustUser, Available, "", nil, "c"},
			}
			if diff := cmp.Diff(want, rows(r)); diff != "" {
				t.Errorf("servers: nothing may be lost (-want +got):\n%s", diff)
			}
			if len(r.Diagnostics) != 1 {
				t.Fatalf("diagnostics = %v, want one warning", r.Diagnostics)
			}
			d := r.Diagnostics[0]
			if d.Severity != SeverityWarning || d.File != user || d.Line != tc.line {
				t.Errorf("diagnostic at %s:%d (%s), want a warning at %s:%d", d.File, d.Line, d.Severity, user, tc.line)
			}
			for _, k := range []string{tc.first, tc.second} {
				if !strings.Contains(d.Message, `"`+k+`"`) {
					t.Errorf("diagnostic %q does not name %s", d.Message, k)
				}
			}
			if !strings.Contains(d.Fix, "move what \""+tc.second+"\" holds into \""+tc.first+"\"") {
				t.Errorf("fix = %q", d.Fix)
			}
		})
	}
}

// A link repointed at another directory takes no entry along: keys are
// resolved when read, and the entry written through the link holds the
// old target's resolved path.
func TestLoadLocalRepointedLink(t *testing.T) {
	f, alias := linkedFixture(t)
	second := filepath.Join(f.dir, "work", "second")
	mkdirs(t, filepath.Join(second, ".git"))
	f.write(filepath.Join(f.home, "mcp.json"), `{"projects": {"`+f.proj+`": {"mcpServers": {"old": {"command": "x"}}}}}`)
	o := f.opts()
	o.Cwd = alias
	if got := rows(f.load(o)); len(got) != 1 {
		t.Fatalf("before repointing: servers = %v, want old", got)
	}
	if err := os.Remove(alias); err != nil {
		t.Fatal(err)
	}
	symlink(t, second, alias)
	if got := f.load(o); len(got.Servers) != 0 || len(got.Diagnostics) != 0 {
		t.Errorf("through the repointed link: servers = %v, diagnostics = %v; want none", rows(got), got.Diagnostics)
	}
	if got := rows(f.load(f.opts())); len(got) != 1 {
		t.Errorf("the old target keeps its entry: servers = %v", got)
	}

	// An entry keyed by the link's own path names whatever the link
	// points to when read, as that path always did.
	f.write(filepath.Join(f.home, "mcp.json"), `{"projects": {"`+alias+`": {"mcpServers": {"via-link": {"command": "x"}}}}}`)
	o.Cwd = second
	if got := rows(f.load(o)); len(got) != 1 || got[0].Name != "via-link" {
		t.Errorf("the new target, reached directly: servers = %v, want via-link", got)
	}
	if got := f.load(f.opts()); len(got.Servers) != 0 {
		t.Errorf("the old target: servers = %v, want none", rows(got))
	}
}

func TestLocalKeys(t *testing.T) {
	tmp := realTempDir(t)
	data := filepath.Join(tmp, "data")
	mkdirs(t, data)
	link := filepath.Join(tmp, "link")
	symlink(t, data, link)
	path := filepath.Join(tmp, "mcp.json")

	if keys, err := LocalKeys(path, link); keys != nil || err != nil {
		t.Errorf("missing file: %q, %v; want nothing", keys, err)
	}
	for _, src := range []string{"", "  \n", `[]`, `{"mcpServers": {}}`, `{"projects": []}`} {
		os.WriteFile(path, []byte(src), 0o600)
		if keys, err := LocalKeys(path, link); keys != nil || err != nil {
			t.Errorf("%q: %q, %v; want nothing", src, keys, err)
		}
	}
	os.WriteFile(path, []byte(`{"projects": {
  // comments are fine
  "`+link+`": {},
  "/elsewhere": {},
  "`+data+`": {},
}}`), 0o600)
	keys, err := LocalKeys(path, data)
	if diff := cmp.Diff([]string{data, link}, keys); diff != "" || err != nil {
		t.Errorf("LocalKeys: %v (-want +got):\n%s", err, diff)
	}
	os.WriteFile(path, []byte(`{"projects": {`), 0o600)
	_, err = LocalKeys(path, data)
	var d Diagnostic
	if !errors.As(err, &d) || d.File != path || d.Line == 0 {
		t.Errorf("a broken file: err = %v, want a Diagnostic with its position", err)
	}
}
