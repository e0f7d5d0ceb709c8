//go:build linux

package jsonl

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/switchboard-mcp/switchboard/internal/rawio"
)

// rawRead and rawWrite return a reader or writer for f that moves bytes
// with raw read(2) and write(2) calls. f must be a non-blocking file in the
// runtime's poller (inPoller: the pipes os/exec and os.Pipe make, and the
// files [Stdin] and [Stdout] return); nil when f has no raw descriptor.
//
// Why: each os.File read or write is a system call the runtime brackets
// with entersyscall/exitsyscall, and when every processor was idle (a
// relay waiting for its server is, twice per call) entersyscall also wakes
// the runtime's sysmon thread with a futex. On a non-blocking descriptor
// a read or write never blocks — it returns EAGAIN and the poller waits —
// so the bracketing buys nothing, and the wake-up costs a context switch
// on a machine whose other core is running the server. The files' own
// poller still does the waiting, so Close and deadlines behave as before.
func rawRead(f *os.File) io.Reader {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return rawReader{f, rc}
}

func rawWrite(f *os.File) io.Writer {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return rawWriter{f, rc}
}

type rawReader struct {
	f  *os.File // kept alive while its descriptor is in use
	rc syscall.RawConn
}

func (r rawReader) Read(p []byte) (int, error) {
	n, err := rawio.Read(r.rc, p)
	switch {
	case err != nil:
		return 0, fileError("read", r.f, err)
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

type rawWriter struct {
	f  *os.File
	rc syscall.RawConn
}

func (w rawWriter) Write(p []byte) (int, error) {
	n, err := rawio.Write(w.rc, p)
	if err != nil {
		return n, fileError("write", w.f, err)
	}
	return n, nil
}

// fileError reports what rawio returned as os.File does: a failed call as
// a *os.PathError, a failed wait of the poller as pollError says.
func fileError(op string, f *os.File, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return &os.PathError{Op: op, Path: f.Name(), Err: errno}
	}
	return pollError(op, f, err)
}

// pollError reports a failed wait of the poller as os.File does: a passed
// deadline as os.ErrDeadlineExceeded, and otherwise (the file was closed:
// the poller's own error says "use of closed file") as os.ErrClosed, so
// that errors.Is works on what the raw path returns as on the file's own.
func pollError(op string, f *os.File, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: f.Name(), Err: err}
}

// peerUnread returns a function that reports how many bytes written to f
// its reader has not read yet, or nil when f is neither a pipe nor a Unix
// stream socket. Linux's FIONREAD (TIOCINQ) counts a pipe's buffered bytes
// from either end; on a socket, SIOCOUTQ (TIOCOUTQ) counts what this end
// sent that its peer has not consumed. A client written in Node gets a
// socket, not a pipe, as its server's stdout: libuv makes a child's "pipe"
// stdio with socketpair(2), and the TypeScript SDK's client is the one
// [Transport.ProgressGap] is for.
func peerUnread(f *os.File) func() int {
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	var req uintptr
	switch {
	case fi.Mode()&os.ModeNamedPipe != 0:
		req = syscall.TIOCINQ
	case fi.Mode()&os.ModeSocket != 0 && isUnixStream(f):
		req = syscall.TIOCOUTQ
	default:
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return func() int {
		n := 0
		if rc.Control(func(fd uintptr) {
			var v int32
			if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(unsafe.Pointer(&v))); e == 0 {
				n = int(v)
			}
		}) != nil {
			return 0
		}
		return n
	}
}

// isUnixStream reports whether f is a Unix stream socket (where SIOCOUTQ
// counts the bytes its peer has not read; on TCP it would also count bytes
// read but not yet acknowledged).
func isUnixStream(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	rc.Control(func(fd uintptr) {
		domain, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_DOMAIN)
		if err != nil || domain != syscall.AF_UNIX {
			return
		}
		typ, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TYPE)
		ok = err == nil && typ == syscall.SOCK_STREAM
	})
	return ok
}

// hungUp returns a function that reports whether f, the read end of a pipe
// or a socket, has lost its writer (the client closed its end or exited),
// without reading what is still buffered in it: poll(2) says POLLHUP (or
// POLLRDHUP) beside any POLLIN. nil if f has no descriptor.
func hungUp(f *os.File) func() bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return func() bool {
		hup := false
		_ = rc.Control(func(fd uintptr) {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
			if n, err := unix.Poll(p, 0); err == nil && n > 0 {
				hup = p[0].Revents&(unix.POLLHUP|unix.POLLRDHUP|unix.POLLERR) != 0
			}
		})
		return hup
	}
}
