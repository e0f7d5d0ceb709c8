//go:build linux

package gateway_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
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
