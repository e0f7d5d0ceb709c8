package secretstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"
)

// osStore is the operating system's credential store.
type osStore interface {
	// probe checks that the store answers; an *absentError when there is
	// none to ask.
	probe(ctx context.Context) error
	get(ctx context.Context, service, name string) (string, error)
	set(ctx context.Context, service, name, value string) error
	del(ctx context.Context, service, name string) error
}

// absentError is an OS store that is not there at all (no Secret Service
// on the bus), as opposed to one that is there and fails.
type absentError struct{ why string }

func (e *absentError) Error() string { return e.why }

// keyringStore is the OS store through go-keyring, every call bounded.
type keyringStore struct{ timeout time.Duration }

// probeName is looked up to see whether the store answers; it is never
// set.
const probeName = "switchboard-probe"

func (k keyringStore) probe(ctx context.Context) error {
	_, err := k.get(ctx, serviceName(""), probeName)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

func (k keyringStore) get(ctx context.Context, service, name string) (string, error) {
	var v string
	err := k.bounded(ctx, "reading", func() (err error) {
		v, err = keyring.Get(service, name)
		return err
	})
	return v, err
}

func (k keyringStore) set(ctx context.Context, service, name, value string) error {
	return k.bounded(ctx, "writing to", func() error { return keyring.Set(service, name, value) })
}

func (k keyringStore) del(ctx context.Context, service, name string) error {
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
		return fmt.Errorf("%s did not answer within %s (is it locked, waiting for you to unlock it?)", osStoreName(), k.timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// classify turns the library's errors into ours: ErrNotFound, an
// *absentError for a store that is not there, else an error saying what
// failed in words.
func classify(doing string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, keyring.ErrNotFound) {
		return ErrNotFound
	}
	if errors.Is(err, keyring.ErrUnsupportedPlatform) {
		return &absentError{why: "there is no credential store Switchboard can use on " + runtime.GOOS}
	}
	if errors.Is(err, keyring.ErrSetDataTooBig) {
		return fmt.Errorf("%s refused the value: it is too large for it", osStoreName())
	}
	var de dbus.Error
	if errors.As(err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
			return &absentError{why: "no Secret Service answers on the D-Bus session bus (is a keyring such as GNOME Keyring or KWallet running?)"}
		case "org.freedesktop.Secret.Error.IsLocked":
			return fmt.Errorf("%s is locked; unlock it (log in to your desktop, or run your keyring's unlock command) and try again", osStoreName())
		}
		return fmt.Errorf("%s %s failed: %s", doing, osStoreName(), strings.Join(append([]string{de.Name}, errorBody(de)...), ": "))
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "failed to unlock"):
		return fmt.Errorf("%s is locked and was not unlocked (the unlock prompt was dismissed or could not be shown); unlock it and try again", osStoreName())
	case strings.HasPrefix(msg, "dbus:"), strings.Contains(msg, "connect"), strings.Contains(msg, "no such file"):
		return &absentError{why: "the D-Bus session bus cannot be reached (" + msg + "), so no Secret Service"}
	}
	return fmt.Errorf("%s %s failed: %v", doing, osStoreName(), err)
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

// osStoreName names the OS store for people.
func osStoreName() string {
	switch runtime.GOOS {
	case "darwin":
		return "the macOS Keychain"
	case "windows":
		return "the Windows Credential Manager"
	}
	return "the Secret Service (your desktop keyring, over D-Bus)"
}
