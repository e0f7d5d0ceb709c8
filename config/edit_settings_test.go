package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

func TestPermissionRuleEdits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	orig := `{
  // my own settings
  "theme": "dark", // keep me
  "permissions": {
    "allow": [
      "mcp__time", // the clock is harmless
    ],
  },
}
`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Allow: appended after the commented rule, comments kept.
	if moved, changed, err := config.SetPermissionRule(path, nil, "allow", "mcp__echo__echo"); err != nil || !changed || moved != nil {
		t.Fatalf("SetPermissionRule = %v, %v, %v", moved, changed, err)
	}
	got := read()
	for _, want := range []string{"// my own settings", "// keep me", `"mcp__time", // the clock is harmless`, `"mcp__echo__echo",`} {
		if !strings.Contains(got, want) {
			t.Errorf("file lacks %q:\n%s", want, got)
		}
	}
	s, err := config.ParseSettings(path, []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	allow, _, deny := s.Permissions()
	if diff := cmp.Diff([]string{"mcp__time", "mcp__echo__echo"}, allow); diff != "" || deny != nil {
		t.Errorf("allow (-want +got):\n%s deny %v", diff, deny)
	}
	// Again: nothing changes.
	before := read()
	if _, changed, err := config.SetPermissionRule(path, nil, "allow", "mcp__echo__echo"); err != nil || changed {
		t.Fatalf("second SetPermissionRule changed=%v err=%v", changed, err)
	}
	if read() != before {
		t.Errorf("a no-op edit rewrote the file")
	}
	// Deny moves it out of allow.
	if moved, changed, err := config.SetPermissionRule(path, nil, "deny", "mcp__echo__echo"); err != nil || !changed || !cmp.Equal(moved, []string{"allow"}) {
		t.Fatalf("deny: moved %v changed %v err %v", moved, changed, err)
	}
	s, _ = config.ParseSettings(path, []byte(read()))
	allow, _, deny = s.Permissions()
	if !cmp.Equal(allow, []string{"mcp__time"}) || !cmp.Equal(deny, []string{"mcp__echo__echo"}) {
		t.Errorf("after deny: allow %v deny %v\n%s", allow, deny, read())
	}
	// Remove: back to the file it started from.
	if removed, err := config.RemovePermissionRule(path, nil, "", "mcp__echo__echo"); err != nil || !cmp.Equal(removed, []string{"deny"}) {
		t.Fatalf("remove = %v, %v", removed, err)
	}
	if diff := cmp.Diff(orig, read()); diff != "" {
		t.Errorf("set then remove changed the file (-orig +got):\n%s", diff)
	}
	if removed, err := config.RemovePermissionRule(path, nil, "", "mcp__nothing"); err != nil || removed != nil {
		t.Errorf("remove of an absent rule = %v, %v", removed, err)
	}
}

func TestPermissionRuleLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "settings.json") // neither file nor directory exists
	ws := "/work/proj"
	obj := config.SettingsLocalPath(ws)
	if _, _, err := config.SetPermissionRule(path, obj, "allow", `mcp__fs__write_file(path:"/tmp/**")`); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new settings file mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	s, err := config.ParseSettings(path, b)
	if err != nil {
		t.Fatal(err)
	}
	entry := s["projects"].(map[string]any)[ws].(map[string]any)
	allow, _, _ := config.Settings(entry).Permissions()
	if !cmp.Equal(allow, []string{`mcp__fs__write_file(path:"/tmp/**")`}) {
		t.Errorf("local allow = %v:\n%s", allow, b)
	}
	if keys, err := config.LocalKeys(path, ws); err != nil || !cmp.Equal(keys, []string{ws}) {
		t.Errorf("LocalKeys = %v, %v", keys, err)
	}
	if removed, err := config.RemovePermissionRule(path, obj, "allow", `mcp__fs__write_file(path:"/tmp/**")`); err != nil || len(removed) != 1 {
		t.Fatalf("remove = %v, %v", removed, err)
	}
	if b, _ := os.ReadFile(path); strings.Join(strings.Fields(string(b)), "") != "{}" {
		t.Errorf("after removing the only rule:\n%s", b)
	}
	// A file that does not parse is left alone, with file:line:col.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\n  \"permissions\": {\n"), 0o600)
	if _, _, err := config.SetPermissionRule(bad, nil, "allow", "mcp__x"); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad file: %v", err)
	}
	os.WriteFile(bad, []byte(`{"permissions": {"allow": "mcp__x"}}`), 0o600)
	if _, _, err := config.SetPermissionRule(bad, nil, "allow", "mcp__y"); err == nil || !strings.Contains(err.Error(), "not an array") {
		t.Errorf("allow not an array: %v", err)
	}
}
