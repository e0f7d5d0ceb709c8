package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fixture is a home directory, a project with a .git and a managed
// directory, all under one t.TempDir().
type fixture struct {
	t                                *testing.T
	dir, homeDir, home, proj, etcDir string
	env                              map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{
		t: t, dir: dir,
		homeDir: filepath.Join(dir, "home"),
		proj:    filepath.Join(dir, "work", "proj"),
		etcDir:  filepath.Join(dir, "etc"),
		env:     map[string]string{},
	}
	f.home = filepath.Join(f.homeDir, ".switchboard")
	for _, d := range []string{f.home, filepath.Join(f.proj, ".git"), f.etcDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) write(path, content string) string {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return path
}

func (f *fixture) opts() *LoadOptions {
	return &LoadOptions{HomeDir: f.homeDir, Cwd: f.proj, ManagedDir: f.etcDir, LookupEnv: mapLookup(f.env)}
}

func (f *fixture) load(o *LoadOptions) *Resolved {
	f.t.Helper()
	r, err := Load(o)
	if err != nil {
		f.t.Fatalf("Load: %v", err)
	}
	return r
}

// row is the part of a ResolvedServer most tests check.
type row struct {
	Name    string
	Scope   Scope
	Trust   Trust
	Avail   Availability
	Reason  string
	Shadows []Scope
	Command string
}

func rows(r *Resolved) []row {
	var out []row
	for _, s := range r.Servers {
		out = append(out, row{s.Name, s.Scope, s.Trust, s.Availability, s.DisabledReason, s.Shadows, s.Written.Command})
	}
	return out
}

// errorsOf renders the error diagnostics of r, one line each.
func errorsOf(r *Resolved) []string {
	var out []string
	for _, d := range r.Diagnostics {
		if d.Severity == SeverityError {
			out = append(out, d.Error())
		}
	}
	return out
}

func servers(defs ...string) string {
	return `{"mcpServers": {` + strings.Join(defs, ",") + `}}`
}

func cmdDef(name, command string) string {
	return `"` + name + `": {"command": "` + command + `"}`
}

func TestLoadPrecedence(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.home, "mcp.json"), `{
  "mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}, "c": {"command": "user-c"}},
  "projects": {
    "`+f.proj+`": {"mcpServers": {"a": {"command": "local-a"}}},
    "/somewhere/else": {"mcpServers": {"c": {"command": "other-c"}}},
  },
}`)
	f.write(filepath.Join(f.proj, ".mcp.json"), servers(cmdDef("a", "project-a"), cmdDef("b", "project-b"), cmdDef("p", "project-p")))
	r := f.load(f.opts())
	want := []row{
		{"a", ScopeLocal, TrustUser, Available, "", []Scope{ScopeProject, ScopeUser}, "local-a"},
		{"b", ScopeProject, TrustRepo, Available, "", []Scope{ScopeUser}, "project-b"},
		{"c", ScopeUser, TrustUser, Available, "", nil, "user-c"},
		{"p", ScopeProject, TrustRepo, Available, "", nil, "project-p"},
	}
	if diff := cmp.Diff(want, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if len(r.Diagnostics) != 0 {
		t.Errorf("unexpected diagnostics: %v", r.Diagnostics)
	}
	userFile := filepath.Join(f.home, "mcp.json")
	wantFiles := Files{
		User: userFile, Local: userFile, Project: filepath.Join(f.proj, ".mcp.json"),
		Managed: filepath.Join(f.etcDir, "managed-mcp.json"), Workspace: filepath.Join(f.proj, ".switchboard", "workspace.json"),
		Searched: []string{
			filepath.Join(f.etcDir, "managed-mcp.json"), userFile,
			filepath.Join(f.proj, ".mcp.json"), filepath.Join(f.proj, ".switchboard", "workspace.json"),
		},
	}
	if diff := cmp.Diff(wantFiles, r.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if r.Workspace != f.proj {
		t.Errorf("workspace = %q, want %q", r.Workspace, f.proj)
	}
	a := r.Server("a")
	if diff := cmp.Diff(Position{File: userFile, Line: 4, Col: 25 + len(f.proj)}, a.Pos); diff != "" {
		t.Errorf("position of local a (-want +got):\n%s", diff)
	}
	if a.File != userFile {
		t.Errorf("file of local a = %q, want the user file", a.File)
	}
}

func TestLoadFirstExistingFile(t *testing.T) {
	tests := []struct {
		name        string
		files       map[string]string // relative to the fixture dir
		wantUser    string
		wantProject string
		want        []string // server names
	}{
		{"project: .mcp.json before mcp.json",
			map[string]string{"work/proj/.mcp.json": servers(cmdDef("dot", "x")), "work/proj/mcp.json": servers(cmdDef("plain", "x"))},
			"home/.switchboard/mcp.json", "work/proj/.mcp.json", []string{"dot"}},
		{"project: mcp.json alone",
			map[string]string{"work/proj/mcp.json": servers(cmdDef("plain", "x"))},
			"home/.switchboard/mcp.json", "work/proj/mcp.json", []string{"plain"}},
		{"user: legacy file alone",
			map[string]string{"home/.switchboard.json": servers(cmdDef("legacy", "x"))},
			"home/.switchboard.json", "work/proj/.mcp.json", []string{"legacy"}},
		{"user: primary before legacy, never merged",
			map[string]string{"home/.switchboard.json": servers(cmdDef("legacy", "x")), "home/.switchboard/mcp.json": servers(cmdDef("primary", "x"))},
			"home/.switchboard/mcp.json", "work/proj/.mcp.json", []string{"primary"}},
		{"an empty primary still wins",
			map[string]string{"home/.switchboard.json": servers(cmdDef("legacy", "x")), "home/.switchboard/mcp.json": ""},
			"home/.switchboard/mcp.json", "work/proj/.mcp.json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for p, c := range tt.files {
				f.write(filepath.Join(f.dir, p), c)
			}
			r := f.load(f.opts())
			var names []string
			for _, s := range r.Servers {
				names = append(names, s.Name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if got := r.Files.User; got != filepath.Join(f.dir, tt.wantUser) {
				t.Errorf("Files.User = %s, want %s", got, tt.wantUser)
			}
			if got := r.Files.Project; got != filepath.Join(f.dir, tt.wantProject) {
				t.Errorf("Files.Project = %s, want %s", got, tt.wantProject)
			}
			if len(r.Diagnostics) != 0 {
				t.Errorf("unexpected diagnostics: %v", r.Diagnostics)
			}
		})
	}
}

func TestLoadSwitchboardHome(t *testing.T) {
	f := newFixture(t)
	alt := filepath.Join(f.dir, "alt")
	f.write(filepath.Join(alt, "mcp.json"), servers(cmdDef("alt", "x")))
	f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("default", "x")))
	f.env["SWITCHBOARD_HOME"] = alt
	r := f.load(f.opts())
	if diff := cmp.Diff([]row{{"alt", ScopeUser, TrustUser, Available, "", nil, "x"}}, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if got := DefaultHome(mapLookup(f.env), f.homeDir); got != alt {
		t.Errorf("DefaultHome = %s, want %s", got, alt)
	}
	if got := DefaultHome(mapLookup(nil), "/h"); got != "/h/.switchboard" {
		t.Errorf("DefaultHome without env = %s", got)
	}
	if got := DefaultHome(mapLookup(map[string]string{"SWITCHBOARD_HOME": ""}), "/h"); got != "/h/.switchboard" {
		t.Errorf("DefaultHome with empty env = %s", got)
	}
}

// A .mcp.json in the Switchboard home is read by no scope: it is reported,
// never silently ignored, and does not make the home a project (issue 29).
func TestLoadStrayHomeMCPJSON(t *testing.T) {
	f := newFixture(t)
	stray := f.write(filepath.Join(f.home, ".mcp.json"), servers(cmdDef("stray", "x")))
	for _, cwd := range []string{f.proj, f.home} {
		o := f.opts()
		o.Cwd = cwd
		r := f.load(o)
		if len(r.Servers) != 0 || r.Workspace == f.home {
			t.Errorf("from %s: servers %v, workspace %q", cwd, rows(r), r.Workspace)
		}
		var found *Diagnostic
		for i, d := range r.Diagnostics {
			if d.File == stray {
				found = &r.Diagnostics[i]
			}
		}
		if found == nil || found.Severity != SeverityWarning || !strings.Contains(found.Message, "not read") ||
			found.Fix != "rename it to "+filepath.Join(f.home, "mcp.json") {
			t.Errorf("from %s: diagnostic %+v", cwd, found)
		}
	}
	f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("mine", "x")))
	r := f.load(f.opts())
	if len(r.Diagnostics) != 1 || !strings.HasPrefix(r.Diagnostics[0].Fix, "move its servers into ") {
		t.Errorf("beside mcp.json: %+v", r.Diagnostics)
	}
}

func TestLoadManaged(t *testing.T) {
	f := newFixture(t)
	managed := f.write(filepath.Join(f.etcDir, "managed-mcp.json"), `{
  "mcpServers": {"corp": {"command": "corp-bin"}},
  "allowedMcpServers": ["corp", "ok", {"serverName": "obj"}, "denied-too"],
  "deniedMcpServers": ["denied-too", "corp-denied"],
}`)
	user := f.write(filepath.Join(f.home, "mcp.json"), servers(
		cmdDef("corp", "mine"), cmdDef("ok", "x"), cmdDef("obj", "x"), cmdDef("other", "x"), cmdDef("denied-too", "x")))
	f.write(filepath.Join(f.proj, ".mcp.json"), servers(cmdDef("corp", "repo")))
	r := f.load(f.opts())
	want := []row{
		{"corp", ScopeManaged, TrustUser, Available, "", []Scope{ScopeProject, ScopeUser}, "corp-bin"},
		{"denied-too", ScopeUser, TrustUser, Disabled, "managed policy", nil, "x"},
		{"obj", ScopeUser, TrustUser, Available, "", nil, "x"},
		{"ok", ScopeUser, TrustUser, Available, "", nil, "x"},
		{"other", ScopeUser, TrustUser, Disabled, "managed policy", nil, "x"},
	}
	if diff := cmp.Diff(want, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	corp := r.Server("corp")
	if corp.File != managed {
		t.Errorf("corp file = %s, want %s", corp.File, managed)
	}
	wantDiags := []Diagnostic{{
		Severity: SeverityWarning, Position: Position{File: filepath.Join(f.proj, ".mcp.json"), Line: 1, Col: 17}, Server: "corp",
		Message: "ignored: the managed configuration (" + managed + ") defines this server and cannot be overridden",
		Fix:     "give your server another name to use it alongside the managed one",
	}, {
		Severity: SeverityWarning, Position: Position{File: user, Line: 1, Col: 17}, Server: "corp",
		Message: "ignored: the managed configuration (" + managed + ") defines this server and cannot be overridden",
		Fix:     "give your server another name to use it alongside the managed one",
	}}
	if diff := cmp.Diff(wantDiags, corp.Diagnostics); diff != "" {
		t.Errorf("corp diagnostics (-want +got):\n%s", diff)
	}

	t.Run("denylist alone", func(t *testing.T) {
		f := newFixture(t)
		f.write(filepath.Join(f.etcDir, "managed-mcp.json"), `{"deniedMcpServers": ["bad"]}`)
		f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("bad", "x"), cmdDef("good", "x")))
		want := []row{
			{"bad", ScopeUser, TrustUser, Disabled, "managed policy", nil, "x"},
			{"good", ScopeUser, TrustUser, Available, "", nil, "x"},
		}
		if diff := cmp.Diff(want, rows(f.load(f.opts()))); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
	t.Run("empty allowlist allows no one but managed", func(t *testing.T) {
		f := newFixture(t)
		f.write(filepath.Join(f.etcDir, "managed-mcp.json"), `{"allowedMcpServers": [], "mcpServers": {"m": {"url": "https://m"}}}`)
		f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("u", "x")))
		want := []row{
			{"m", ScopeManaged, TrustUser, Available, "", nil, ""},
			{"u", ScopeUser, TrustUser, Disabled, "managed policy", nil, "x"},
		}
		if diff := cmp.Diff(want, rows(f.load(f.opts()))); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
	t.Run("SWITCHBOARD_MANAGED_DIR", func(t *testing.T) {
		f := newFixture(t)
		other := filepath.Join(f.dir, "other-etc")
		f.write(filepath.Join(other, "managed-mcp.json"), servers(cmdDef("m", "x")))
		f.env["SWITCHBOARD_MANAGED_DIR"] = other
		o := f.opts()
		o.ManagedDir = ""
		r := f.load(o)
		if diff := cmp.Diff([]row{{"m", ScopeManaged, TrustUser, Available, "", nil, "x"}}, rows(r)); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
		if r.Files.Managed != filepath.Join(other, "managed-mcp.json") {
			t.Errorf("Files.Managed = %s", r.Files.Managed)
		}
	})
}

// Issue 28 point 13: a repository's disabledMcpServers — in its .mcp.json
// or its workspace file — switched off an administrator's managed server.
// Managed beats every other scope: the lists are ignored, with a warning
// at the repository's entry; the user's own `mcp disable` (the local
// layer) and their user file still switch it off for themselves.
func TestLoadRepoCannotDisableManaged(t *testing.T) {
	f := newFixture(t)
	managed := f.write(filepath.Join(f.etcDir, "managed-mcp.json"), servers(cmdDef("audit", "audit-bin"), cmdDef("corp", "corp-bin"), cmdDef("own", "own-bin")))
	project := f.write(filepath.Join(f.proj, ".mcp.json"), `{"mcpServers": {}, "disabledMcpServers": ["audit"]}`)
	ws := f.write(filepath.Join(f.proj, ".switchboard", "workspace.json"), `{"disabledMcpServers": ["corp"]}`)
	f.write(filepath.Join(f.home, "mcp.json"), `{"disabledMcpServers": ["own"]}`)
	r := f.load(f.opts())
	want := []row{
		{"audit", ScopeManaged, TrustUser, Available, "", nil, "audit-bin"},
		{"corp", ScopeManaged, TrustUser, Available, "", nil, "corp-bin"},
		{"own", ScopeManaged, TrustUser, Disabled, "disabledMcpServers in " + filepath.Join(f.home, "mcp.json"), nil, "own-bin"},
	}
	if diff := cmp.Diff(want, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name, file string
		pos        Position
	}{
		{"audit", project, Position{File: project, Line: 1, Col: 43}},
		{"corp", ws, Position{File: ws, Line: 1, Col: 25}},
	} {
		want := []Diagnostic{{
			Severity: SeverityWarning, Position: tc.pos, Server: tc.name,
			Message: "ignored: disabledMcpServers in " + tc.file + " cannot switch off a server of the managed configuration (" + managed + ")",
			Fix:     "to switch it off for yourself in this workspace: switchboard mcp disable " + tc.name,
		}}
		if tc.file == ws {
			want[0].Message = "ignored: disabledMcpServers in .switchboard/workspace.json cannot switch off a server of the managed configuration (" + managed + ")"
		}
		if diff := cmp.Diff(want, r.Server(tc.name).Diagnostics); diff != "" {
			t.Errorf("%s diagnostics (-want +got):\n%s", tc.name, diff)
		}
	}

	t.Run("mcp disable still switches it off for the user", func(t *testing.T) {
		if err := SetLocalEnablement(filepath.Join(f.home, "mcp.json"), f.proj, "audit", false); err != nil {
			t.Fatal(err)
		}
		s := f.load(f.opts()).Server("audit")
		if s.Availability != Disabled || !strings.Contains(s.DisabledReason, "disabledMcpServers in ") {
			t.Errorf("audit after mcp disable: %s (%s), want disabled by the local layer", s.Availability, s.DisabledReason)
		}
	})
}

func TestLoadEnablement(t *testing.T) {
	f := newFixture(t)
	user := f.write(filepath.Join(f.home, "mcp.json"), `{
  "mcpServers": {
    "on": {"command": "x"},
    "ws-off": {"command": "x"},
    "self-off": {"command": "x", "enabled": false},
    "ws-revived": {"command": "x", "enabled": false},
    "ws-unlisted": {"command": "x"},
    "listed-off": {"command": "x"},
    "both": {"command": "x"},
    "local-revived": {"command": "x", "enabled": false},
    "local-unlisted": {"command": "x"},
    "local-off": {"command": "x"},
  },
  "disabledMcpServers": ["listed-off", "ws-unlisted", "local-unlisted"],
  "projects": {
    "`+f.proj+`": {
      // the user's own layer for this workspace (mcp enable / disable)
      "enabledMcpServers": ["local-revived", "local-unlisted", "ws-off", "local-ghost"],
      "disabledMcpServers": ["local-off"],
    },
  },
}`)
	project := f.write(filepath.Join(f.proj, ".mcp.json"), `{"mcpServers": {"repo-off": {"command": "x", "enabled": false}, "repo-listed": {"command": "x"}}, "disabledMcpServers": ["on-in-project", "repo-listed"]}`)
	f.write(filepath.Join(f.home, "mcp.json.unused"), "")
	ws := f.write(filepath.Join(f.proj, ".switchboard", "workspace.json"), `{
  // the workspace layer
  "enabledMcpServers": ["ws-revived", "ghost", "both", "ws-unlisted", "repo-off", "repo-listed", "local-off"],
  "disabledMcpServers": ["ws-off", "both"],
}`)
	r := f.load(f.opts())
	// The repository's workspace file may lift only what the repository
	// disabled (repo-off, repo-listed); what the user switched off stays
	// off (ws-revived, ws-unlisted, local-off) unless the user's own local
	// layer lifts it (local-revived, local-unlisted, ws-off).
	want := []row{
		{"both", ScopeUser, TrustUser, Disabled, "disabled in workspace (.switchboard/workspace.json)", nil, "x"},
		{"ghost", "", "", Missing, "", nil, ""},
		{"listed-off", ScopeUser, TrustUser, Disabled, "disabledMcpServers in " + user, nil, "x"},
		{"local-ghost", "", "", Missing, "", nil, ""},
		{"local-off", ScopeUser, TrustUser, Disabled, "disabledMcpServers in " + user, nil, "x"},
		{"local-revived", ScopeUser, TrustUser, Available, "", nil, "x"},
		{"local-unlisted", ScopeUser, TrustUser, Available, "", nil, "x"},
		{"on", ScopeUser, TrustUser, Available, "", nil, "x"},
		{"repo-listed", ScopeProject, TrustRepo, Available, "", nil, "x"},
		{"repo-off", ScopeProject, TrustRepo, Available, "", nil, "x"},
		{"self-off", ScopeUser, TrustUser, Disabled, "enabled: false in " + user, nil, "x"},
		{"ws-off", ScopeUser, TrustUser, Available, "", nil, "x"},
		{"ws-revived", ScopeUser, TrustUser, Disabled, "enabled: false in " + user, nil, "x"},
		{"ws-unlisted", ScopeUser, TrustUser, Disabled, "disabledMcpServers in " + user, nil, "x"},
	}
	_ = project
	if diff := cmp.Diff(want, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	ghost := r.Server("ghost")
	wantGhost := []Diagnostic{{
		Severity: SeverityWarning, Position: Position{File: ws, Line: 3, Col: 39}, Server: "ghost", Undefined: true,
		Message: "enabled in the workspace (.switchboard/workspace.json) but no configuration defines it",
		Fix:     "define it in a configuration file, or remove it from enabledMcpServers",
	}}
	if diff := cmp.Diff(wantGhost, ghost.Diagnostics); diff != "" {
		t.Errorf("ghost diagnostics (-want +got):\n%s", diff)
	}
	if ghost.File != ws {
		t.Errorf("ghost file = %s, want %s", ghost.File, ws)
	}

	t.Run("disabledMcpServers in the project file", func(t *testing.T) {
		f := newFixture(t)
		f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("u", "x")))
		p := f.write(filepath.Join(f.proj, ".mcp.json"), `{"disabledMcpServers": ["u"]}`)
		want := []row{{"u", ScopeUser, TrustUser, Disabled, "disabledMcpServers in " + p, nil, "x"}}
		if diff := cmp.Diff(want, rows(f.load(f.opts()))); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
}

func TestLoadMCPConfig(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("u", "user"), cmdDef("both", "user")))
	f.write(filepath.Join(f.proj, ".mcp.json"), servers(cmdDef("p", "project")))
	f.write(filepath.Join(f.etcDir, "managed-mcp.json"), `{"mcpServers": {"m": {"command": "managed"}}, "deniedMcpServers": ["denied"]}`)
	flagFile := f.write(filepath.Join(f.proj, "extra.json"), servers(cmdDef("file", "from-file"), cmdDef("both", "from-file")))
	inline := ` {"mcpServers": {"inline": {"command": "from-inline"}, "denied": {"command": "d"}}}`

	o := f.opts()
	o.MCPConfigs = []string{"extra.json", inline} // relative to Cwd
	r := f.load(o)
	want := []row{
		{"both", ScopeFlag, TrustUser, Available, "", []Scope{ScopeUser}, "from-file"},
		{"denied", ScopeFlag, TrustUser, Disabled, "managed policy", nil, "d"},
		{"file", ScopeFlag, TrustUser, Available, "", nil, "from-file"},
		{"inline", ScopeFlag, TrustUser, Available, "", nil, "from-inline"},
		{"m", ScopeManaged, TrustUser, Available, "", nil, "managed"},
		{"p", ScopeProject, TrustRepo, Available, "", nil, "project"},
		{"u", ScopeUser, TrustUser, Available, "", nil, "user"},
	}
	if diff := cmp.Diff(want, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{flagFile, "--mcp-config"}, r.Files.Flags); diff != "" {
		t.Errorf("Files.Flags (-want +got):\n%s", diff)
	}
	if got := r.Server("inline").File; got != "" {
		t.Errorf("inline server file = %q, want empty", got)
	}
	if got := r.Server("file").File; got != flagFile {
		t.Errorf("file server file = %q, want %q", got, flagFile)
	}

	t.Run("strict", func(t *testing.T) {
		o := f.opts()
		o.MCPConfigs = []string{inline}
		o.StrictMCPConfig = true
		want := []row{
			{"denied", ScopeFlag, TrustUser, Disabled, "managed policy", nil, "d"},
			{"inline", ScopeFlag, TrustUser, Available, "", nil, "from-inline"},
			{"m", ScopeManaged, TrustUser, Available, "", nil, "managed"},
		}
		if diff := cmp.Diff(want, rows(f.load(o))); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
	t.Run("later flag wins", func(t *testing.T) {
		o := f.opts()
		o.MCPConfigs = []string{servers(cmdDef("x", "first")), servers(cmdDef("x", "second"))}
		o.StrictMCPConfig = true
		r := f.load(o)
		if got := r.Server("x").Written.Command; got != "second" {
			t.Errorf("x command = %q, want second", got)
		}
		if diff := cmp.Diff([]string{"--mcp-config#1", "--mcp-config#2"}, r.Files.Flags); diff != "" {
			t.Errorf("Files.Flags (-want +got):\n%s", diff)
		}
	})
	t.Run("problems", func(t *testing.T) {
		o := f.opts()
		o.MCPConfigs = []string{"nope.json", `{"mcpServers": {"x": {"command": 1}}}`, `{"servers": {}}`, `{bad`}
		o.StrictMCPConfig = true
		r := f.load(o)
		var got []string
		for _, d := range r.Diagnostics {
			got = append(got, string(d.Severity)+": "+d.Error())
		}
		want := []string{
			"error: " + filepath.Join(f.proj, "nope.json") + ": file not found (fix: check the path given to --mcp-config (a file, or inline JSON starting with '{'))",
			`error: --mcp-config#1:1:34: server "x": field "command": must be a string, not a number (fix: write "command": "…")`,
			`error: --mcp-config#1:1:17: server "x": neither "command" nor "url" is set (fix: add "command" (and "args") for a local server, or "url" for a remote one)`,
			`warning: --mcp-config#2:1:2: field "servers": is not read: servers go under "mcpServers" (fix: rename "servers" to "mcpServers")`,
			`error: --mcp-config#3:1:2: invalid JSON: invalid literal: bad (fix: ` + fixSyntax + `)`,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
	// A flag holding only "disabledMcpServers" disables those servers for
	// the run: no warning that it loads nothing.
	t.Run("a flag that only disables", func(t *testing.T) {
		o := f.opts()
		o.MCPConfigs = []string{servers(cmdDef("x", "x")), `{"disabledMcpServers": ["x"]}`}
		r := f.load(o)
		for _, d := range r.Diagnostics {
			t.Errorf("diagnostic: %v", d)
		}
		if s := r.Server("x"); s == nil || s.Availability != Disabled {
			t.Errorf("x = %+v, want disabled by the flag", s)
		}
	})
}

func TestLoadSession(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("s", "user")))
	o := f.opts()
	o.Session = map[string]Server{
		"s":      {Command: "session"},
		"remote": {Type: "streamable-http", URL: "https://r"},
		"broken": {Type: "carrier-pigeon"},
	}
	r := f.load(o)
	want := []row{
		{"broken", ScopeSession, TrustUser, Invalid, "", nil, ""},
		{"remote", ScopeSession, TrustUser, Available, "", nil, ""},
		{"s", ScopeSession, TrustUser, Available, "", []Scope{ScopeUser}, "session"},
	}
	if diff := cmp.Diff(want, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if got := r.Server("remote").Effective.Type; got != TypeHTTP {
		t.Errorf("remote type = %q, want http", got)
	}
	if diff := cmp.Diff([]string{`server "broken": field "type": unknown transport "carrier-pigeon" (fix: use "stdio", "sse" or "http")`}, errorsOf(r)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestLoadBadFiles(t *testing.T) {
	t.Run("directory as file", func(t *testing.T) {
		f := newFixture(t)
		userFile := filepath.Join(f.home, "mcp.json")
		if err := os.Mkdir(userFile, 0o755); err != nil {
			t.Fatal(err)
		}
		f.write(filepath.Join(f.homeDir, ".switchboard.json"), servers(cmdDef("legacy", "x"))) // not read: the directory comes first
		f.write(filepath.Join(f.proj, ".mcp.json"), servers(cmdDef("p", "x")))
		r := f.load(f.opts())
		if diff := cmp.Diff([]row{{"p", ScopeProject, TrustRepo, Available, "", nil, "x"}}, rows(r)); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
		want := []string{userFile + ": is a directory, not a JSON file (fix: remove or rename the directory: this path must be a JSON file)"}
		if diff := cmp.Diff(want, errorsOf(r)); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
	})
	t.Run("unreadable file", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads files whatever their mode; the directory case covers the path")
		}
		f := newFixture(t)
		p := f.write(filepath.Join(f.proj, ".mcp.json"), servers(cmdDef("p", "x")))
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("u", "x")))
		r := f.load(f.opts())
		if diff := cmp.Diff([]row{{"u", ScopeUser, TrustUser, Available, "", nil, "x"}}, rows(r)); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
		want := []string{p + ": cannot be read: permission denied (fix: make it readable by you (e.g. chmod 644 " + p + "))"}
		if diff := cmp.Diff(want, errorsOf(r)); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
	})
	t.Run("broken JSON hides nothing else", func(t *testing.T) {
		f := newFixture(t)
		user := f.write(filepath.Join(f.home, "mcp.json"), "{\n  \"mcpServers\": {\n    \"u\": {\"command\": \"x\"}\n  }\n  \"oops\": 1\n}")
		f.write(filepath.Join(f.proj, ".mcp.json"), servers(cmdDef("p", "x"), `"bad": {"type": "http"}`))
		f.write(filepath.Join(f.proj, ".switchboard", "workspace.json"), `{"enabledMcpServers": "u"}`)
		r := f.load(f.opts())
		want := []row{
			{"bad", ScopeProject, TrustRepo, Invalid, "", nil, ""},
			{"p", ScopeProject, TrustRepo, Available, "", nil, "x"},
		}
		if diff := cmp.Diff(want, rows(r)); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
		proj := filepath.Join(f.proj, ".mcp.json")
		ws := filepath.Join(f.proj, ".switchboard", "workspace.json")
		wantErrs := []string{
			user + `:5:3: invalid JSON: invalid character '"' after object value (expecting ',' or '}') (fix: ` + fixSyntax + `)`,
			proj + `:1:39: server "bad": field "url": an http server needs a url (fix: add "url": "https://…")`,
			ws + `:1:23: field "enabledMcpServers": must be an array of server names, not a string (fix: write "enabledMcpServers": ["name", …])`,
		}
		if diff := cmp.Diff(wantErrs, errorsOf(r)); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
		if !r.HasErrors() {
			t.Error("HasErrors() = false")
		}
		if err := r.Server("bad").Err(); err == nil {
			t.Error("bad.Err() = nil")
		}
	})
	t.Run("invalid winner shadows a valid lower definition", func(t *testing.T) {
		f := newFixture(t)
		f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("x", "good")))
		f.write(filepath.Join(f.proj, ".mcp.json"), servers(`"x": {"command": "bad", "args": "oops"}`))
		want := []row{{"x", ScopeProject, TrustRepo, Invalid, "", []Scope{ScopeUser}, "bad"}}
		if diff := cmp.Diff(want, rows(f.load(f.opts()))); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
}

func TestLoadExpansion(t *testing.T) {
	f := newFixture(t)
	user := f.write(filepath.Join(f.home, "mcp.json"), `{"mcpServers": {
  "db": {
    "command": "${BIN:-db-mcp}",
    "args": ["--url", "${DATABASE_URL}"],
    "env": {"TOKEN": "${API_TOKEN}", "${KEY_NOT_EXPANDED}": "v", "AGAIN": "${API_TOKEN}"},
    "headers": {"X-Literal": "$${API_TOKEN}"}
  },
  "web": {"url": "${BASE:-https://example.com}/mcp", "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}},
  "badurl": {"url": "${BASE_BAD}/mcp"},
  "unseturl": {"url": "https://${HOST_UNSET}/mcp?k=${KEY_UNSET:-${K2_UNSET}}"}
}}`)
	f.env["WEB_TOKEN"] = "t0k"
	f.env["BASE_BAD"] = "example.com"
	r := f.load(f.opts())

	db := r.Server("db")
	wantDB := Server{
		Type: TypeStdio, Command: "db-mcp", Args: []string{"--url", "${DATABASE_URL}"},
		Env:     map[string]string{"TOKEN": "${API_TOKEN}", "${KEY_NOT_EXPANDED}": "v", "AGAIN": "${API_TOKEN}"},
		Headers: map[string]string{"X-Literal": "${API_TOKEN}"},
	}
	if diff := cmp.Diff(wantDB, db.Effective); diff != "" {
		t.Errorf("db effective (-want +got):\n%s", diff)
	}
	if db.Written.Command != "${BIN:-db-mcp}" || db.Written.Type != "" {
		t.Errorf("db written changed: %+v", db.Written)
	}
	if diff := cmp.Diff([]string{"API_TOKEN", "DATABASE_URL"}, db.MissingEnv); diff != "" {
		t.Errorf("db missing (-want +got):\n%s", diff)
	}
	wantWarn := []Diagnostic{{
		Severity: SeverityWarning, Position: Position{File: user, Line: 2, Col: 3}, Server: "db",
		Message: "Missing environment variables: API_TOKEN, DATABASE_URL",
		Fix:     "set them in the environment, or give a default with ${VAR:-default}",
	}}
	if diff := cmp.Diff(wantWarn, db.Diagnostics); diff != "" {
		t.Errorf("db diagnostics (-want +got):\n%s", diff)
	}
	if db.Availability != Available {
		t.Errorf("db availability = %s: missing variables warn, they do not disable", db.Availability)
	}

	web := r.Server("web")
	if web.Effective.URL != "https://example.com/mcp" || web.Effective.Headers["Authorization"] != "Bearer t0k" {
		t.Errorf("web effective = %+v", web.Effective)
	}
	if len(web.Diagnostics) != 0 || web.MissingEnv != nil {
		t.Errorf("web: diagnostics %v, missing %v", web.Diagnostics, web.MissingEnv)
	}

	bad := r.Server("badurl")
	wantBad := []Diagnostic{{
		Severity: SeverityError, Position: Position{File: user, Line: 9, Col: 21}, Server: "badurl", Field: "url",
		Message: "after ${VAR} expansion, the url must start with http:// or https://",
		Fix:     "set the variables it uses to form a full http(s) address",
	}}
	if diff := cmp.Diff(wantBad, bad.Diagnostics); diff != "" {
		t.Errorf("badurl diagnostics (-want +got):\n%s", diff)
	}
	if bad.Availability != Invalid {
		t.Errorf("badurl availability = %s, want invalid", bad.Availability)
	}

	// A url an unset variable leaves a placeholder in is no address: the
	// server is invalid, naming the variables (a default's too) at the url.
	unset := r.Server("unseturl")
	wantUnset := Diagnostic{
		Severity: SeverityError, Position: Position{File: user, Line: 10, Col: 23}, Server: "unseturl", Field: "url",
		Message: "uses ${HOST_UNSET}, ${K2_UNSET}, which are not set, so it names no address to connect to",
		Fix:     "set HOST_UNSET and K2_UNSET in the environment Switchboard runs in, or give a default: ${HOST_UNSET:-https://…}",
	}
	if !slices.Contains(unset.Diagnostics, wantUnset) {
		t.Errorf("unseturl diagnostics %v lack %v", unset.Diagnostics, wantUnset)
	}
	if unset.Availability != Invalid || unset.Err() == nil {
		t.Errorf("unseturl availability = %s (%v), want invalid", unset.Availability, unset.Err())
	}
}

func TestLoadWorkspaceOption(t *testing.T) {
	f := newFixture(t)
	other := filepath.Join(f.dir, "other")
	f.write(filepath.Join(other, "mcp.json"), servers(cmdDef("o", "x")))
	o := f.opts()
	o.Workspace = "../../other" // relative to Cwd
	r := f.load(o)
	if r.Workspace != other {
		t.Errorf("workspace = %s, want %s", r.Workspace, other)
	}
	if diff := cmp.Diff([]row{{"o", ScopeProject, TrustRepo, Available, "", nil, "x"}}, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}

	t.Run("local key with a trailing slash", func(t *testing.T) {
		f := newFixture(t)
		f.write(filepath.Join(f.home, "mcp.json"), `{"projects": {"`+f.proj+`/": {"mcpServers": {"l": {"command": "x"}}}}}`)
		if diff := cmp.Diff([]row{{"l", ScopeLocal, TrustUser, Available, "", nil, "x"}}, rows(f.load(f.opts()))); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
	t.Run("missing workspace", func(t *testing.T) {
		f := newFixture(t)
		o := f.opts()
		o.Workspace = filepath.Join(f.dir, "nowhere")
		want := []string{o.Workspace + ": the workspace is not a directory (fix: pass an existing directory to --workspace)"}
		if diff := cmp.Diff(want, errorsOf(f.load(o))); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
	})
	t.Run("no root", func(t *testing.T) {
		f := newFixture(t)
		o := f.opts()
		o.Cwd = f.etcDir // no marker up to the file system root (t.TempDir is outside any repo)
		if FindRoot(o.Cwd) != "" {
			t.Skip("the temporary directory is inside a project")
		}
		r := f.load(o)
		if r.Workspace != "" || r.Files.Project != "" || r.Files.Workspace != "" {
			t.Errorf("workspace %q, files %+v: want no project", r.Workspace, r.Files)
		}
	})
}

func TestFindRoot(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string, isDir bool) {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if isDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/.git", true)
	mk("a/b/.mcp.json", false)
	mk("a/b/c/d", true)
	mk("w/.git", false) // a worktree's .git is a file
	mk("w/x", true)
	mk("s/.switchboard", true)
	mk("s/t", true)
	mk("h/.switchboard", true) // the Switchboard home: not a marker
	mk("h/proj/.switchboard/x", false)
	mk("h/plain", true)
	tests := []struct{ cwd, want, home string }{
		{"a/b/c/d", "a/b", ""},
		{"a/b", "a/b", ""},
		{"a", "a", ""},
		{"w/x", "w", ""},
		{"s/t", "s", ""},
		{"h/proj", "h/proj", "h/.switchboard"},
		{"h/plain", "", "h/.switchboard"},
	}
	for _, tt := range tests {
		t.Run(tt.cwd, func(t *testing.T) {
			home := ""
			if tt.home != "" {
				home = filepath.Join(dir, tt.home)
			}
			got := findRoot(filepath.Join(dir, tt.cwd), home)
			want := ""
			if tt.want != "" {
				want = filepath.Join(dir, tt.want)
			}
			if want == "" && got != "" && !strings.HasPrefix(got, dir) {
				t.Skipf("the temporary directory is inside a project (%s)", got)
			}
			if got != want {
				t.Errorf("findRoot(%s) = %q, want %q", tt.cwd, got, want)
			}
		})
	}
	if got := FindRoot(filepath.Join(dir, "a/b/c/d")); got != filepath.Join(dir, "a/b") {
		t.Errorf("FindRoot = %q", got)
	}
}

func TestFilePaths(t *testing.T) {
	dir := t.TempDir()
	if got, want := WorkspaceFile("/r"), filepath.Join("/r", ".switchboard", "workspace.json"); got != want {
		t.Errorf("WorkspaceFile = %s, want %s", got, want)
	}
	if got, want := ManagedFile("/etc/switchboard"), "/etc/switchboard/managed-mcp.json"; got != want {
		t.Errorf("ManagedFile = %s, want %s", got, want)
	}
	// Nothing exists: the write targets.
	if got, want := UserFile(filepath.Join(dir, ".switchboard"), dir), filepath.Join(dir, ".switchboard", "mcp.json"); got != want {
		t.Errorf("UserFile = %s, want %s", got, want)
	}
	if got, want := ProjectFile(dir), filepath.Join(dir, ".mcp.json"); got != want {
		t.Errorf("ProjectFile = %s, want %s", got, want)
	}
	if got, want := UserFile(filepath.Join(dir, ".switchboard"), ""), filepath.Join(dir, ".switchboard", "mcp.json"); got != want {
		t.Errorf("UserFile without homeDir = %s, want %s", got, want)
	}
}

func TestLoadUnreadablePath(t *testing.T) {
	// Runs as root too: a path through a regular file cannot be read by
	// anyone ("not a directory"), which exercises the unreadable branch.
	f := newFixture(t)
	notDir := f.write(filepath.Join(f.dir, "plainfile"), "x")
	f.env["SWITCHBOARD_HOME"] = notDir
	f.write(filepath.Join(f.proj, ".mcp.json"), servers(cmdDef("p", "x")))
	r := f.load(f.opts())
	userFile := filepath.Join(notDir, "mcp.json")
	if r.Files.User != userFile {
		t.Fatalf("Files.User = %s, want %s", r.Files.User, userFile)
	}
	want := []string{userFile + ": cannot be read: not a directory (fix: check that every directory on the path exists and the file is readable)"}
	if diff := cmp.Diff(want, errorsOf(r)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]row{{"p", ScopeProject, TrustRepo, Available, "", nil, "x"}}, rows(r)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}
