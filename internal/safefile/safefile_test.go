package safefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
	"github.com/switchboard-mcp/switchboard/internal/safefile/safefiletest"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := safefile.ReadFile(p)
	if err != nil || string(got) != `{"mcpServers": {}}` {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	// A link to a regular file is read where it points.
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(p, link); err != nil {
		t.Skip(err)
	}
	data, fi, err := safefile.Read(link, 0)
	if err != nil || string(data) != `{"mcpServers": {}}` || fi.Mode().Perm() != 0o600 {
		t.Fatalf("Read(link) = %q, %v, %v", data, fi, err)
	}
}

func TestReadMissing(t *testing.T) {
	_, err := safefile.ReadFile(filepath.Join(t.TempDir(), "nope.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
	if _, _, ok := safefile.Refused(err); ok {
		t.Error("a missing file counts as refused")
	}
}

// The attacks of issue 28 point 7: a link to /dev/zero (an endless read)
// and a named pipe (an open that waits for a writer), each refused at once
// with an error that says what the file is.
func TestReadRefusesSpecialFiles(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		make       func(t testing.TB, path string)
	}{
		{"dev zero", "it is a character device (such as /dev/zero or a terminal), not a regular file", safefiletest.DevZero},
		{"fifo", "it is a named pipe (FIFO), not a regular file", safefiletest.FIFO},
		{"directory", "it is a directory, not a regular file", func(t testing.TB, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), ".mcp.json")
			tc.make(t, p)
			data, err := safefile.ReadFile(p)
			if !errors.Is(err, safefile.ErrNotRegular) {
				t.Fatalf("ReadFile = %d bytes, %v; want ErrNotRegular", len(data), err)
			}
			reason, fix, ok := safefile.Refused(err)
			if !ok || reason != tc.want || fix == "" {
				t.Errorf("Refused = %q, %q, %v; want %q", reason, fix, ok, tc.want)
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	// A sparse file one byte over the cap: refused from its size, unread.
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(safefile.MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = safefile.ReadFile(big)
	if !errors.Is(err, safefile.ErrTooLarge) {
		t.Fatalf("ReadFile(MaxSize+1) err = %v, want ErrTooLarge", err)
	}
	if reason, _, _ := safefile.Refused(err); reason != "it is larger than 8 MiB, the most a configuration file may hold" {
		t.Errorf("reason = %q", reason)
	}
	// Exactly the cap is read.
	if err := os.Truncate(big, safefile.MaxSize); err != nil {
		t.Fatal(err)
	}
	if data, err := safefile.ReadFile(big); err != nil || len(data) != safefile.MaxSize {
		t.Fatalf("ReadFile(MaxSize) = %d bytes, %v", len(data), err)
	}
	// A file whose size says less than it holds (procfs says 0) is cut
	// by the read itself.
	if runtime.GOOS == "linux" {
		if _, _, err := safefile.Read("/proc/self/maps", 16); !errors.Is(err, safefile.ErrTooLarge) {
			t.Errorf("Read(/proc/self/maps, 16) err = %v, want ErrTooLarge", err)
		}
	}
}
