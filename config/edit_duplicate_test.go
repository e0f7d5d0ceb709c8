package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestEditDuplicateKey: a name written twice in one object is read the
// way JSON decoders read it, the last one used; the edit's own lookup
// found the first. `mcp add --force a` then replaced the copy nobody used
// and said "Replaced", `mcp remove a` took it out and left the server
// running, and two "mcpServers" objects sent a new server into the one
// the loader ignores. Every such edit is refused with the duplicate's
// position, and the file is left as it was.
func TestEditDuplicateKey(t *testing.T) {
	const twice = "{\"mcpServers\": {\n  \"a\": {\"command\": \"old\"},\n  \"a\": {\"command\": \"used\"}\n}}\n"
	const twoObjects = "{\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}},\n  \"mcpServers\": {\"b\": {\"command\": \"y\"}}\n}\n"
	const twoProjects = "{\"projects\": {\n  \"/w\": {\"mcpServers\": {}},\n  \"/w\": {\"disabledMcpServers\": [\"a\"]}\n}}\n"
	const twoPermissions = "{\n  \"permissions\": {\"allow\": [\"mcp__a\"]},\n  \"permissions\": {\"deny\": [\"mcp__a\"]}\n}\n"
	def := json.RawMessage(`{"command":"new"}`)
	tests := []struct {
		name, src string
		edit      func(path string) error
		line, col int
	}{
		{"replace", twice, func(p string) error { return SetServer(p, []string{"mcpServers"}, "a", def) }, 3, 3},
		{"remove", twice, func(p string) error { _, err := RemoveServer(p, []string{"mcpServers"}, "a"); return err }, 3, 3},
		{"add under a duplicate object", twoObjects, func(p string) error { return SetServer(p, []string{"mcpServers"}, "c", def) }, 3, 3},
		{"remove under a duplicate object", twoObjects, func(p string) error { _, err := RemoveServer(p, []string{"mcpServers"}, "b"); return err }, 3, 3},
		{"enable", twoProjects, func(p string) error { return SetLocalEnablement(p, "/w", "a", true) }, 3, 3},
		{"allow a rule", twoPermissions, func(p string) error { _, _, err := SetPermissionRule(p, nil, "allow", "mcp__b"); return err }, 3, 3},
		{"remove a rule", twoPermissions, func(p string) error { _, err := RemovePermissionRule(p, nil, "", "mcp__a"); return err }, 3, 3},
		{"hide a tool", twoProjects, func(p string) error { return SetToolsHidden(p, []string{"projects", "/w"}, "a", []string{"t"}, true) }, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "mcp.json", tt.src, 0o600)
			err := tt.edit(path)
			var d Diagnostic
			if !errors.As(err, &d) || d.File != path || d.Line != tt.line || d.Col != tt.col ||
				!strings.Contains(d.Message, "more than once") || d.Fix == "" {
				t.Errorf("err = %v, want a Diagnostic at %s:%d:%d saying the name is written more than once", err, path, tt.line, tt.col)
			}
			if got := readString(t, path); got != tt.src {
				t.Errorf("the file was changed:\n%s", got)
			}
		})
	}
}

// TestEditWrongKind: a value on the edit's way that is not the object or
// list it must be ("mcpServers": null, a list given as a string) is
// reported at its file:line:col with the fix, not as "editing …:
// /mcpServers is not an object".
func TestEditWrongKind(t *testing.T) {
	def := json.RawMessage(`{"command":"new"}`)
	tests := []struct {
		name, src string
		edit      func(path string) error
		line, col int
		msg       string
	}{
		{"servers null", "{\n  \"mcpServers\": null\n}\n",
			func(p string) error { return SetServer(p, []string{"mcpServers"}, "a", def) }, 2, 17,
			`"mcpServers" is null, not an object`},
		{"list a string", "{\"projects\": {\"/w\": {\n  \"disabledMcpServers\": \"a\"\n}}}\n",
			func(p string) error { return SetLocalEnablement(p, "/w", "b", false) }, 2, 25,
			`"disabledMcpServers" is a string, not an array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "mcp.json", tt.src, 0o600)
			err := tt.edit(path)
			var d Diagnostic
			if !errors.As(err, &d) || d.File != path || d.Line != tt.line || d.Col != tt.col || d.Message != tt.msg || d.Fix == "" {
				t.Errorf("err = %v, want a Diagnostic at %s:%d:%d: %s, with a fix", err, path, tt.line, tt.col, tt.msg)
			}
			if got := readString(t, path); got != tt.src {
				t.Errorf("the file was changed:\n%s", got)
			}
		})
	}
}
