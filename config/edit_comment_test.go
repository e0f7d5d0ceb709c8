package config

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetServerKeepsSameLineComment: a comment on the last entry's line
// stays with that entry when a server is added after it, a /* block */
// one as a // one does; the hujson patch moved only the // one, so the
// block comment ended up after the new entry, describing it instead.
func TestSetServerKeepsSameLineComment(t *testing.T) {
	const b = "    \"b\": {\n      \"command\": \"b\"\n    }"
	for _, tc := range []struct{ name, src, want string }{
		{"line comment, trailing comma",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // about a\n  },\n}\n",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // about a\n" + b + ",\n  },\n}\n"},
		{"block comment, trailing comma",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, /* about a */\n  },\n}\n",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, /* about a */\n" + b + ",\n  },\n}\n"},
		{"block comment",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"} /* about a */\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, /* about a */\n" + b + "\n  }\n}\n"},
		{"line comment",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"} // about a\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // about a\n" + b + "\n  }\n}\n"},
		{"comment on its own line below",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    // the end\n  },\n}\n",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n" + b + ",\n    // the end\n  },\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "mcp.json", tc.src, 0o600)
			if err := SetServer(path, []string{"mcpServers"}, "b", json.RawMessage(`{"command":"b"}`)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, readString(t, path)); diff != "" {
				t.Errorf("after the add (-want +got):\n%s", diff)
			}
			if _, err := RemoveServer(path, []string{"mcpServers"}, "b"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.src, readString(t, path)); diff != "" {
				t.Errorf("after the removal (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRemoveKeepsPreviousLineComment: removing an entry leaves the
// comments on the line before it (after the previous entry's comma, or
// after the opening bracket): they are not the removed entry's. The
// patch took a /* */ one along.
func TestRemoveKeepsPreviousLineComment(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"after the previous entry",
			"{\"mcpServers\": {\n  \"a\": {\"command\": \"a\"}, /* about a */\n  \"b\": {\"command\": \"b\"},\n  \"c\": {\"command\": \"c\"}\n}}\n",
			"{\"mcpServers\": {\n  \"a\": {\"command\": \"a\"}, /* about a */\n  \"c\": {\"command\": \"c\"}\n}}\n"},
		{"after the opening brace",
			"{\"mcpServers\": { /* my servers */\n  \"b\": {\"command\": \"b\"},\n  \"c\": {\"command\": \"c\"}\n}}\n",
			"{\"mcpServers\": { /* my servers */\n  \"c\": {\"command\": \"c\"}\n}}\n"},
		{"the removed entry's own comments go",
			"{\"mcpServers\": {\n  \"a\": {\"command\": \"a\"}, // about a\n  /* about b */\n  \"b\": {\"command\": \"b\"}, /* still b */\n  \"c\": {\"command\": \"c\"}\n}}\n",
			"{\"mcpServers\": {\n  \"a\": {\"command\": \"a\"}, // about a\n  \"c\": {\"command\": \"c\"}\n}}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "mcp.json", tc.src, 0o600)
			if found, err := RemoveServer(path, []string{"mcpServers"}, "b"); !found || err != nil {
				t.Fatalf("RemoveServer = %v, %v", found, err)
			}
			if diff := cmp.Diff(tc.want, readString(t, path)); diff != "" {
				t.Errorf("after the removal (-want +got):\n%s", diff)
			}
		})
	}
	// A rule in a permission list, laid out one per line, likewise.
	path := writeTemp(t, "settings.json", "{\"permissions\": {\"allow\": [\n  \"mcp__a\", /* a's */\n  \"mcp__b\"\n]}}\n", 0o600)
	if _, err := RemovePermissionRule(path, nil, "allow", "mcp__b"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("{\"permissions\": {\"allow\": [\n  \"mcp__a\" /* a's */\n]}}\n", readString(t, path)); diff != "" {
		t.Errorf("after removing a rule (-want +got):\n%s", diff)
	}
}
