//go:build !unix

package safefiletest

import "errors"

const nonBlock = 0

// Mkfifo fails: there are no named pipes in the file system here.
func Mkfifo(string) error { return errors.New("no named pipes") }
