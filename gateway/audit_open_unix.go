//go:build unix

package gateway

import "syscall"

// auditOpenFlags refuse, as open(2) fails, an audit log that is a
// symbolic link (O_NOFOLLOW: whoever can write the log's folder could
// point it at any file the gateway can write), and keep open(2) of a named
// pipe from waiting for a reader (O_NONBLOCK; the pipe is then refused).
const auditOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
