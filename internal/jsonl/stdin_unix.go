//go:build unix

package jsonl

import (
	"os"
	"syscall"
)

// Stdin returns standard input as a file whose blocked Read returns when
// it is closed, when it is a pipe or a socket (as when an MCP client
// starts `switchboard serve --stdio`): it is put in non-blocking mode so
// that the runtime's poller can wait on it, and restore puts it back on
// exit. Otherwise (a terminal, a file) it returns os.Stdin, which the
// connection then reads from a goroutine of its own.
//
// Nothing else may read os.Stdin while the returned file is in use: in
// non-blocking mode a plain read would fail with EAGAIN.
func Stdin() (f *os.File, restore func()) {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return os.Stdin, func() {}
	}
	fd := int(os.Stdin.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return os.Stdin, func() {}
	}
	f = os.NewFile(uintptr(fd), "/dev/stdin")
	if !pollable(f) {
		syscall.SetNonblock(fd, false)
		return os.Stdin, func() {}
	}
	return f, func() { syscall.SetNonblock(fd, false) }
}
