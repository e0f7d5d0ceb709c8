package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestEditKeepsOwner: an edit made as root (sudo switchboard mcp add, a
// provisioning script) of a user's file keeps the file the user's. The
// new copy the rename puts in place was root's, and, private (0600), the
// user could no longer read their own configuration.
func TestEditKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file to another user")
	}
	const uid, gid = 65534, 65534
	path := writeTemp(t, "mcp.json", "{\"mcpServers\": {}}\n", 0o600)
	if err := os.Chown(path, uid, gid); err != nil {
		t.Skip(err)
	}
	if err := SetServer(path, []string{"mcpServers"}, "b", json.RawMessage(`{"command":"b"}`)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != uid || st.Gid != gid || fi.Mode().Perm() != 0o600 {
		t.Errorf("after the edit: owner %d:%d, mode %v; want %d:%d, 0600", st.Uid, st.Gid, fi.Mode().Perm(), uid, gid)
	}
}
