//go:build !linux

package keyringtest

import (
	"errors"
	"testing"
)

// Programs are what Start needs on PATH (Linux only).
var Programs = []string{"dbus-run-session", "gnome-keyring-daemon"}

// Password unlocks the login keyring Start creates.
const Password = "switchboard-test"

// Keyring is one running Secret Service (Linux only).
type Keyring struct {
	Addr, Home, RuntimeDir string
}

// Available reports false: the Secret Service tests run on Linux.
func Available() bool { return false }

// Start skips the test: the Secret Service tests run on Linux.
func Start(t testing.TB) *Keyring {
	t.Helper()
	t.Skip("the Secret Service tests run on Linux")
	return nil
}

// Env is the environment a program needs to use this service.
func (k *Keyring) Env() []string { return nil }

// StartIn fails: the Secret Service tests run on Linux.
func StartIn(string) (*Keyring, error) {
	return nil, errors.New("the Secret Service tests run on Linux")
}

// Lock locks the login keyring.
func (k *Keyring) Lock() error { return nil }

// Unlock unlocks the login keyring.
func (k *Keyring) Unlock() error { return nil }

// Stop stops the service.
func (k *Keyring) Stop() {}
