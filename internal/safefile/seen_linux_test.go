//go:build linux && (amd64 || arm64)

package safefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestQuickStatSameFileOnly walks one file through every change a store
// file sees (created, written in place, replaced by a rename, its mode
// changed, removed) and checks that the raw stat calls it "the same"
// only where os.Stat's answer (Seen.Changed without it) is "not
// changed" too — and that it does answer on a local file system, so the
// check is not vacuous.
func TestQuickStatSameFileOnly(t *testing.T) {
	dir := t.TempDir()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if !localFS(int64(fs.Type)) {
		t.Skipf("the temporary directory is on file system type %#x, not one quickStat trusts", fs.Type)
	}
	// The directory comes later, as a fresh home's does.
	dir = filepath.Join(dir, "home")
	path := filepath.Join(dir, "tool-pins.json")
	write := func(data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var seen Seen
	// bySlowPath is Changed's answer without the raw stat.
	bySlowPath := func() bool {
		t.Helper()
		plain := Seen{fi: seen.fi}
		return (&plainSeen{plain}).changed(path)
	}
	check := func(step string, wantSame bool) {
		t.Helper()
		got := seen.quick.same(path, seen.fi)
		if got != wantSame {
			t.Errorf("%s: quickStat.same = %v, want %v", step, got, wantSame)
		}
		if got && bySlowPath() {
			t.Errorf("%s: quickStat calls it the same file where os.Stat sees a change", step)
		}
		if !seen.quick.local {
			t.Errorf("%s: quickStat did not take the raw stat on a local file system", step)
		}
	}

	seen.Remember(path)
	if seen.quick.same(path, seen.fi) || seen.quick.local || seen.Changed(path) {
		t.Fatal("no directory yet: want os.Stat's answer (not changed), and the file system asked again later")
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	check("missing, and missing before", true)
	write(`{"a":1}`)
	check("created", false)
	seen.Remember(path)
	check("unchanged", true)
	write(`{"a":22}`)
	check("written in place, longer", false)
	seen.Remember(path)
	// Same size, a later modification time.
	later := time.Now().Add(2 * time.Second)
	write(`{"a":33}`)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	check("written in place, same size", false)
	seen.Remember(path)
	next := filepath.Join(dir, "next.json")
	if err := os.WriteFile(next, []byte(`{"a":33}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(next, later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	check("replaced by a rename (same bytes and time, another inode)", false)
	seen.Remember(path)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	check("mode changed", false)
	seen.Remember(path)
	check("unchanged again", true)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	check("removed", false)
}

// plainSeen is Seen deciding by os.Stat alone.
type plainSeen struct{ f Seen }

func (p *plainSeen) changed(path string) bool {
	p.f.quick = quickStat{path: path} // local false: same never answers
	return p.f.Changed(path)
}

// TestQuickStatLeavesOtherFileSystemsToStat: off the local file systems
// (here /proc, standing in for a network one) the raw stat is not made.
func TestQuickStatLeavesOtherFileSystemsToStat(t *testing.T) {
	path := "/proc/self/status"
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var q quickStat
	if q.same(path, fi) {
		t.Error("same answered for a file on /proc")
	}
	if q.local {
		t.Error("/proc taken for a local file system")
	}
	// A path fstatat would read only up to its NUL is os.Stat's to refuse.
	var nul quickStat
	if nul.same(filepath.Join(t.TempDir(), "a\x00b"), nil) || nul.path != "" {
		t.Error("same answered for a path holding a NUL byte")
	}
}
