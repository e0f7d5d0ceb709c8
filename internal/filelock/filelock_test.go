package filelock

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// childEnv makes the test binary a child that increments a counter file
// under the lock (see TestMain): the value is "<file>:<times>".
const childEnv = "SWITCHBOARD_TEST_FILELOCK_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		i := strings.LastIndexByte(spec, ':')
		n, _ := strconv.Atoi(spec[i+1:])
		for range n {
			if err := increment(spec[:i]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// increment is a read-modify-write of the number in path, replacing the
// file by a rename as the config edits do: without the lock, increments
// made at once are lost.
func increment(path string) error {
	unlock, err := Lock(path, time.Minute)
	if err != nil {
		return err
	}
	defer unlock()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	tmp := fmt.Sprintf("%s.%d.%p", path, os.Getpid(), &n)
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(n+1)), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Goroutines and processes incrementing one counter lose no increment,
// and the lock file is gone afterwards.
func TestLockSerializesProcessesAndGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter")
	const procs, goroutines, times = 3, 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, procs+goroutines)
	for range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d", childEnv, path, times))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("child: %v: %s", err, out)
			}
		})
	}
	for range goroutines {
		wg.Go(func() {
			for range times {
				if err := increment(path); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), strconv.Itoa((procs+goroutines)*times); got != want {
		t.Errorf("counter = %s, want %s: increments were lost", got, want)
	}
	if runtime.GOOS != "windows" {
		if _, err := os.Lstat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the lock file is left behind: %v", err)
		}
	}
}

// A lock that stays taken is an error naming the file, not a hang.
func TestLockTimeoutNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	unlock, err := Lock(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(path, 20*time.Millisecond)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), path) {
		t.Errorf("second Lock: %v; want ErrTimeout naming %s", err, path)
	}
	unlock()
	unlock2, err := Lock(path, time.Second)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}

// A lock file that is a symbolic link (a repository may commit one) is
// refused rather than followed: opening it would create its target.
func TestLockRefusesSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.Symlink(target, filepath.Join(dir, ".mcp.json.lock")); err != nil {
		t.Fatal(err)
	}
	if unlock, err := Lock(filepath.Join(dir, ".mcp.json"), time.Second); err == nil {
		unlock()
		t.Error("Lock followed a symlinked lock file")
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink's target was created: %v", err)
	}
}
