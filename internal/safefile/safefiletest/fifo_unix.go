//go:build unix

package safefiletest

import "syscall"

const nonBlock = syscall.O_NONBLOCK

// Mkfifo makes a named pipe at path.
func Mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
