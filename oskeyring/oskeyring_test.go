package oskeyring_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/keyringtest"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	_ "github.com/switchboard-mcp/switchboard/oskeyring"
)

func names(t *testing.T, s *secretstore.Store) []string {
	t.Helper()
	l, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l {
		out = append(out, e.Name+"@"+e.Kind)
	}
	return out
}

// The real Secret Service: gnome-keyring-daemon on a private session bus.
// Auto picks it; values never touch the file; a locked keyring and a
// service that went away are clear errors, and the file is never used in
// their place.
func TestSecretService(t *testing.T) {
	k := keyringtest.Start(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", k.Addr) // the D-Bus library reads it
	ctx := context.Background()
	dir := t.TempDir()
	s := secretstore.Open(&secretstore.Options{Dir: dir, Timeout: 20e9})
	loc, err := s.Where(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if loc.Kind != secretstore.KindOS || loc.Note != "" {
		t.Fatalf("location = %+v, want the Secret Service", loc)
	}
	const value = "ghp_0123456789abcdefghijklmnopqrstuvwxyz\nwith a second line"
	if got, err := s.Set(ctx, "GITHUB_TOKEN", value); err != nil || got.Kind != secretstore.KindOS {
		t.Fatalf("Set = %+v, %v", got, err)
	}
	if _, err := s.In("principal/bob").Set(ctx, "GITHUB_TOKEN", "bob's token"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "GITHUB_TOKEN"); err != nil || got != value {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if got, _ := s.In("principal/bob").Get(ctx, "GITHUB_TOKEN"); got != "bob's token" {
		t.Errorf("bob's = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "secrets", "store.enc")); err == nil {
		t.Error("the encrypted file was written although the Secret Service answers")
	}
	if diff := cmp.Diff([]string{"GITHUB_TOKEN@os"}, names(t, s)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	// The value is in the keyring itself: another process (a new Store) reads it.
	if got, err := secretstore.Open(&secretstore.Options{Dir: t.TempDir()}).Get(ctx, "GITHUB_TOKEN"); err != nil || got != value {
		t.Errorf("a fresh store reads %q, %v", got, err)
	}

	t.Run("locked", func(t *testing.T) {
		if err := k.Lock(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := k.Unlock(); err != nil {
				t.Fatal(err)
			}
		}()
		before, _ := os.ReadFile(filepath.Join(dir, "secrets", "index.json"))
		ls := secretstore.Open(&secretstore.Options{Dir: dir, Timeout: 10e9})
		_, err := ls.Get(ctx, "GITHUB_TOKEN")
		t.Logf("locked Get: %v", err)
		if err == nil || !strings.Contains(err.Error(), "is locked") {
			t.Errorf("Get from a locked keyring: %v; want an error saying it is locked", err)
		}
		_, err = ls.Set(ctx, "OTHER", "other-value")
		if err == nil || !strings.Contains(err.Error(), "OTHER") || !strings.Contains(err.Error(), "lock") {
			t.Errorf("Set into a locked keyring: %v", err)
		}
		after, _ := os.ReadFile(filepath.Join(dir, "secrets", "index.json"))
		if !bytes.Equal(before, after) {
			t.Error("a failed Set changed the index")
		}
		if _, err := os.Stat(filepath.Join(dir, "secrets", "store.enc")); err == nil {
			t.Error("a locked keyring sent the value to the file")
		}
		// Unlocked later, the same store (a gateway that started before
		// the login) reads it: a failure is not remembered.
		if err := k.Unlock(); err != nil {
			t.Fatal(err)
		}
		if got, err := ls.Get(ctx, "GITHUB_TOKEN"); err != nil || got != value {
			t.Errorf("after unlocking, the same store reads %q, %v", got, err)
		}
		if loc, err := ls.Set(ctx, "OTHER", "other-value"); err != nil || loc.Kind != secretstore.KindOS {
			t.Errorf("after unlocking, the same store's Set = %+v, %v", loc, err)
		}
		ls.Delete(ctx, "OTHER")
	})
	if got, err := s.Get(ctx, "GITHUB_TOKEN"); err != nil || got != value {
		t.Fatalf("unlocked again: Get = %q, %v", got, err)
	}
	if had, err := s.Delete(ctx, "GITHUB_TOKEN"); !had || err != nil {
		t.Fatalf("Delete = %v, %v", had, err)
	}
	if _, err := s.Get(ctx, "GITHUB_TOKEN"); !errors.Is(err, secretstore.ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}

	t.Run("service gone", func(t *testing.T) {
		if _, err := s.Set(ctx, "KEPT", "kept-value"); err != nil {
			t.Fatal(err)
		}
		k.Stop()
		// The index says where KEPT is: its lookup is an error about the
		// store, not "not set", and never a look into the file.
		_, err := secretstore.Open(&secretstore.Options{Dir: dir, Timeout: 10e9}).Get(ctx, "KEPT")
		t.Logf("Get with the service gone: %v", err)
		if err == nil || errors.Is(err, secretstore.ErrNotFound) || !strings.Contains(err.Error(), "D-Bus") {
			t.Errorf("Get with the service gone: %v", err)
		}
	})
}
