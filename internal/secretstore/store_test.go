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
			"store.key", "has mode 0644, so others may read it (it must be 0600: chmod 600 "},
		{"key readable by others, what it means", func(dir string) { os.Chmod(filepath.Join(dir, "store.key"), 0o644) },
			"store.key", "whoever read it can decrypt the store: treat its secrets as exposed"},
		{"index readable by others", func(dir string) { os.Chmod(filepath.Join(dir, "index.json"), 0o644) },
			"index.json", "secrets' names and where they are used, not their values"},
		{"store readable by others", func(dir string) { os.Chmod(filepath.Join(dir, "store.enc"), 0o644) },
			"store.enc", "encrypted: exposed only to someone who read store.key too"},
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
