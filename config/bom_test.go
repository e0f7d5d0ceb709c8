package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestUTF16File: Notepad's "Unicode" saves UTF-16. Such a file is named
// for what it is, with the fix (save it as UTF-8), by the loader and by an
// edit, not reported as a stray byte '\xff' to "correct at that position".
func TestUTF16File(t *testing.T) {
	const text = `{"mcpServers": {"a": {"command": "a-mcp"}}}`
	utf16 := func(bigEndian, mark bool) []byte {
		var b []byte
		if mark {
			b = append(b, 0xFF, 0xFE)
			if bigEndian {
				b = []byte{0xFE, 0xFF}
			}
		}
		for _, c := range []byte(text) {
			if bigEndian {
				b = append(b, 0, c)
			} else {
				b = append(b, c, 0)
			}
		}
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"little-endian with mark", utf16(false, true)},
		{"big-endian with mark", utf16(true, true)},
		{"little-endian", utf16(false, false)},
		{"big-endian", utf16(true, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, d Diagnostic) {
				t.Helper()
				if d.Line != 1 || d.Col != 1 || !strings.Contains(d.Message, "UTF-16") || !strings.Contains(d.Fix, "UTF-8") {
					t.Errorf("%s: %v, want a diagnostic at 1:1 naming UTF-16 and the fix UTF-8", what, d)
				}
			}
			_, _, diags := ParseServers("f", tc.data)
			if len(diags) != 1 {
				t.Fatalf("ParseServers: %v", diags)
			}
			check("ParseServers", diags[0])
			path := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			var d Diagnostic
			if err := SetServer(path, []string{"mcpServers"}, "b", json.RawMessage(`{"command": "b"}`)); !errors.As(err, &d) {
				t.Fatalf("SetServer: %v, want a Diagnostic", err)
			}
			check("SetServer", d)
			if got, _ := os.ReadFile(path); !bytes.Equal(got, tc.data) {
				t.Error("SetServer changed the file")
			}
		})
	}
}

// TestCommentsOnlyFile: a file that holds only comments (a note left
// for later, every server commented out) says so, with the fix, rather
// than "unexpected EOF"; an edit writes its object below the comments
// and keeps them.
func TestCommentsOnlyFile(t *testing.T) {
	const src = "// my servers will go here\n/* later */\n"
	_, _, diags := ParseServers("f", []byte(src))
	if len(diags) != 1 || diags[0].Line != 3 || diags[0].Col != 1 || !strings.Contains(diags[0].Message, "only comments") {
		t.Errorf("ParseServers: %v, want one diagnostic at 3:1 saying the file holds only comments", diags)
	}
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SetServer(path, []string{"mcpServers"}, "a", json.RawMessage(`{"command": "a"}`)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := src + "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\"\n    }\n  }\n}\n"; string(got) != want {
		t.Errorf("after the edit:\n%s\nwant:\n%s", got, want)
	}
	if _, _, diags := ParseServers("f", got); len(diags) != 0 {
		t.Errorf("after the edit: %v", diags)
	}
}
