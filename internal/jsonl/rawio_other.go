//go:build !linux

package jsonl

import (
	"io"
	"os"
)

// rawRead and rawWrite are Linux-only (see rawio_linux.go); elsewhere the
// os.File is used.
func rawRead(*os.File) io.Reader { return nil }

func rawWrite(*os.File) io.Writer { return nil }

// peerUnread is Linux-only (see rawio_linux.go): elsewhere FIONREAD on a
// pipe's write end does not count what its reader has yet to read.
func peerUnread(*os.File) func() int { return nil }

// hungUp is Linux-only (see rawio_linux.go): elsewhere a client that closes
// its end while MaxCallsInFlight holds Read is seen once a call is answered.
func hungUp(*os.File) func() bool { return nil }
