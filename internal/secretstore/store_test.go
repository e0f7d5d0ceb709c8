package secretstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/keyringtest"
)

// noBus is an environment without a session bus: auto picks the file.
func noBus(t *testing.T) func(string) (string, bool) {
	rt := t.TempDir() // no "bus" in it
	return func(k string) (string, bool) {
		if k == "XDG_RUNTIME_DIR" {
			return rt, true
		}
		return "", false
	}
}

func names(t *testing.T, s *Store) []string {
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

// Without an OS store, values go to the encrypted file, which never holds
// them in clear, and the location says so.
func TestFileStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := Open(&Options{Dir: dir, LookupEnv: noBus(t)})
	loc, err := s.Where(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if loc.Kind != KindFile || !strings.Contains(loc.Note, "no D-Bus session bus") || !strings.Contains(loc.Note, "not from whoever can read your home directory") {
		t.Errorf("location = %+v", loc)
	}
	const value = "tok_live_0123456789abcdef\nsecond line"
	if _, err := s.Set(ctx, "API_TOKEN", value); err != nil {
		t.Fatal(err)
	}
	if _, err := s.In("principal/alice").Set(ctx, "API_TOKEN", "alice's own value"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "API_TOKEN")
	if err != nil || got != value {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if got, _ := s.In("principal/alice").Get(ctx, "API_TOKEN"); got != "alice's own value" {
		t.Errorf("alice's value = %q", got)
	}
	for _, f := range []string{"store.enc", "store.key", "index.json"} {
		fi, err := os.Stat(filepath.Join(dir, "secrets", f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %04o", f, fi.Mode().Perm())
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "secrets", "store.enc"))
	if bytes.Contains(raw, []byte("tok_live")) || bytes.Contains(raw, []byte("alice")) {
		t.Errorf("store.enc holds a value in clear: %s", raw)
	}
	if diff := cmp.Diff([]string{"API_TOKEN@file"}, names(t, s)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	// Rotate, then remove.
	if _, err := s.Set(ctx, "API_TOKEN", "rotated-value"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "API_TOKEN"); got != "rotated-value" {
		t.Errorf("after rotation Get = %q", got)
	}
	if had, err := s.Delete(ctx, "API_TOKEN"); !had || err != nil {
		t.Errorf("Delete = %v, %v", had, err)
	}
	_, err = s.Get(ctx, "API_TOKEN")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "store.enc") {
		t.Errorf("Get after Delete: %v", err)
	}
	if had, err := s.Delete(ctx, "API_TOKEN"); had || err != nil {
		t.Errorf("second Delete = %v, %v", had, err)
	}
	if got, _ := s.In("principal/alice").Get(ctx, "API_TOKEN"); got != "alice's own value" {
		t.Errorf("deleting the user's removed alice's: %q", got)
	}
}

func TestValueProblems(t *testing.T) {
	s := Open(&Options{Dir: t.TempDir(), Kind: KindFile})
	for v, want := range map[string]string{
		"":                            "secret X: the value is empty",
		"a\x00b":                      "secret X: the value holds a NUL byte, which no environment variable or header can carry",
		strings.Repeat("a", 64<<10+1): "secret X: the value is longer than 65536 bytes",
	} {
		if _, err := s.Set(context.Background(), "X", v); err == nil || err.Error() != want {
			t.Errorf("Set(%.10q) = %v, want %s", v, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "store.enc")); err == nil {
		t.Error("a refused value created the store")
	}
}

// A damaged store, a store without its key, a key others may read and a
// damaged index are errors naming the file; nothing is written over them.
func TestFileStoreBadFiles(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*Store, string) {
		s := Open(&Options{Dir: t.TempDir(), Kind: KindFile})
		if _, err := s.Set(ctx, "A", "value-of-a"); err != nil {
			t.Fatal(err)
		}
		return s, s.Dir()
	}
	for _, tc := range []struct {
		name   string
		break_ func(dir string)
		file   string // the file the error names and that must stay as it is
		want   string
	}{
		{"damaged store", func(dir string) { os.WriteFile(filepath.Join(dir, "store.enc"), []byte("{not json"), 0o600) },
			"store.enc", "is not a secret store Switchboard can read"},
		{"flipped bit", func(dir string) {
			var sf sealedFile
			b, _ := os.ReadFile(filepath.Join(dir, "store.enc"))
			json.Unmarshal(b, &sf)
			sealed, _ := base64.StdEncoding.DecodeString(sf.Sealed)
			sealed[0] ^= 1
			sf.Sealed = base64.StdEncoding.EncodeToString(sealed)
			b, _ = json.Marshal(sf)
			os.WriteFile(filepath.Join(dir, "store.enc"), b, 0o600)
		}, "store.enc", "cannot be opened with the key"},
		{"key gone", func(dir string) { os.Remove(filepath.Join(dir, "store.key")) },
			"store.enc", "exists but its key"},
		{"key readable by others", func(dir string) { os.Chmod(filepath.Join(dir, "store.key"), 0o644) },
			"store.key", "has mode 0644, so others may read it"},
		{"damaged index", func(dir string) { os.WriteFile(filepath.Join(dir, "index.json"), []byte("[1,"), 0o600) },
			"index.json", "is not an index of secrets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := setup(t)
			tc.break_(dir)
			before, _ := os.ReadFile(filepath.Join(dir, tc.file))
			_, err := s.Set(ctx, "B", "value-of-b")
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tc.file)) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Set: %v; want an error naming %s: %s", err, tc.file, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "secret B: ") {
				t.Errorf("the error does not name the secret: %v", err)
			}
			after, _ := os.ReadFile(filepath.Join(dir, tc.file))
			if !bytes.Equal(before, after) {
				t.Errorf("%s was written over", tc.file)
			}
			if tc.file != "index.json" {
				if _, err := s.Get(ctx, "A"); err == nil || !strings.Contains(err.Error(), tc.file) {
					t.Errorf("Get: %v", err)
				}
			}
		})
	}
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
	s := Open(&Options{Dir: dir, Timeout: 20e9})
	loc, err := s.Where(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if loc.Kind != KindOS || loc.Note != "" {
		t.Fatalf("location = %+v, want the Secret Service", loc)
	}
	const value = "ghp_0123456789abcdefghijklmnopqrstuvwxyz\nwith a second line"
	if got, err := s.Set(ctx, "GITHUB_TOKEN", value); err != nil || got.Kind != KindOS {
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
	if got, err := Open(&Options{Dir: t.TempDir()}).Get(ctx, "GITHUB_TOKEN"); err != nil || got != value {
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
		ls := Open(&Options{Dir: dir, Timeout: 10e9})
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
		if loc, err := ls.Set(ctx, "OTHER", "other-value"); err != nil || loc.Kind != KindOS {
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
	if _, err := s.Get(ctx, "GITHUB_TOKEN"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}

	t.Run("service gone", func(t *testing.T) {
		if _, err := s.Set(ctx, "KEPT", "kept-value"); err != nil {
			t.Fatal(err)
		}
		k.Stop()
		// The index says where KEPT is: its lookup is an error about the
		// store, not "not set", and never a look into the file.
		_, err := Open(&Options{Dir: dir, Timeout: 10e9}).Get(ctx, "KEPT")
		t.Logf("Get with the service gone: %v", err)
		if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "D-Bus") {
			t.Errorf("Get with the service gone: %v", err)
		}
	})
}
