package host

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// stdinWatch holds a second descriptor of a stdio server's stdin pipe
// for the length of a handshake, so that after a failed one the host can
// ask how much of what it wrote is still unread (FIONREAD, which Linux spells TIOCINQ): the pipe's
// buffer outlives the server's end, and the SDK closes the host's own.
type stdinWatch struct{ fd int }

// watchStdin returns a watch of w's pipe, or nil when w is not a file
// whose descriptor can be duplicated. Close it when the handshake is over:
// while it is open the server never sees its stdin end.
func watchStdin(w io.Writer) *stdinWatch {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	_ = rc.Control(func(orig uintptr) {
		// Close-on-exec: no server spawned meanwhile may inherit it.
		fd, _ = unix.FcntlInt(orig, unix.F_DUPFD_CLOEXEC, 0)
	})
	if fd < 0 {
		return nil
	}
	return &stdinWatch{fd: fd}
}

// unread returns how many bytes written to the pipe nobody has read; ok
// is false when that cannot be told.
func (w *stdinWatch) unread() (n int, ok bool) {
	if w == nil {
		return 0, false
	}
	n, err := unix.IoctlGetInt(w.fd, unix.TIOCINQ) // FIONREAD
	return n, err == nil
}

func (w *stdinWatch) close() {
	if w != nil {
		_ = unix.Close(w.fd)
	}
}
