package cli

import (
	"os"

	"golang.org/x/sys/windows"
)

// withoutEcho turns the console's echo off, so that a line read through
// the session's one reader of stdin is not shown; restore turns it back
// on. ok is false when f is not a console.
func withoutEcho(f *os.File) (restore func(), ok bool) {
	h := windows.Handle(f.Fd())
	var mode uint32
	if err := windows.GetConsoleMode(h, &mode); err != nil {
		return func() {}, false
	}
	if err := windows.SetConsoleMode(h, mode&^windows.ENABLE_ECHO_INPUT|windows.ENABLE_LINE_INPUT); err != nil {
		return func() {}, false
	}
	return func() { _ = windows.SetConsoleMode(h, mode) }, true
}
