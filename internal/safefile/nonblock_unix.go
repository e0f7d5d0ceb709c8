//go:build unix

package safefile

import "syscall"

// nonBlock makes open(2) of a named pipe return at once instead of
// waiting for a writer. On a regular file it changes nothing.
const nonBlock = syscall.O_NONBLOCK
