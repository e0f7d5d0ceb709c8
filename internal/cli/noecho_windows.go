//go:build windows

package cli

import (
	"os"

	"golang.org/x/sys/windows"
)

// echoOff stops the console f from echoing what is typed; restore echoes
// again. ok is false (and restore does nothing) when f is not a console.
func echoOff(f *os.File) (restore func(), ok bool) {
	h := windows.Handle(f.Fd())
	var mode uint32
	if windows.GetConsoleMode(h, &mode) != nil {
		return func() {}, false
	}
	if windows.SetConsoleMode(h, mode&^windows.ENABLE_ECHO_INPUT) != nil {
		return func() {}, false
	}
	return func() { _ = windows.SetConsoleMode(h, mode) }, true
}
