//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallGatewayBackupIsPrivate: the backup --move keeps of a client's
// file holds what the file held — a literal token in a server's env — so
// it is a new file with the file's own mode; an older backup is kept (it
// may be the only copy of the file before an earlier move), and a
// symbolic link there is never written through. Before, an older 0644
// backup kept its mode and got the token of a 0600 ~/.claude.json, a
// link there had its target overwritten, and each move replaced the
// last one's backup.
func TestInstallGatewayBackupIsPrivate(t *testing.T) {
	w := newMgmtWorld(t)
	w.write(filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"), `{"mcpServers": {"gh": {"command": "github-mcp-server", "args": ["stdio"]}}}`)
	claude := filepath.Join(w.home, ".claude.json")
	w.write(claude, `{"mcpServers": {"gh": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_TOKEN": "ghp_planted_literal_token_0001"}}}}`)
	if err := os.Chmod(claude, 0o600); err != nil {
		t.Fatal(err)
	}
	backup := claude + ".switchboard-backup"
	w.write(backup, "an older backup\n") // 0644
	args := []string{"mcp", "install-gateway", "--client", "claude-code", "--command", "/opt/sb/switchboard", "--move"}
	if out, errOut, code := w.run(false, args...); code != 0 {
		t.Fatalf("--move: exit %d: %s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(backup); string(b) != "an older backup\n" {
		t.Errorf("the older backup was replaced: %q", b)
	}
	fi, err := os.Lstat(backup + ".2")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup: %v, mode %v; want %s.2, 0600 like %s", err, fi, backup, claude)
	}
	if b, _ := os.ReadFile(backup + ".2"); !strings.Contains(string(b), "ghp_planted_literal_token_0001") {
		t.Errorf("backup does not hold the file as it was:\n%s", b)
	}

	// Again, with the backup a link to another file of yours.
	w.write(claude, `{"mcpServers": {"gh": {"command": "github-mcp-server", "args": ["stdio"]}}}`)
	other := filepath.Join(w.home, "other-file")
	w.write(other, "mine\n")
	os.Remove(backup)
	if err := os.Symlink(other, backup); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := w.run(false, args...)
	if code != 0 {
		t.Fatalf("--move again: exit %d: %s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(other); string(b) != "mine\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if b, err := os.ReadFile(backup + ".3"); err != nil || !strings.Contains(string(b), `"gh"`) || !strings.Contains(out, ".switchboard-backup.3") {
		t.Errorf("backup: %v %q; want it in %s.3, and named in %q", err, b, backup, out)
	}
}
