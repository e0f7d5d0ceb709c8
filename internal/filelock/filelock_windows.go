//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

const noFollow = 0

// tryLock takes f's lock (its first byte) if it is free.
func tryLock(f *os.File) (bool, error) {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) {
	var ol windows.Overlapped
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// release removes the lock file after closing it. Go opens files without
// FILE_SHARE_DELETE, so the removal fails, harmlessly, while another
// process has the file open (waiting for it): it is removed only when no
// one is using it.
func release(f *os.File, name string) {
	unlockFile(f)
	f.Close()
	_ = os.Remove(name)
}
