//go:build !linux

package host

import "io"

// stdinWatch tells, on Linux, how much of a server's stdin is unread
// (unread_linux.go). Elsewhere it cannot: unread says so, and a server
// that dies during its handshake is taken as having read the probe.
type stdinWatch struct{}

func watchStdin(io.Writer) *stdinWatch { return nil }

func (*stdinWatch) unread() (int, bool) { return 0, false }

func (*stdinWatch) close() {}
