//go:build !unix

package gateway

import "net"

// peerGone cannot peek at a socket here: sseStream.alive reads instead.
func peerGone(net.Conn) (gone, known bool) { return false, false }
