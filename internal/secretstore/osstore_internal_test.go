package secretstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The package's tests run as in a program that links an OS store (the
// switchboard command links package oskeyring, whose tests run it against
// a real Secret Service): one that is never there to answer.
func init() {
	osOpen = func(time.Duration) OSStore { return absentOS{} }
}

type absentOS struct{}

func (absentOS) Probe(context.Context) error { return &AbsentError{Why: "no OS store in this test"} }
func (absentOS) Get(context.Context, string, string) (string, error) {
	return "", errors.New("the test's OS store was asked")
}
func (absentOS) Set(context.Context, string, string, string) error {
	return errors.New("the test's OS store was asked")
}
func (absentOS) Delete(context.Context, string, string) error {
	return errors.New("the test's OS store was asked")
}

// In a program that links no OS store: new values go to the file, with
// a note naming the package to import; a value the index says is in the
// OS store (put there by the switchboard command) is an error naming it,
// never "not set" and never a look into the file; forcing the OS store is
// an error.
func TestWithoutOSStore(t *testing.T) {
	saved := osOpen
	osOpen = nil
	t.Cleanup(func() { osOpen = saved })
	ctx := context.Background()
	dir := t.TempDir()
	bus := func(k string) (string, bool) { // a desktop session: a bus is there
		if k == "DBUS_SESSION_BUS_ADDRESS" {
			return "unix:path=/nonexistent/bus", true
		}
		return "", false
	}
	s := Open(&Options{Dir: dir, LookupEnv: bus})
	loc, err := s.Where(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if loc.Kind != KindFile || !strings.Contains(loc.Note, "switchboard/oskeyring") {
		t.Errorf("location = %+v, want the file, naming oskeyring", loc)
	}
	if _, err := s.Set(ctx, "MINE", "my-value"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "MINE"); err != nil || got != "my-value" {
		t.Errorf("Get = %q, %v", got, err)
	}
	// A value the switchboard command keeps in the OS store.
	if err := s.shared.editIndex(func(idx *index) error {
		idx.set("", "KEPT", entry{Store: KindOS, Updated: time.Now().UTC().Format(time.RFC3339)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = Open(&Options{Dir: dir, LookupEnv: bus}).Get(ctx, "KEPT")
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "switchboard/oskeyring") || !strings.Contains(err.Error(), "it is kept in") {
		t.Errorf("Get of a value kept in the OS store: %v", err)
	}
	_, err = Open(&Options{Dir: t.TempDir(), Kind: KindOS, LookupEnv: bus}).Where(ctx)
	if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_SECRET_STORE=os") || !strings.Contains(err.Error(), "switchboard/oskeyring") {
		t.Errorf("Where with the OS store forced: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "secrets", "store.enc")); err != nil {
		t.Errorf("the file store: %v", err)
	}
}
