//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// withoutEcho turns the terminal's echo off (line editing stays on), so
// that a line read through the session's one reader of stdin is not
// shown; restore turns it back on. ok is false when f is not a terminal.
func withoutEcho(f *os.File) (restore func(), ok bool) {
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return func() {}, false
	}
	old := *t
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, setTermios, t); err != nil {
		return func() {}, false
	}
	return func() { _ = unix.IoctlSetTermios(fd, setTermios, &old) }, true
}
