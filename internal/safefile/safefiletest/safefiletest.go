// Package safefiletest makes the files a configuration reader must refuse
// (see [safefile]): a symbolic link to /dev/zero, whose read never ends,
// and a named pipe, whose blocking open waits for a writer that never
// comes. Only tests import it.
package safefiletest

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// releaseEvery is how often a pipe made by FIFO is opened for writing and
// closed again, so that a reader stuck in open(2) (the bug the tests are
// for) gets an empty file and the test fails on what it read instead of
// hanging until the test binary's timeout.
const releaseEvery = 20 * time.Second

// DevZero makes path (its directory must exist) a symbolic link to
// /dev/zero. It skips the test where there is no /dev/zero.
func DevZero(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Fatal(err)
	}
}

// FIFO makes a named pipe at path (its directory must exist), and until
// the test ends opens it for writing now and then, which releases a reader
// that waits for a writer: such a reader then reads an empty file, which
// the test sees as a wrong result. It skips the test where there are no
// named pipes (Windows).
func FIFO(t testing.TB, path string) {
	t.Helper()
	if err := Mkfifo(path); err != nil {
		if runtime.GOOS == "windows" {
			t.Skip("no named pipes in the file system here")
		}
		t.Fatal(err)
	}
	stop := Release(path)
	t.Cleanup(stop)
}

// Release opens the named pipe at path for writing and closes it again
// every little while, until stop is called (stop waits for that to end).
// Opening for writing without blocking succeeds only while a reader has
// the pipe open, so a reader that checks and refuses the pipe is not
// disturbed.
func Release(path string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(releaseEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if f, err := os.OpenFile(path, os.O_WRONLY|nonBlock, 0); err == nil {
					f.Close()
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
