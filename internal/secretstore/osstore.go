package secretstore

import (
	"context"
	"runtime"
	"time"
)

// OSStore is the operating system's credential store, as a backend gives
// it. Package oskeyring registers the one Switchboard ships (the Secret
// Service on Linux, the macOS Keychain, the Windows Credential Manager);
// in a program that does not import it, no OS store answers: new values
// go to the encrypted file, and a value the index says is kept in the OS
// store is an error naming the import.
type OSStore interface {
	// Probe checks that the store answers: an *AbsentError when there is
	// none to ask.
	Probe(ctx context.Context) error
	// Get returns the value of name in service, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, service, name string) (string, error)
	Set(ctx context.Context, service, name, value string) error
	Delete(ctx context.Context, service, name string) error
}

// AbsentError is an OS store that is not there at all (no Secret Service
// on the bus), as opposed to one that is there and fails: new values then
// go to the encrypted file.
type AbsentError struct{ Why string }

func (e *AbsentError) Error() string { return e.Why }

// osOpen makes the OS store of a Store (RegisterOS); nil when the program
// links none.
var osOpen func(timeout time.Duration) OSStore

// RegisterOS makes open give the OS store of every Store opened after it,
// each call of it bounded by timeout. Call it from an init function.
func RegisterOS(open func(timeout time.Duration) OSStore) { osOpen = open }

// noOSStore says why a program without a registered OS store has none.
const noOSStore = "this program was built without the operating system's credential store " +
	"(a Go program links it by importing github.com/switchboard-mcp/switchboard/oskeyring)"

// missingOS is the OS store of a program that links none: every call
// of it is errNoOS.
type missingOS struct{}

var errNoOS = &AbsentError{Why: noOSStore}

func (missingOS) Probe(context.Context) error                         { return errNoOS }
func (missingOS) Get(context.Context, string, string) (string, error) { return "", errNoOS }
func (missingOS) Set(context.Context, string, string, string) error   { return errNoOS }
func (missingOS) Delete(context.Context, string, string) error        { return errNoOS }

// OSStoreName names the OS store for people.
func OSStoreName() string {
	switch runtime.GOOS {
	case "darwin":
		return "the macOS Keychain"
	case "windows":
		return "the Windows Credential Manager"
	}
	return "the Secret Service (your desktop keyring, over D-Bus)"
}
