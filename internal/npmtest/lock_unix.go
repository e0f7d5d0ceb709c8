//go:build unix

package npmtest

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path, waiting for other processes,
// and returns the function that releases it. The kernel drops the lock if
// the process dies, so a killed test run never wedges the next one.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
