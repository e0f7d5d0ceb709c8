package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A file that begins with a UTF-8 byte order mark (Notepad writes one) is
// read as if it had none, its positions are right, and an edit keeps the
// mark, the comments and the other entries.
func TestByteOrderMark(t *testing.T) {
	f := newFixture(t)
	mcp := f.write(filepath.Join(f.proj, ".mcp.json"), "\ufeff{\n  // ours\n  \"mcpServers\": {\"a\": {\"command\": \"a-mcp\"}}\n}\n")
	r := f.load(f.opts())
	if len(r.Diagnostics) != 0 {
		t.Fatalf("diagnostics: %v", r.Diagnostics)
	}
	a := r.Server("a")
	if a == nil || a.Effective.Command != "a-mcp" || a.Pos.Line != 3 {
		t.Fatalf("server a: %+v", a)
	}
	if err := SetServer(mcp, []string{"mcpServers"}, "b", json.RawMessage(`{"command": "b-mcp"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(mcp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, []byte("\ufeff{\n  // ours\n")) || !bytes.Contains(got, []byte(`"a-mcp"`)) || !bytes.Contains(got, []byte(`"b-mcp"`)) {
		t.Errorf("after the edit:\n%q", got)
	}
	if found, err := RemoveServer(mcp, []string{"mcpServers"}, "b"); !found || err != nil {
		t.Fatalf("remove: %v, %v", found, err)
	}
	if got, _ := os.ReadFile(mcp); !bytes.HasPrefix(got, []byte("\ufeff{\n  // ours\n")) || bytes.Contains(got, []byte("b-mcp")) || !bytes.Contains(got, []byte("a-mcp")) {
		t.Errorf("after the removal:\n%q", got)
	}
	// A syntax error after the mark is placed where an editor shows it.
	f.write(mcp, "\ufeff{\n  \"mcpServers\": {\"a\": }\n}\n")
	r = f.load(f.opts())
	if len(r.Diagnostics) != 1 || r.Diagnostics[0].Position.Line != 2 {
		t.Errorf("diagnostics of a broken file with a mark: %+v", r.Diagnostics)
	}
}
