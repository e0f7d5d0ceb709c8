//go:build linux

package cli

import (
	"io"
	"net"
	"syscall"

	"github.com/switchboard-mcp/switchboard/internal/rawio"
)

// rawListener hands net/http connections whose reads and writes are raw
// read(2) and write(2) calls on the socket (internal/rawio), waited for by
// the runtime's poller as before: between two calls of a client that waits
// for each answer, a bracketed system call woke the runtime's monitor
// thread, which then ticked every ~20 µs for as long as the call ran
// (about eight wake-ups of a thread a call here). internal/jsonl does the
// same for pipes.
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
	n, err := rawio.Read(c.rc, p)
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *rawTCPConn) Write(p []byte) (int, error) {
	n, err := rawio.Write(c.rc, p)
	if err != nil {
		return n, c.opError("write", err)
	}
	return n, nil
}

// opError wraps err as the TCPConn's own errors are: a *net.OpError, so a
// passed deadline still reads as a timeout and a closed connection as
// net.ErrClosed.
func (c *rawTCPConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
