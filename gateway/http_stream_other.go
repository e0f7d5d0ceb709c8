//go:build !unix

package gateway

import "net"

// canPeek is false here: a stream whose client left it could not be told
// from a live one without a reader, so streams stay on net/http.
const canPeek = false

// peerGone cannot peek at a socket here.
func peerGone(net.Conn) (gone, known bool) { return false, false }
