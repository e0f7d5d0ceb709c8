package config

import (
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
