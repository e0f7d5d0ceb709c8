package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSettingsLayers reads every layer from real files: the order is
// managed, flag, local (file order), user, project; only the project
// layer is untrusted; a broken file is a layer with Err; and the
// repository's settings can open neither the network nor a sandbox.
func TestReadSettingsLayers(t *testing.T) {
	dir := t.TempDir()
	home, ws, managed := filepath.Join(dir, "sb"), filepath.Join(dir, "ws"), filepath.Join(dir, "etc")
	link := filepath.Join(dir, "wslink")
	for _, d := range []string{home, filepath.Join(ws, ".switchboard"), managed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(ManagedSettingsPath(managed), `{"permissions": {"deny": ["mcp__x"]}}`)
	// Both spellings of the workspace are local layers, the exact one first
	// though the link comes first in the file; /elsewhere is not.
	write(UserSettingsPath(home), `{
	  // user
	  "sandbox": {"project": false},
	  "projects": {
	    "`+link+`": {"permissions": {"allow": ["mcp__a"]}},
	    "`+ws+`": {"permissions": {"allow": ["mcp__b"]}},
	    "/elsewhere": {"permissions": {"allow": ["mcp__c"]}}
	  }
	}`)
	write(ProjectSettingsPath(ws), `{"allowPrivateNetworkForProjectServers": true, "sandbox": {"user": false}}`)

	st := ReadSettings(SettingsPlaces{Home: home, Workspace: ws, ManagedDir: managed,
		Flag: Settings{"permissions": map[string]any{"ask": []any{"mcp__y"}}}})
	var got []string
	for _, l := range st.Layers {
		if l.Err != nil {
			t.Errorf("%s: %v", l.Label(), l.Err)
		}
		got = append(got, string(l.Scope)+":"+l.Key)
	}
	want := []string{"managed:", "flag:", "local:" + ws, "local:" + link, "user:", "project:"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("layers = %q\nwant     %q", got, want)
	}
	if n := len(st.Trusted()); n != 5 {
		t.Errorf("%d trusted layers, want 5 (all but the project's)", n)
	}
	if st.AllowPrivateNetwork() {
		t.Error("the project's settings opened the private network")
	}
	if d := st.SandboxDefaults(); d[ScopeUser] != nil || d[ScopeProject] == nil {
		t.Errorf("sandbox defaults %v: want the user's own for project scope and nothing from the project's file for user scope", d)
	}
	if _, ok := st.Layers[len(st.Layers)-2].Settings["projects"]; ok {
		t.Error("the user layer holds the projects object")
	}

	// A broken user file is one layer with Err and the position of the
	// mistake, not an error, and no local layer.
	write(UserSettingsPath(home), "{\n  \"permissions\": {\"allow\": [\"mcp__a\",]]\n}")
	st = ReadSettings(SettingsPlaces{Home: home, Workspace: ws})
	if len(st.Problems()) != 1 || st.Problems()[0].Scope != SettingsUser || !strings.Contains(st.Problems()[0].Err.Error(), "line 2") {
		t.Fatalf("broken user file: problems %+v", st.Problems())
	}
}
