//go:build unix

package gateway_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// Whoever can write the audit log's folder (a shared /var/log/…, a
// folder a server was let write) must not have the gateway append its
// lines to another file by leaving a symbolic link under the log's name:
// the link is refused and its target is left as it was.
func TestAuditLogRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(victim, []byte("ssh-ed25519 AAAA… alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "calls.jsonl")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	l, err := gateway.OpenAudit(path, nil)
	if err == nil {
		l.Write(&gateway.AuditEntry{Tool: "mcp__evil__x"})
		l.Close()
	}
	got, rerr := os.ReadFile(victim)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil || string(got) != "ssh-ed25519 AAAA… alice\n" {
		t.Fatalf("OpenAudit through a symbolic link: error %v; its target now holds %q", err, got)
	}
	if !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("the refusal does not say why: %v", err)
	}
}

// A named pipe under the log's name is refused too: lines written to it
// are read by whoever holds its other end, not kept, and a pipe that
// nobody reads would hold the gateway at its first line.
func TestAuditLogRefusesANamedPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A reader, so that an open that follows the pipe returns (and the
	// test fails) rather than waiting.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, err := gateway.OpenAudit(path, nil)
	if err == nil {
		l.Close()
		t.Fatal("OpenAudit opened a named pipe as the audit log")
	}
	if !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("the refusal does not say why: %v", err)
	}
}

// An audit log that exists readable by others (made by hand, or by
// another tool) is kept as it is — a log shipper may read it — but the
// gateway says so, as it creates its own 0600; one of its own says nothing.
func TestAuditLogSaysItIsReadableByOthers(t *testing.T) {
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o644, true}, {0o600, false}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "calls.jsonl")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		var logged strings.Builder
		l, err := gateway.OpenAudit(path, &gateway.AuditOptions{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		if got := strings.Contains(logged.String(), "can be read by others"); got != tc.warn {
			t.Errorf("an audit log of mode %v: warned %v, want %v (log: %q)", tc.mode, got, tc.warn, logged.String())
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != tc.mode {
			t.Errorf("the audit log's mode changed: %v, %v", fi.Mode(), err)
		}
	}
}
