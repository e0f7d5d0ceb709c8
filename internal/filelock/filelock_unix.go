//go:build unix

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// noFollow refuses a lock file that is a symbolic link: a repository could
// commit .mcp.json.lock pointing anywhere, and opening it with O_CREATE
// would create the file it points to.
const noFollow = unix.O_NOFOLLOW

// tryLock takes f's lock if it is free.
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) || errors.Is(err, unix.EINTR) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// release removes the lock file while still holding its lock, so that a
// waiter that then gets the lock of the removed file sees (current) that
// it must lock the file at name anew.
func release(f *os.File, name string) {
	_ = os.Remove(name)
	unlockFile(f)
	f.Close()
}
