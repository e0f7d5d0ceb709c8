//go:build !unix

package npmtest

import (
	"errors"
	"os"
	"time"
)

// lockFile takes a lock by creating path exclusively, waiting for other
// processes, and returns the function that releases it. A lock older than
// the install timeout is taken to be left by a dead process.
func lockFile(path string) (func(), error) {
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > InstallTimeout {
			os.Remove(path)
			continue
		}
		time.Sleep(200 * time.Millisecond)
	}
}
