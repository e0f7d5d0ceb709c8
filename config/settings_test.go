package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte("{\n  // approve the repo's servers\n  \"enabledMcpjsonServers\": [\"a\", \"b\"],\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	array := filepath.Join(dir, "array.json")
	if err := os.WriteFile(array, []byte("[1]"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte("{\n  \"enableAllProjectMcpServers\": tru\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, arg string
		want      Settings
		wantErr   string
	}{
		{"inline", `{"enableAllProjectMcpServers": true}`, Settings{"enableAllProjectMcpServers": true}, ""},
		{"inline with spaces and jsonc", "  \n{\"permissions\": {\"deny\": [\"mcp__x\"],},}", Settings{"permissions": map[string]any{"deny": []any{"mcp__x"}}}, ""},
		{"file", file, Settings{"enabledMcpjsonServers": []any{"a", "b"}}, ""},
		{"inline syntax error", `{"enableAllProjectMcpServers": }`, nil,
			`--settings '{"enableAllProjectMcpServers": }': line 1, column 32: invalid JSON: invalid character '}' at start of value (fix: ` + settingsFix + `)`},
		{"file syntax error", broken, nil,
			`--settings ` + broken + `: line 2, column 33: invalid JSON: invalid literal: tru (fix: ` + settingsFix + `)`},
		{"missing file", filepath.Join(dir, "nope.json"), nil,
			`--settings ` + filepath.Join(dir, "nope.json") + `: cannot read the file: no such file or directory (fix: ` + settingsFix + `)`},
		{"trailing text", `{"a": 1}[`, nil,
			`--settings '{"a": 1}[': line 1, column 9: invalid JSON: invalid character '[' after top-level value (fix: ` + settingsFix + `)`},
		{"file not an object", array, nil,
			`--settings ` + array + `: line 1, column 1: the top level must be a JSON object, not an array (fix: ` + settingsFix + `)`},
		{"wrong type", `{"enableAllProjectMcpServers": "yes"}`, nil,
			`--settings '{"enableAllProjectMcpServers": "yes"}': "enableAllProjectMcpServers" must be true or false (fix: ` + settingsFix + `)`},
		{"wrong list", `{"enabledMcpjsonServers": "a"}`, nil,
			`--settings '{"enabledMcpjsonServers": "a"}': "enabledMcpjsonServers" must be an array of server names (fix: ` + settingsFix + `)`},
		{"long input is abbreviated", `{"permissions": {"allow": "mcp__github__get_issue"}}`, nil,
			`--settings '{"permissions": {"allow": "mcp__githu...': "permissions.allow" must be an array of rule strings such as "mcp__server__tool" (fix: ` + settingsFix + `)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadSettings(tt.arg)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettingsAccessors(t *testing.T) {
	s, err := LoadSettings(`{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["a"],
		"permissions": {"allow": ["mcp__a"], "deny": ["mcp__b__c"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if !s.EnableAllProjectMcpServers() {
		t.Error("EnableAllProjectMcpServers() = false")
	}
	if diff := cmp.Diff([]string{"a"}, s.EnabledMcpjsonServers()); diff != "" {
		t.Errorf("EnabledMcpjsonServers (-want +got):\n%s", diff)
	}
	allow, ask, deny := s.Permissions()
	if diff := cmp.Diff([][]string{{"mcp__a"}, nil, {"mcp__b__c"}}, [][]string{allow, ask, deny}); diff != "" {
		t.Errorf("Permissions (-want +got):\n%s", diff)
	}
	var empty Settings
	if empty.EnableAllProjectMcpServers() || empty.EnabledMcpjsonServers() != nil {
		t.Error("a nil Settings should read as empty")
	}
}
