//go:build unix

package gateway

import (
	"errors"
	"net"
	"syscall"
)

// canPeek says peerGone can ask a socket: streams are served on their own
// connections.
const canPeek = true

// peerGone reports whether the client closed its end of c (or sent on
// it, which a stream's client never does), without waiting and without
// taking anything from the connection: a peek at what the socket holds.
// known is false where the socket cannot be asked so.
func peerGone(c net.Conn) (gone, known bool) {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn() // TLS: its close comes as bytes or the TCP end
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	var (
		buf  [1]byte
		rerr error
	)
	if err := rc.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}); err != nil {
		return true, true // closed here already
	}
	switch {
	case errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK) || errors.Is(rerr, syscall.EINTR):
		return false, true
	case rerr != nil:
		return true, true // reset
	}
	// Something to read: the client's end, or bytes a stream's client
	// never sends.
	return true, true
}
