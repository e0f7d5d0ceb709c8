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
// it has the file's own mode, whatever a backup left there before had,
// and it is written in place of a symbolic link there, never through it.
// Before, an older 0644 backup kept its mode and got the token of a 0600
// ~/.claude.json, and a link there had its target overwritten.
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
	fi, err := os.Lstat(backup)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup: %v, mode %v; want 0600 like %s", err, fi.Mode(), claude)
	}
	if b, _ := os.ReadFile(backup); !strings.Contains(string(b), "ghp_planted_literal_token_0001") {
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
	if out, errOut, code := w.run(false, args...); code != 0 {
		t.Fatalf("--move again: exit %d: %s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(other); string(b) != "mine\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if fi, err := os.Lstat(backup); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("backup: %v %v; want a regular file", err, fi)
	}
}
