// Package oskeyring gives a program built on Switchboard the operating
// system's credential store for its secrets — the values of ${secret:NAME}
// references and OAuth tokens: the Secret Service over D-Bus on Linux
// (GNOME Keyring, KWallet), the macOS Keychain, the Windows Credential
// Manager, through github.com/zalando/go-keyring. Import it for its side
// effect:
//
//	import _ "github.com/switchboard-mcp/switchboard/oskeyring"
//
// The switchboard command links it. A program that does not (the front
// door alone is about 250 KB smaller without D-Bus) keeps new secrets in
// the encrypted file beside the index (docs/security.md, Secrets) and
// reports a value the switchboard command put in the OS store as out of
// its reach, naming this package.
package oskeyring

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"

	"github.com/switchboard-mcp/switchboard/internal/secretstore"
)

func init() {
	secretstore.RegisterOS(func(timeout time.Duration) secretstore.OSStore { return keyringStore{timeout: timeout} })
}

// keyringStore is the OS store through go-keyring, every call bounded.
type keyringStore struct{ timeout time.Duration }

// probeName is looked up, in the user's own service, to see whether the
// store answers; it is never set.
const (
	probeService = "switchboard"
	probeName    = "switchboard-probe"
)

func (k keyringStore) Probe(ctx context.Context) error {
	_, err := k.Get(ctx, probeService, probeName)
	if errors.Is(err, secretstore.ErrNotFound) {
		return nil
	}
	return err
}

func (k keyringStore) Get(ctx context.Context, service, name string) (string, error) {
	var v string
	err := k.bounded(ctx, "reading", func() (err error) {
		v, err = keyring.Get(service, name)
		return err
	})
	return v, err
}

func (k keyringStore) Set(ctx context.Context, service, name, value string) error {
	return k.bounded(ctx, "writing to", func() error { return keyring.Set(service, name, value) })
}

func (k keyringStore) Delete(ctx context.Context, service, name string) error {
	return k.bounded(ctx, "deleting from", func() error { return keyring.Delete(service, name) })
}

// bounded runs call, giving up after the timeout or when ctx is done: the
// library waits for ever on a keyring whose unlock prompt nobody answers.
// A call given up on finishes in the background.
func (k keyringStore) bounded(ctx context.Context, doing string, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	t := time.NewTimer(k.timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return classify(doing, err)
	case <-t.C:
		return fmt.Errorf("%s did not answer within %s (is it locked, waiting for you to unlock it?)", secretstore.OSStoreName(), k.timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// classify turns the library's errors into the store's: ErrNotFound, a
// *secretstore.AbsentError for a store that is not there, else an error
// saying what failed in words.
func classify(doing string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, keyring.ErrNotFound) {
		return secretstore.ErrNotFound
	}
	if errors.Is(err, keyring.ErrUnsupportedPlatform) {
		return &secretstore.AbsentError{Why: "there is no credential store Switchboard can use on " + runtime.GOOS}
	}
	if errors.Is(err, keyring.ErrSetDataTooBig) {
		return fmt.Errorf("%s refused the value: it is too large for it", secretstore.OSStoreName())
	}
	var de dbus.Error
	if errors.As(err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
			return &secretstore.AbsentError{Why: "no Secret Service answers on the D-Bus session bus (is a keyring such as GNOME Keyring or KWallet running?)"}
		case "org.freedesktop.Secret.Error.IsLocked":
			return fmt.Errorf("%s is locked; unlock it (log in to your desktop, or run your keyring's unlock command) and try again", secretstore.OSStoreName())
		}
		return fmt.Errorf("%s %s failed: %s", doing, secretstore.OSStoreName(), strings.Join(append([]string{de.Name}, errorBody(de)...), ": "))
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "failed to unlock"):
		return fmt.Errorf("%s is locked and was not unlocked (the unlock prompt was dismissed or could not be shown); unlock it and try again", secretstore.OSStoreName())
	case strings.HasPrefix(msg, "dbus:"), strings.Contains(msg, "connect"), strings.Contains(msg, "no such file"):
		return &secretstore.AbsentError{Why: "the D-Bus session bus cannot be reached (" + msg + "), so no Secret Service"}
	}
	return fmt.Errorf("%s %s failed: %v", doing, secretstore.OSStoreName(), err)
}

func errorBody(e dbus.Error) []string {
	var out []string
	for _, b := range e.Body {
		if s, ok := b.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}
