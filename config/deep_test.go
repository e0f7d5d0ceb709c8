package config

import (
	"encoding/json"
	"errors"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDeepNesting: a hostile file nested millions deep must be refused,
// not crash the process by exhausting the parser's stack.
func TestDeepNesting(t *testing.T) {
	data := `{"mcpServers": {"a": ` + strings.Repeat("[", 3_000_000)
	_, _, diags := ParseServers("f", []byte(data))
	want := []Diagnostic{{
		Severity: SeverityError, Position: Position{File: "f", Line: 1, Col: 21 + maxDepth - 1},
		Message: "invalid JSON: nested more than 500 levels deep",
		Fix:     "flatten the document: a configuration needs only a few levels",
	}}
	if diff := cmp.Diff(want, diags); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	// Brackets inside strings and comments do not count.
	ok := `{"mcpServers": {"a": {"command": "` + strings.Repeat("[", 1000) + `"}}} // ` + strings.Repeat("{", 1000) +
		"\n/* " + strings.Repeat("[", 1000) + " */"
	if servers, _, diags := ParseServers("f", []byte(ok)); len(diags) != 0 || len(servers) != 1 {
		t.Errorf("brackets in strings and comments: %d servers, diagnostics %v", len(servers), diags)
	}
}

// TestEditDeepNesting: an edit reads the file with the same parser, so a
// file nested millions deep (a repository's .mcp.json, for `mcp add
// --scope project`) must be refused with its position, not crash the
// process; the file is left as it was.
func TestEditDeepNesting(t *testing.T) {
	// A smaller stack makes the crash this guards against come at once
	// rather than after a minute and a gigabyte.
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	data := "{\n  \"mcpServers\": {\"a\": " + strings.Repeat("[", 3_000_000)
	path := writeTemp(t, ".mcp.json", data, 0o644)
	want := Position{File: path, Line: 2, Col: 23 + maxDepth - 2}
	check := func(what string, err error) {
		t.Helper()
		var d Diagnostic
		if !errors.As(err, &d) || d.Position != want || !strings.Contains(d.Message, "nested more than 500 levels deep") {
			t.Errorf("%s: err = %v, want a Diagnostic at %s", what, err, want)
		}
	}
	check("SetServer", SetServer(path, []string{"mcpServers"}, "b", json.RawMessage(`{"command":"b"}`)))
	_, err := RemoveServer(path, []string{"mcpServers"}, "a")
	check("RemoveServer", err)
	_, err = HasServer(path, []string{"mcpServers"}, "a")
	check("HasServer", err)
	if got := readString(t, path); got != data {
		t.Error("the file was changed")
	}
}
