//go:build !unix

package jsonl

import "os"

// Stdin returns os.Stdin: outside Unix the connection reads it from a
// goroutine of its own.
func Stdin() (f *os.File, restore func()) { return os.Stdin, func() {} }

// Stdout returns os.Stdout: outside Unix it is written as it is.
func Stdout() (f *os.File, restore func()) { return os.Stdout, func() {} }
