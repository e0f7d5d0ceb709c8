// Package filelock serializes the read-modify-write of a file across
// processes: two `switchboard mcp add` run at once, or the CLI and a
// gateway approving at the same moment, each read the file, change it and
// rename a new one in. Without a lock the second rename drops what the
// first added.
//
// The lock is an advisory lock (flock on Unix, LockFileEx on Windows) on a
// sibling file, <file>.lock, created empty (0644: it holds nothing, and a
// lock file left by another user's crashed process in a shared checkout
// must still open) and removed again when the lock is released, so that no
// stray file is left next to a repository's .mcp.json; a symbolic link
// there is refused. Only writers that take the lock are serialized;
// readers never need it, since every write replaces the file atomically.
// On an NFS home directory Linux emulates flock with POSIX locks, which do
// not exclude two goroutines of one process from each other: there only
// processes are serialized.
package filelock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// DefaultTimeout is how long an edit waits for another process's edit of
// the same file: edits take milliseconds, so reaching it means a process
// is stuck holding the lock.
const DefaultTimeout = 10 * time.Second

// ErrTimeout is returned (wrapped) by [Lock] when the lock stayed taken
// for the whole timeout.
var ErrTimeout = errors.New("timed out waiting for the lock")

// Lock takes the exclusive lock of the file at path (on path+".lock"),
// waiting at most timeout for a holder to release it; the error of a
// timeout wraps [ErrTimeout] and names path. unlock releases it and is to
// be called once, after the new file has been renamed into place. The lock
// serializes goroutines of one process as well as processes; the kernel
// drops it if the process dies, so a crash never wedges the next edit.
func Lock(path string, timeout time.Duration) (unlock func(), err error) {
	name := path + ".lock"
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		// A symbolic link is refused: a repository could commit one named
		// .mcp.json.lock, and creating the file would create its target.
		// O_NOFOLLOW says so atomically where there is one (Unix); the
		// look first covers Windows, where a link is a reparse point.
		if fi, err := os.Lstat(name); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("locking %s: %s is a symbolic link; remove it", path, name)
		}
		// Opened for writing (NFS emulates flock with POSIX locks, which
		// want it), or read-only where that is refused: readable by all
		// (it holds nothing), a lock file left by another user's process
		// that crashed holding it, in a shared checkout, still opens.
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
		if errors.Is(err, fs.ErrPermission) {
			var rerr error
			f, rerr = os.OpenFile(name, os.O_RDONLY|noFollow, 0)
			// No lock file to open: the folder refused to create one,
			// which is what the caller must hear.
			if !errors.Is(rerr, fs.ErrNotExist) {
				err = rerr
			}
		}
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if ok && current(f, name) {
			return func() { release(f, name) }, nil
		}
		if ok {
			// The holder we waited for removed this lock file on release;
			// another process may hold the one now at name.
			unlockFile(f)
			f.Close()
			continue
		}
		f.Close()
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is being changed by another process (its lock %s stayed taken for %v): %w; try again, or end the process that holds it",
				path, name, timeout, ErrTimeout)
		}
		time.Sleep(wait)
		wait = min(2*wait, 25*time.Millisecond)
	}
}

// current reports whether f, just locked, is still the file at name: a
// lock on a file already removed from name protects nothing.
func current(f *os.File, name string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(name)
	return err == nil && os.SameFile(held, now)
}
