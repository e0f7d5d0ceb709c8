//go:build linux

package gateway_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// A line the disk had room for only part of must not stay in the file:
// the next line, once there is room again, would be appended to it, and
// a reader (a SIEM reading JSON lines) would see one broken line where
// two calls were, or one that says what neither did. Every line of the
// file stays one JSON object. Needs root, for a small tmpfs that fills.
func TestAuditLogStaysWholeLinesWhenTheDiskFills(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mounting a small tmpfs (needs root): %v", err)
	}
	defer syscall.Unmount(dir, 0)
	path := filepath.Join(dir, "calls.jsonl")
	l, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(&gateway.AuditEntry{Tool: "mcp__a__first"}); err != nil {
		t.Fatal(err)
	}
	// Fill the rest of the disk.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, 4096)
	for {
		if _, err := f.Write(page); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	// A line longer than what is left of the audit file's page: part of
	// it fits, the rest does not.
	if err := l.Write(&gateway.AuditEntry{Tool: "mcp__a__" + strings.Repeat("x", 9000)}); err == nil {
		t.Fatal("a line larger than the disk's room was written whole; the test proves nothing")
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(&gateway.AuditEntry{Tool: "mcp__a__third"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e gateway.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("an audit line is not one JSON object (%v): %.200q…", err, sc.Text())
		}
		tools = append(tools, e.Tool)
	}
	if len(tools) != 2 || tools[0] != "mcp__a__first" || tools[1] != "mcp__a__third" {
		t.Fatalf("audit lines' tools: %.300q", tools)
	}
}

// smallFS mounts a tmpfs of 64 KiB and inodes inodes on a temporary
// folder, or skips the test (it needs root).
func smallFS(t *testing.T, inodes int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=64k,nr_inodes=%d", inodes)); err != nil {
		t.Skipf("mounting a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

func auditTools(t *testing.T, path string) []string {
	t.Helper()
	var tools []string
	for _, e := range readAudit(t, path) {
		tools = append(tools, e.Tool)
	}
	return tools
}

// A rotation that cannot create the next file (no inode left, as no room
// left) loses the line it was for, said in a warning; the lines after
// it, once there is room, are written: the log does not stay shut, every
// call unaudited, until the gateway restarts.
func TestAuditLogReopensAfterARotationFailed(t *testing.T) {
	dir := smallFS(t, 3) // the root, the log and one more
	path := filepath.Join(dir, "calls.jsonl")
	l, err := gateway.OpenAudit(path, &gateway.AuditOptions{MaxSize: 150, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(&gateway.AuditEntry{Tool: "mcp__a__first"}); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "another"), nil, 0o600); err == nil {
		t.Fatal("the tmpfs had an inode to spare; the test proves nothing")
	}
	if err := l.Write(&gateway.AuditEntry{Tool: "mcp__a__second"}); err == nil {
		t.Fatal("a rotation with no inode left to make the next file succeeded; the test proves nothing")
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(&gateway.AuditEntry{Tool: "mcp__a__third"}); err != nil {
		t.Fatalf("the line after a failed rotation, with room again: %v", err)
	}
	if got := auditTools(t, path); len(got) != 1 || got[0] != "mcp__a__third" {
		t.Fatalf("the log after the failed rotation holds %q, want the third line", got)
	}
	if got := auditTools(t, path+".1"); len(got) != 1 || got[0] != "mcp__a__first" {
		t.Fatalf("the rotated log holds %q, want the first line", got)
	}
}

// An audit log made append-only (chattr +a, so that nobody can cut it)
// cannot be rotated: its lines go on into it, past its size, and the
// older files are moved once at most, not with each line (each move
// would lose the oldest).
func TestAuditLogAppendOnlyKeepsEveryLine(t *testing.T) {
	dir := smallFS(t, 64)
	path := filepath.Join(dir, "calls.jsonl")
	for i, name := range []string{path + ".1", path + ".2"} {
		if err := os.WriteFile(name, fmt.Appendf(nil, `{"tool":"old%d"}`+"\n", i+1), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := gateway.OpenAudit(path, &gateway.AuditOptions{MaxSize: 150, Keep: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if out, err := exec.Command("chattr", "+a", path).CombinedOutput(); err != nil {
		t.Skipf("chattr +a: %v %s", err, out)
	}
	defer exec.Command("chattr", "-a", path).Run()
	var want []string
	for i := range 6 {
		tool := fmt.Sprintf("mcp__a__t%d", i)
		want = append(want, tool)
		if err := l.Write(&gateway.AuditEntry{Tool: tool}); err != nil {
			t.Errorf("line %d: %v", i, err)
		}
	}
	if got := auditTools(t, path); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the append-only log holds %q, want %q", got, want)
	}
	var old []string
	for _, name := range []string{path + ".1", path + ".2", path + ".3"} {
		if _, err := os.Stat(name); err == nil {
			old = append(old, auditTools(t, name)...)
		}
	}
	if fmt.Sprint(old) != "[old1 old2]" {
		t.Errorf("the older files hold %q, want old1 and old2", old)
	}
}
