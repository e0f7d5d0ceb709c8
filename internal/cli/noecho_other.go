//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly && !windows

package cli

import "os"

// withoutEcho cannot turn echo off here: ok is false, and nothing is
// asked that would be shown.
func withoutEcho(*os.File) (restore func(), ok bool) { return func() {}, false }
