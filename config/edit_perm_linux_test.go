package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditReadOnlyFile: a file the user made read-only is not replaced
// behind their back (the rename an edit ends with needs only the folder
// to be writable); the edit is refused, naming the file and the fix.
func TestEditReadOnlyFile(t *testing.T) {
	const src = "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}\n"
	path := writeTemp(t, "mcp.json", src, 0o444)
	err := SetServer(path, []string{"mcpServers"}, "b", json.RawMessage(`{"command":"b"}`))
	var d Diagnostic
	if !errors.As(err, &d) || d.File != path || !strings.Contains(d.Message, "read-only") || !strings.Contains(d.Fix, "chmod u+w "+path) {
		t.Errorf("SetServer: err = %v, want a Diagnostic naming the file as read-only and chmod u+w", err)
	}
	if _, err := RemoveServer(path, []string{"mcpServers"}, "a"); !errors.As(err, &d) {
		t.Errorf("RemoveServer: err = %v, want a Diagnostic", err)
	}
	if got := readString(t, path); got != src {
		t.Errorf("the file was changed:\n%s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode %v, want 0444", fi.Mode().Perm())
	}
}

// TestEditFolderNotWritable: a writable file in a folder the user cannot
// write (the lock and the new copy go beside the file) is refused naming
// the folder and the fix, not with "open mcp.json.lock: no such file or
// directory".
func TestEditFolderNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes any folder whatever its mode")
	}
	const src = "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}\n"
	path := writeTemp(t, "mcp.json", src, 0o600)
	dir := filepath.Dir(path)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	err := SetServer(path, []string{"mcpServers"}, "b", json.RawMessage(`{"command":"b"}`))
	var d Diagnostic
	if !errors.As(err, &d) || d.File != path || !strings.Contains(d.Message, "folder") || !strings.Contains(d.Fix, "chmod u+w "+dir) {
		t.Errorf("SetServer: err = %v, want a Diagnostic naming the folder and chmod u+w", err)
	}
	if got := readString(t, path); got != src {
		t.Errorf("the file was changed:\n%s", got)
	}
}
