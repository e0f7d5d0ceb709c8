//go:build linux

package cli

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawListener hands net/http connections whose reads and writes are raw
// read(2) and write(2) calls on the socket, waited for by the runtime's
// poller as before. Why: each net.Conn read or write is a system call the
// runtime brackets with entersyscall/exitsyscall, and when every processor
// was idle — between two calls of a client that waits for each answer —
// entersyscall wakes the runtime's monitor thread (sysmon), which then
// ticks every ~20 µs for as long as the call runs: about eight wake-ups of
// a thread a call on this machine, on the cores the client and the server
// need. On a non-blocking socket a read or write never blocks, so the
// bracketing buys nothing. internal/jsonl does the same for pipes.
type rawListener struct{ net.Listener }

func rawListen(ln net.Listener) net.Listener { return rawListener{ln} }

func (l rawListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	return &rawTCPConn{TCPConn: tc, rc: rc}, nil
}

// rawTCPConn is a TCP connection read and written with raw system calls;
// everything else (deadlines, close, addresses) is the TCPConn's.
type rawTCPConn struct {
	*net.TCPConn
	rc syscall.RawConn
}

func (c *rawTCPConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r1, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case 0:
				n = int(r1)
				return true
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // the poller waits, then calls again
			default:
				errno = e
				return true
			}
		}
	})
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *rawTCPConn) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r1, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch e {
			case 0:
				n += int(r1)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // the socket's buffer is full: wait until it drains
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", errno)
	}
	return n, nil
}

// opError wraps err as the TCPConn's own errors are: a *net.OpError, so a
// passed deadline still reads as a timeout and a closed connection as
// net.ErrClosed.
func (c *rawTCPConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
