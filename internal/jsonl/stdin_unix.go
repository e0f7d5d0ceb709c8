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
// It also keeps a Go process from stalling for a minute. Under Go 1.26
// (the runtime of 1.27.3 is the same here), a goroutine entering a
// blocking read(2) can miss a garbage collection's stop-the-world that
// starts at that instant: reentersyscall checks for a pending stop before
// it marks the goroutine as in a system call, and stopTheWorldWithSema
// looks for such goroutines after it announces the stop. The stop then
// waits for that P, and sysmon, which would take it, sleeps while a stop
// is pending: up to 60 s. A process whose peer writes again only after
// its answer (any stdio MCP server) stalls for exactly 60 s. Measured
// (docs/benchmarks.md): 4 such stalls in 2.1 million calls to the Go
// SDK's echo server reading a blocking stdin, none with stdin in the
// poller, whose reads do not block in the kernel; also reproduced with
// a plain Go ping-pong over pipes.
//
// Nothing else may read standard input while the returned file is in use:
// the mode belongs to the pipe, not to one descriptor, and a plain
// blocking read would fail with EAGAIN.
func Stdin() (f *os.File, restore func()) {
	return pollableDup(os.Stdin, syscall.Stdin, "/dev/stdin", false)
}

// Stdout is [Stdin] for standard output: a close-on-exec, non-blocking
// duplicate of fd 1 in the runtime's poller when it is a pipe or a socket
// (the connection then writes it without a blocking system call per
// message), else os.Stdout. Nothing else may write standard output while
// the returned file is in use: a plain write to fd 1 could fail with
// EAGAIN when the pipe is full.
func Stdout() (f *os.File, restore func()) {
	return pollableDup(os.Stdout, syscall.Stdout, "/dev/stdout", true)
}

// pollableDup duplicates std, descriptor num, when it is a pipe or a
// socket, in non-blocking mode, for writing or reading, if the runtime
// takes the duplicate into its poller. (std.Fd would switch std to
// blocking.)
func pollableDup(std *os.File, num int, name string, write bool) (f *os.File, restore func()) {
	fi, err := std.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return std, func() {}
	}
	fd, err := unix.FcntlInt(uintptr(num), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return std, func() {}
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return std, func() {}
	}
	restore = func() { syscall.SetNonblock(num, false) }
	f = os.NewFile(uintptr(fd), name)
	if !inPoller(f, write) {
		f.Close()
		restore()
		return std, func() {}
	}
	return f, restore
}
