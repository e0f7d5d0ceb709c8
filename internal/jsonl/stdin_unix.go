//go:build unix

package jsonl

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stdin returns standard input as a file whose blocked Read returns when
// it is closed, when it is a pipe or a socket (as when an MCP client
// starts `switchboard serve --stdio`): a close-on-exec duplicate of fd 0,
// in non-blocking mode so that the runtime's poller can wait on it.
// Closing the returned file leaves fd 0 itself open, so that no file
// opened later can take its number; restore puts the mode back. Otherwise
// (a terminal, a file) it returns os.Stdin, which the connection then
// reads from a goroutine of its own.
//
// Nothing else may read standard input while the returned file is in use:
// the mode belongs to the pipe, not to one descriptor, and a plain
// blocking read would fail with EAGAIN.
func Stdin() (f *os.File, restore func()) {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return os.Stdin, func() {}
	}
	fd, err := unix.FcntlInt(uintptr(syscall.Stdin), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return os.Stdin, func() {}
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return os.Stdin, func() {}
	}
	restore = func() { syscall.SetNonblock(syscall.Stdin, false) }
	f = os.NewFile(uintptr(fd), "/dev/stdin")
	if !pollable(f) {
		f.Close()
		restore()
		return os.Stdin, func() {}
	}
	return f, restore
}
