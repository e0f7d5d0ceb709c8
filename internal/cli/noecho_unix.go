//go:build linux || darwin

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// echoOff stops the terminal f from echoing what is typed, keeping line
// editing and Ctrl-C; restore echoes again. ok is false (and restore does
// nothing) when f is not a terminal. The terminal's line discipline echoes
// as keys are pressed, so this holds for a read already waiting on f.
func echoOff(f *os.File) (restore func(), ok bool) {
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}, false
	}
	saved := *t
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, t); err != nil {
		return func() {}, false
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, &saved) }, true
}
