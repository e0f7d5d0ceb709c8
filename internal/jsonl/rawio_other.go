//go:build !linux

package jsonl

import "os"

// rawPipe is Linux-only (see rawio_linux.go); elsewhere the os.File is used.
func rawPipe(*os.File, bool) any { return nil }
