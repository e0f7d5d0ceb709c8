package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func diagText(ds []Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.Error() + "\n")
	}
	return b.String()
}

func TestProfilesParseAndInclude(t *testing.T) {
	user := `{
  // the reviewer
  "profiles": {
    "review": {"servers": ["github", "docs-*"], "disabledTools": ["*write*"], "permissions": {"deny": ["mcp__github__merge"]}}
  }
}`
	up, d := ParseProfiles("user.json", []byte(user), SettingsUser, "")
	if len(d) > 0 {
		t.Fatal(diagText(d))
	}
	repo := `{"profiles": {"sub": {"extends": ["review"], "servers": ["docs-*"]}}}`
	rp, d := ParseProfiles("repo.json", []byte(repo), SettingsProject, "")
	if len(d) > 0 {
		t.Fatal(diagText(d))
	}
	ps, d := MergeProfiles(up, rp)
	if len(d) > 0 {
		t.Fatal(diagText(d))
	}
	if got := ps.Including("docs-api"); !slices.Equal(got, []string{"review", "sub"}) {
		t.Errorf("Including(docs-api) = %v", got)
	}
	if got := ps.Including("github"); !slices.Equal(got, []string{"review"}) {
		t.Errorf("Including(github) = %v: sub must narrow review", got)
	}
	if got := ps.Including("fs"); got != nil {
		t.Errorf("Including(fs) = %v", got)
	}
	if h, _ := ps["sub"].Tools.Hidden("write_file"); !h {
		t.Error("sub must inherit review's disabledTools")
	}
	if h, _ := ps["sub"].Tools.Hidden("read_file"); h {
		t.Error("read_file hidden")
	}
	if !slices.Equal(ps["sub"].Deny, []string{"mcp__github__merge"}) {
		t.Errorf("sub deny = %v", ps["sub"].Deny)
	}
}

func TestProfilesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
		scope            SettingsScope
		want             string
	}{
		{"duplicate", "u.json", "{\"profiles\": {\n \"a\": {},\n \"a\": {}}}", SettingsUser, "u.json:3:2: field \"profiles.a\": profile defined twice"},
		{"empties by glob", "u.json", `{"profiles": {"a": {"disabledTools": ["*"]}}}`, SettingsUser, `u.json:1:39: field "profiles.a.disabledTools": "*" hides every tool`},
		{"empty enabled", "u.json", `{"profiles": {"a": {"enabledTools": []}}}`, SettingsUser, "hide every tool"},
		{"empty servers", "u.json", `{"profiles": {"a": {"servers": []}}}`, SettingsUser, "includes nothing"},
		{"allow", "r.json", `{"profiles": {"a": {"permissions": {"allow": ["mcp__x"]}}}}`, SettingsProject, "r.json:1:37: field \"profiles.a.permissions.allow\": a profile can only tighten"},
		{"bad name", "u.json", `{"profiles": {"a b": {}}}`, SettingsUser, "rename it"},
		// A path segment of its own at /mcp/<profile>: the docs allow no '.'.
		{"dot dot", "r.json", `{"profiles": {"..": {}}}`, SettingsProject, `r.json:1:15: field "profiles..."`},
		{"dotted", "u.json", `{"profiles": {"a.b": {}}}`, SettingsUser, `a profile name may hold only letters, digits, '_' and '-' (fix: rename it, e.g. "a-b")`},
		{"defer not a pattern", "u.json", `{"profiles": {"a": {"defer": ["github"]}}}`, SettingsUser, `u.json:1:31: field "profiles.a.defer": "github": not an MCP tool pattern`},
		{"noDefer star inside", "u.json", `{"profiles": {"a": {"noDefer": ["mcp__x", "mcp__x__a*"]}}}`, SettingsUser, `u.json:1:43: field "profiles.a.noDefer": "mcp__x__a*": * may only replace a whole last segment`},
		{"defer not strings", "u.json", `{"profiles": {"a": {"defer": "mcp__x"}}}`, SettingsUser, `field "profiles.a.defer": must be an array of strings`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, d := ParseProfiles(tc.file, []byte(tc.data), tc.scope, "")
			if !strings.Contains(diagText(d), tc.want) {
				t.Fatalf("diagnostics %q, want %q", diagText(d), tc.want)
			}
			for _, p := range ps {
				if p.Name == "a" {
					t.Errorf("profile %q kept despite the error", p.Name)
				}
			}
		})
	}
}

func TestProfilesDeferral(t *testing.T) {
	data := `{"profiles": {
  "main": {"defer": ["mcp__github__*", "mcp__*"], "noDefer": ["mcp__time__now"]},
  "sub": {"extends": ["main"], "noDefer": ["mcp__github__search"]}}}`
	p, d := ParseProfiles("u.json", []byte(data), SettingsUser, "")
	if len(d) > 0 {
		t.Fatal(diagText(d))
	}
	ps, d := MergeProfiles(p)
	if len(d) > 0 {
		t.Fatal(diagText(d))
	}
	// One layer per profile, its own first: the first that speaks for a
	// tool decides it, so main's defer cannot override sub's noDefer, nor
	// main's noDefer a defer of sub's.
	want := []DeferLayer{
		{Profile: "sub", NoDefer: []string{"mcp__github__search"}},
		{Profile: "main", Defer: []string{"mcp__github__*", "mcp__*"}, NoDefer: []string{"mcp__time__now"}},
	}
	if d := cmp.Diff(want, ps["sub"].Deferral); d != "" {
		t.Errorf("sub deferral (-want +got):\n%s", d)
	}
	if got := ps["sub"].NoDefer; !slices.Equal(got, []string{"mcp__github__search"}) {
		t.Errorf("sub noDefer = %v, want its own as written", got)
	}
	for _, ok := range []string{"mcp__*", "MCP__a", "mcp__a.b__c-d", "mcp__a__*"} {
		if msg := toolPatternProblem(ok); msg != "" {
			t.Errorf("%s: %s", ok, msg)
		}
	}
	for _, bad := range []string{"", "mcp_", "mcp__", "mcp___a", "mcp__a__", "mcp__a*", "mcp__a__b c", "Bash(x)"} {
		if toolPatternProblem(bad) == "" {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestProfilesMergeErrors(t *testing.T) {
	parse := func(file, data string, scope SettingsScope) []Profile {
		t.Helper()
		p, d := ParseProfiles(file, []byte(data), scope, "")
		if len(d) > 0 {
			t.Fatal(diagText(d))
		}
		return p
	}
	user := parse("u.json", `{"profiles": {"review": {"servers": ["github"]}, "x": {"extends": ["y"]}, "y": {"extends": ["x"]}, "z": {"extends": ["reveiw"]}}}`, SettingsUser)
	repo := parse("r.json", "{\n\"profiles\": {\"review\": {\"servers\": [\"*\"]}}}", SettingsProject)
	ps, d := MergeProfiles(user, repo)
	text := diagText(d)
	for _, want := range []string{
		`r.json:2:14: field "profiles.review": a repository may not redefine profile "review" of user settings`,
		"extends form a cycle",
		`extends unknown profile "reveiw" (fix: define it, or remove it from extends (did you mean "review"?))`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diagnostics\n%s\nlack %q", text, want)
		}
	}
	if got := ps.Including("fs"); got != nil {
		t.Errorf("the repository widened review: fs in %v", got)
	}
	for _, n := range []string{"x", "y", "z"} {
		if _, ok := ps[n]; ok {
			t.Errorf("profile %s kept despite its extends error", n)
		}
	}
	// The other order of layers: the trusted profile wins still.
	ps, d = MergeProfiles(repo, user)
	if !strings.Contains(diagText(d), "may not redefine") || ps.Including("fs") != nil {
		t.Errorf("repo first: %s %v", diagText(d), ps.Including("fs"))
	}
}

// TestProfilesDefinedTwice: a profile defined twice is dropped, both
// definitions (which one was meant is not known), whether the two are in
// one file, in the user file and its "projects" entry, or in two layers;
// a profile that extends it is dropped too. A repository's redefinition
// of a trusted profile is not this: the trusted one stays.
func TestProfilesDefinedTwice(t *testing.T) {
	parse := func(file, data string, scope SettingsScope, workspace string) ([]Profile, string) {
		t.Helper()
		p, d := ParseProfiles(file, []byte(data), scope, workspace)
		return p, diagText(d)
	}
	one, text := parse("u.json", "{\"profiles\": {\n \"a\": {\"servers\": [\"x\"]},\n \"b\": {},\n \"a\": {\"servers\": [\"y\"]}}}", SettingsUser, "")
	if !strings.Contains(text, `u.json:4:2: field "profiles.a": profile defined twice (first at u.json:2:2); neither definition is used`) {
		t.Errorf("one file: diagnostics %q", text)
	}
	if len(one) != 1 || one[0].Name != "b" {
		t.Errorf("one file: kept %+v, want b only", one)
	}

	local, _ := parse("u.json", `{"profiles": {"a": {"servers": ["x"]}, "c": {"extends": ["a"]}}, "projects": {"/w": {"profiles": {"a": {"servers": ["y"]}}}}}`, SettingsUser, "/w")
	flag, _ := parse("--settings", `{"profiles":{"b":{"servers":["y"]}}}`, SettingsFlag, "")
	user, _ := parse("u.json", `{"profiles": {"b": {"servers": ["x"]}}}`, SettingsUser, "")
	for _, tc := range []struct {
		name   string
		layers [][]Profile
		drop   string
		want   []string
	}{
		{"user and local", [][]Profile{local}, "a", []string{
			`u.json:1:99: field "profiles.a": profile defined twice (also at u.json:1:15); neither definition is used`,
			`field "profiles.c.extends": extends profile "a", which is defined twice (first at u.json:1:15) and so dropped`}},
		{"flag and user", [][]Profile{flag, user}, "b", []string{
			`u.json:1:15: field "profiles.b": profile defined twice (also at --settings:1:14); neither definition is used`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, d := MergeProfiles(tc.layers...)
			text := diagText(d)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("diagnostics\n%s\nlack %q", text, w)
				}
			}
			if p, ok := ps[tc.drop]; ok {
				t.Errorf("profile %q kept (servers %v)", tc.drop, p.Servers)
			}
			if _, ok := ps["c"]; ok {
				t.Error(`profile "c" kept: it extends a dropped one`)
			}
			if dd := DroppedProfile(tc.drop, d); dd == nil || !strings.Contains(dd.Message, "defined twice") {
				t.Errorf("DroppedProfile(%q) = %v", tc.drop, dd)
			}
		})
	}
}

// TestProfilesManagedWins: a name the managed settings define is the
// administrator's: a user's (or --settings', or a "projects" entry's)
// definition of it is ignored with a warning where it is written, and
// the managed one applies, whichever layer comes first; a repository's is
// refused as before. Defining the name cannot drop the managed profile,
// not even when an error drops the managed definition itself.
func TestProfilesManagedWins(t *testing.T) {
	parse := func(file, data string, scope SettingsScope, workspace string) []Profile {
		t.Helper()
		p, d := ParseProfiles(file, []byte(data), scope, workspace)
		if len(d) > 0 && scope != SettingsManaged {
			t.Fatal(diagText(d))
		}
		return p
	}
	managed := parse("m.json", `{"profiles": {"review": {"servers": ["github"], "disabledTools": ["*write*"]}}}`, SettingsManaged, "")
	user := parse("u.json", `{"profiles": {"review": {"servers": ["*"]}, "mine": {"extends": ["review"]}}, "projects": {"/w": {"profiles": {"review": {}}}}}`, SettingsUser, "/w")
	flag := parse("--settings", `{"profiles": {"review": {}}}`, SettingsFlag, "")
	repo := parse("r.json", `{"profiles": {"review": {}}}`, SettingsProject, "")
	for _, layers := range [][][]Profile{{managed, flag, user, repo}, {repo, user, flag, managed}} {
		ps, d := MergeProfiles(layers...)
		text := diagText(d)
		for _, want := range []string{
			`u.json:1:15: field "profiles.review": profile "review" is defined by the managed settings (m.json:1:15), which win: this user definition is ignored (fix: give yours another name (it may "extends": ["review"] to narrow the managed one))`,
			`field "profiles.review": profile "review" is defined by the managed settings (m.json:1:15), which win: this local definition is ignored`,
			`--settings:1:15: field "profiles.review": profile "review" is defined by the managed settings (m.json:1:15), which win: this flag definition is ignored`,
			`r.json:1:15: field "profiles.review": a repository may not redefine profile "review" of managed settings`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("diagnostics\n%s\nlack %q", text, want)
			}
		}
		for _, dg := range d {
			if dg.Severity == SeverityError && !strings.HasPrefix(dg.Position.File, "r.json") {
				t.Errorf("an error, want warnings but the repository's: %s", dg.Error())
			}
		}
		p, ok := ps["review"]
		if !ok || p.Scope != SettingsManaged || p.IncludesServer("fs") || !p.IncludesServer("github") {
			t.Errorf("review = %+v (ok %v), want the managed definition", p, ok)
		}
		if m, ok := ps["mine"]; !ok || m.IncludesServer("fs") {
			t.Errorf("mine = %+v (ok %v), want it to extend the managed review", m, ok)
		}
		if dd := DroppedProfile("review", d); dd != nil && !strings.HasPrefix(dd.Position.File, "r.json") {
			t.Errorf("DroppedProfile(review) = %v, want none but the repository's refusal", dd)
		}
	}
	// As SettingsStack.Profiles reads them: with a stub of each dropped.
	broken, _ := parseProfiles("m.json", []byte(`{"profiles": {"review": {"servers": []}}}`), SettingsManaged, "")
	plain := parse("u.json", `{"profiles": {"review": {"servers": ["*"]}}}`, SettingsUser, "")
	ps, d := MergeProfiles(broken, plain)
	if _, ok := ps["review"]; ok {
		t.Errorf("the user's review applies where the managed one is broken:\n%s", diagText(d))
	}
}

func TestProfilesCheck(t *testing.T) {
	p, _ := ParseProfiles("u.json", []byte(`{"profiles": {"review": {"servers": ["githb", "docs-*", "fs"]}}}`), SettingsUser, "")
	ps, _ := MergeProfiles(p)
	diags := ps.Check([]string{"github", "fs"})
	text := diagText(diags)
	for _, want := range []string{`profile names server "githb", which is not configured here (fix: did you mean "github"?)`, `pattern "docs-*" matches no server configured here`} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q", text, want)
		}
	}
	// A typo is an error; a name far from every configured one may be
	// another workspace's server: a warning.
	for _, d := range diags {
		typo := strings.Contains(d.Message, "githb")
		if want := map[bool]Severity{true: SeverityError, false: SeverityWarning}[typo]; d.Severity != want {
			t.Errorf("%s: severity %v, want %v", d.Message, d.Severity, want)
		}
	}
	if strings.Contains(text, `"fs"`) {
		t.Errorf("fs exists: %s", text)
	}
}

func TestProfilesLocal(t *testing.T) {
	data := `{"projects": {"/w": {"profiles": {"loc": {"servers": ["a"]}}}}, "profiles": {"top": {}}}`
	p, d := ParseProfiles("u.json", []byte(data), SettingsUser, "/w")
	if len(d) > 0 {
		t.Fatal(diagText(d))
	}
	if len(p) != 2 || p[0].Name != "top" || p[1].Name != "loc" || p[1].Scope != SettingsLocal {
		t.Fatalf("profiles %+v", p)
	}
}

func TestSettingsStackProfiles(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, UserSettingsPath(home), `{"profiles": {"review": {"servers": ["github"]}},
 "projects": {"`+ws+`": {"profiles": {"mine": {"servers": ["fs"]}}}}}`)
	writeFile(t, ProjectSettingsPath(ws), "{\n  \"profiles\": {\"review\": {}, \"narrow\": {\"extends\": [\"review\"], \"disabledTools\": [\"*write*\"]}}}")
	st := ReadSettings(SettingsPlaces{Home: home, Workspace: ws, Flag: Settings{"profiles": map[string]any{"flagged": map[string]any{"servers": []any{"x"}}}}})
	ps, d := st.Profiles()
	if got := ps.Names(); !slices.Equal(got, []string{"flagged", "mine", "narrow", "review"}) {
		t.Errorf("names %v", got)
	}
	if ps["mine"].Scope != SettingsLocal || ps["narrow"].Scope != SettingsProject {
		t.Errorf("scopes %v %v", ps["mine"].Scope, ps["narrow"].Scope)
	}
	if len(d) != 1 || !strings.Contains(d[0].Error(), ProjectSettingsPath(ws)+":2:16:") || !strings.Contains(d[0].Error(), "may not redefine") {
		t.Errorf("diagnostics: %s", diagText(d))
	}
	if ps.Including("other") != nil {
		t.Errorf("the repository's empty review widened it: %v", ps.Including("other"))
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseProfiles: any document parses without panicking, every
// diagnostic names a position, and what is kept merges without panicking.
func FuzzParseProfiles(f *testing.F) {
	f.Add([]byte(`{"profiles": {"a": {"servers": ["x*"], "extends": ["b"], "disabledTools": ["*"]}, "b": {"extends": ["a"]}}}`))
	f.Add([]byte(`{"profiles": {"a": {"permissions": {"allow": ["x"], "deny": [1]}, "enabledTools": []}}, "projects": {"/w": {"profiles": []}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, diags := ParseProfiles("f.json", data, SettingsProject, "/w")
		for _, d := range diags {
			if d.Line == 0 {
				t.Fatalf("diagnostic without a position: %s", d.Error())
			}
		}
		merged, _ := MergeProfiles(ps, ps)
		for _, n := range merged.Names() {
			merged[n].IncludesServer("x")
		}
	})
}

// TestProfilesDocExample parses the example of docs/configuration.md,
// Profiles: what a newcomer copies must be a profile that is used, not
// one dropped for a pattern the docs wrote.
func TestProfilesDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## Profiles\n")
	_, block, ok := strings.Cut(section, "```jsonc\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("no jsonc example under ## Profiles in docs/configuration.md")
	}
	p, d := ParseProfiles("configuration.md", []byte(block), SettingsUser, "")
	ps, md := MergeProfiles(p)
	if d = append(d, md...); len(d) > 0 {
		t.Fatalf("the documented example is refused:\n%s", diagText(d))
	}
	if got := ps.Names(); !slices.Equal(got, []string{"review", "sub-agent"}) {
		t.Errorf("profiles = %v, want review and sub-agent", got)
	}
}

// TestProfilesExtendsDropped: a profile that extends one an error
// dropped says so, where that error is, not that the name is unknown
// (it is written right there).
func TestProfilesExtendsDropped(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"bad pattern", `{"profiles": {"review": {"defer": ["mcp__docs-*"]}, "sub": {"extends": ["review"]}}}`},
		{"twice in one file", `{"profiles": {"review": {}, "review": {}, "sub": {"extends": ["review"]}}}`},
		{"not an object", `{"profiles": {"review": [], "sub": {"extends": ["review"]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			file := UserSettingsPath(home)
			if err := os.WriteFile(file, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			ps, d := ReadSettings(SettingsPlaces{Home: home}).Profiles()
			got := DroppedProfile("sub", d)
			if want := `extends profile "review", which an error in its definition (` + file + `:1:15) dropped`; got == nil || !strings.Contains(got.Error(), want) {
				t.Errorf("sub's error = %v, want it to say %q; all:\n%s", got, want, diagText(d))
			}
			if _, ok := ps["sub"]; ok {
				t.Error("sub kept")
			}
		})
	}
}
