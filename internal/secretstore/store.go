// Package secretstore keeps the user's secrets — the values of
// ${secret:NAME} references, and OAuth tokens — out of every file
// Switchboard reads (docs/security.md, Secrets).
//
// Values live in the operating system's credential store where one
// answers: the Secret Service over D-Bus on Linux (GNOME Keyring, KWallet),
// the Keychain on macOS, the Credential Manager on Windows, through
// github.com/zalando/go-keyring, in a program that links package
// oskeyring (RegisterOS; the switchboard command does). Where none does
// (a server without a desktop session, a program without oskeyring), they
// live in an encrypted file, Dir/secrets/store.enc,
// whose key is the file beside it, store.key (0600): that protects the
// values from whoever gets the store file alone (a backup, a synced
// folder, a file attached by mistake), not from whoever can read your home
// directory, and every command that writes there says so. Nothing is ever
// stored in plain text.
//
// Next to them, Dir/secrets/index.json lists the names (never the values):
// where each is kept and when it was set, so that `secret list` needs no
// unlocking and a value kept in an OS store that cannot be reached now is
// reported as such rather than as missing.
//
// A Store keys values by namespace and name. The user's own secrets are
// the namespace ""; [Store.In] gives a view of another (OAuth tokens use
// one per Switchboard directory; a team gateway's members each have one,
// "principal/<id>", and one for their OAuth logins, "oauth/principal/<id>"). Every OS store call is bounded by
// Options.Timeout: a keyring that waits for a person to unlock it, or a
// service that stopped answering, is an error, not a hang.
package secretstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Where a value is kept.
const (
	// KindOS is the operating system's credential store.
	KindOS = "os"
	// KindFile is the encrypted file.
	KindFile = "file"
)

// DefaultTimeout bounds one call to the OS credential store.
const DefaultTimeout = 30 * time.Second

// MaxValue is the largest value accepted: the OS stores refuse far less
// on some platforms (Windows: 2,560 bytes), and an environment variable
// or header of more is a mistake.
const MaxValue = 64 << 10

// ErrNotFound is wrapped by the error of a lookup of a name that has no
// value.
var ErrNotFound = errors.New("not set")

// Options configure a Store.
type Options struct {
	// Dir is the Switchboard directory (~/.switchboard); the index and the
	// encrypted file live in Dir/secrets. Required.
	Dir string
	// Kind forces where values go: KindOS, KindFile, or "" (or "auto") for
	// the OS store when one answers, else the file. The CLI takes it from
	// $SWITCHBOARD_SECRET_STORE.
	Kind string
	// Timeout bounds one OS store call. If <= 0, DefaultTimeout.
	Timeout time.Duration
	// LookupEnv reads DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR, to
	// tell whether a Secret Service can be reached without starting a bus.
	// If nil, os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Now is the clock of the index. If nil, time.Now.
	Now func() time.Time
}

// Store is a secret store. It is safe for concurrent use, and processes
// may share one (writes take a lock).
type Store struct {
	shared *shared
	ns     string
}

// shared is what every namespace view of one store shares.
type shared struct {
	o    Options
	dir  string // Dir/secrets
	os   OSStore
	mu   sync.Mutex
	kind string // the chosen kind, once decided
	note string // why the file is used, when it is
}

// ForHome opens the user's store of the Switchboard directory home, where
// $SWITCHBOARD_SECRET_STORE (os, file or auto) may force the kind.
// lookupEnv nil is os.LookupEnv.
func ForHome(home string, lookupEnv func(string) (string, bool)) *Store {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	kind, _ := lookupEnv("SWITCHBOARD_SECRET_STORE")
	return Open(&Options{Dir: home, Kind: kind, LookupEnv: lookupEnv})
}

// Open returns the store of opts.Dir. It touches nothing until used: the
// OS store is asked at the first call.
func Open(opts *Options) *Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Kind == "auto" {
		o.Kind = ""
	}
	var osStore OSStore = missingOS{}
	if osOpen != nil {
		osStore = osOpen(o.Timeout)
	}
	return &Store{shared: &shared{o: o, dir: filepath.Join(o.Dir, "secrets"), os: osStore}}
}

// In returns the view of namespace ns of the same store: the same
// backends, the same index, other values. ns "" is the user's own.
func (s *Store) In(ns string) *Store { return &Store{shared: s.shared, ns: ns} }

// Namespace is the view's namespace.
func (s *Store) Namespace() string { return s.ns }

// Dir is the folder of the index and the encrypted file.
func (s *Store) Dir() string { return s.shared.dir }

// NotFoundError is the error of a lookup of a name without a value.
type NotFoundError struct {
	Name string
	// Where says where it was looked for.
	Where string
}

func (e *NotFoundError) Error() string { return "not set in " + e.Where }
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Location says where values of a store go, and why.
type Location struct {
	Kind string // KindOS or KindFile
	// Name says it for people: "the Secret Service (D-Bus)", "the macOS
	// Keychain", "the Windows Credential Manager", or the file's path.
	Name string
	// Note, for the file, says why no OS store is used and what protects
	// the file; "" for the OS store.
	Note string
}

// Where decides, once, where new values go: the OS store when one
// answers (or Options.Kind forces it), else the encrypted file. An OS
// store that is there but fails — locked and not unlocked in time,
// refusing — is an error, not a reason to use the file: the user's
// values would silently land in the weaker place.
func (s *Store) Where(ctx context.Context) (Location, error) {
	sh := s.shared
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.kind == "" {
		// A failure is not kept: a keyring unlocked later (a gateway
		// started before the login) is then used.
		kind, note, err := sh.decide(ctx)
		if err != nil {
			return Location{}, err
		}
		sh.kind, sh.note = kind, note
	}
	return sh.location(sh.kind), nil
}

func (sh *shared) location(kind string) Location {
	if kind == KindOS {
		return Location{Kind: KindOS, Name: OSStoreName()}
	}
	return Location{Kind: KindFile, Name: sh.storeFile(), Note: sh.note}
}

// fileNote says what protects the encrypted file.
func (sh *shared) fileNote(why string) string {
	return fmt.Sprintf("%s, so secrets are kept in the encrypted file %s; its key is %s (readable by you only): that keeps them from whoever gets the file alone, not from whoever can read your home directory",
		why, sh.storeFile(), sh.keyFile())
}

func (sh *shared) decide(ctx context.Context) (kind, note string, err error) {
	switch sh.o.Kind {
	case KindFile:
		return KindFile, sh.fileNote("SWITCHBOARD_SECRET_STORE=file"), nil
	case KindOS:
		if why := sh.busMissing(); why != "" {
			return "", "", fmt.Errorf("SWITCHBOARD_SECRET_STORE=os, but %s", why)
		}
		return KindOS, "", nil
	case "":
	default:
		return "", "", fmt.Errorf("SWITCHBOARD_SECRET_STORE=%s: use os, file or auto", sh.o.Kind)
	}
	if why := sh.busMissing(); why != "" {
		return KindFile, sh.fileNote(why), nil
	}
	err = sh.os.Probe(ctx)
	var absent *AbsentError
	switch {
	case err == nil:
		return KindOS, "", nil
	case errors.As(err, &absent):
		return KindFile, sh.fileNote(absent.Why), nil
	}
	return "", "", err
}

// busMissing says why no OS store can be reached ("" when one may be
// there): the program links none (RegisterOS), or no Secret Service can
// be reached without starting a bus of our own — the D-Bus library would
// otherwise run dbus-launch, leaving a bus behind on every run.
func (sh *shared) busMissing() string {
	if _, none := sh.os.(missingOS); none {
		return noOSStore
	}
	switch runtime.GOOS {
	case "darwin", "windows":
		return ""
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
	default:
		return "there is no credential store Switchboard can use on " + runtime.GOOS
	}
	if a, _ := sh.o.LookupEnv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return ""
	}
	rt, _ := sh.o.LookupEnv("XDG_RUNTIME_DIR")
	if rt == "" {
		rt = fmt.Sprintf("/run/user/%d", os.Getuid())
	}
	for _, f := range []string{"bus", "dbus-session"} {
		if _, err := os.Stat(filepath.Join(rt, f)); err == nil {
			return ""
		}
	}
	return "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no Secret Service"
}

// Get returns the value of name. A name without a value is a
// *NotFoundError; an OS store that cannot be reached, or an encrypted
// file that cannot be read, is an error naming it. The error does not
// repeat the name: callers say which secret it was for.
func (s *Store) Get(ctx context.Context, name string) (string, error) {
	kind, err := s.kindOf(ctx, name)
	if err != nil {
		return "", err
	}
	sh := s.shared
	var v string
	if kind == KindOS {
		v, err = sh.os.Get(ctx, serviceName(s.ns), name)
	} else {
		v, err = sh.fileGet(s.ns, name)
	}
	if errors.Is(err, ErrNotFound) {
		return "", &NotFoundError{Name: name, Where: sh.location(kind).Name}
	}
	return v, err
}

// kindOf is where name is kept: where the index says, else where new
// values go.
func (s *Store) kindOf(ctx context.Context, name string) (string, error) {
	if idx, err := s.shared.readIndex(); err == nil {
		if e, ok := idx.entry(s.ns, name); ok {
			if e.Store == KindOS {
				if why := s.shared.busMissing(); why != "" {
					return "", fmt.Errorf("it is kept in %s, which cannot be reached now: %s", OSStoreName(), why)
				}
			}
			return e.Store, nil
		}
	}
	loc, err := s.Where(ctx)
	if err != nil {
		return "", err
	}
	return loc.Kind, nil
}

// ValueProblem says why value cannot be a secret's, or "".
func ValueProblem(value string) string {
	switch {
	case value == "":
		return "the value is empty"
	case strings.IndexByte(value, 0) >= 0:
		return "the value holds a NUL byte, which no environment variable or header can carry"
	case len(value) > MaxValue:
		return fmt.Sprintf("the value is longer than %d bytes", MaxValue)
	}
	return ""
}

// Set stores value under name (replacing any) where Where says, and
// records the name in the index. It returns where the value went. On an
// error nothing is changed: a store file that cannot be read is never
// written over.
func (s *Store) Set(ctx context.Context, name, value string) (Location, error) {
	if why := ValueProblem(value); why != "" {
		return Location{}, fmt.Errorf("secret %s: %s", name, why)
	}
	sh := s.shared
	loc, err := s.Where(ctx)
	if err != nil {
		return Location{}, fmt.Errorf("secret %s: %w", name, err)
	}
	var out Location
	err = sh.editIndex(func(idx *index) error {
		old, had := idx.entry(s.ns, name)
		if loc.Kind == KindOS {
			if err := sh.os.Set(ctx, serviceName(s.ns), name, value); err != nil {
				return err
			}
		} else if err := sh.fileEdit(func(vals values) { vals.set(s.ns, name, value) }); err != nil {
			return err
		}
		// A value kept elsewhere before is removed there: one name, one value.
		if had && old.Store != loc.Kind {
			sh.removeFrom(ctx, old.Store, s.ns, name)
		}
		idx.set(s.ns, name, entry{Store: loc.Kind, Updated: sh.o.Now().UTC().Format(time.RFC3339)})
		out = loc
		return nil
	})
	if err != nil {
		return Location{}, fmt.Errorf("secret %s: %w", name, err)
	}
	return out, nil
}

// removeFrom removes a value from the store of kind, ignoring a value that
// is not there (best effort: the index no longer names it).
func (sh *shared) removeFrom(ctx context.Context, kind, ns, name string) error {
	var err error
	if kind == KindOS {
		err = sh.os.Delete(ctx, serviceName(ns), name)
	} else {
		err = sh.fileEdit(func(vals values) { vals.del(ns, name) })
	}
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// Delete removes name's value and its index entry. It reports whether
// there was a value.
func (s *Store) Delete(ctx context.Context, name string) (bool, error) {
	sh := s.shared
	var had bool
	err := sh.editIndex(func(idx *index) error {
		kinds := []string{}
		if e, ok := idx.entry(s.ns, name); ok {
			kinds = append(kinds, e.Store)
		} else {
			loc, err := s.Where(ctx)
			if err != nil {
				return err
			}
			kinds = append(kinds, loc.Kind)
		}
		for _, kind := range kinds {
			var err error
			if kind == KindOS {
				err = sh.os.Delete(ctx, serviceName(s.ns), name)
			} else {
				var found bool
				err = sh.fileEdit(func(vals values) { found = vals.del(s.ns, name) })
				if err == nil && !found {
					err = ErrNotFound
				}
			}
			switch {
			case err == nil:
				had = true
			case !errors.Is(err, ErrNotFound):
				return err
			}
		}
		if idx.del(s.ns, name) {
			had = true
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("secret %s: %w", name, err)
	}
	return had, nil
}

// Entry is one name the index holds.
type Entry struct {
	Name    string
	Kind    string // KindOS or KindFile
	Updated time.Time
}

// List returns the names the index holds in the view's namespace,
// sorted, without reading any value.
func (s *Store) List() ([]Entry, error) {
	idx, err := s.shared.readIndex()
	if err != nil {
		return nil, err
	}
	return idx.list(s.ns), nil
}

// serviceName is the OS store's service of a namespace: one per
// namespace, so that a principal's values can never answer for the
// user's.
func serviceName(ns string) string {
	if ns == "" {
		return "switchboard"
	}
	return "switchboard/" + ns
}
