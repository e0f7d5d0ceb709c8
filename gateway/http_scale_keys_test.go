package gateway

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeKeys(t *testing.T, mode os.FileMode, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func newKey(t testing.TB) []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// A key seals IDs that it, and only it, opens; rotation keeps the IDs
// sealed with the old key open while the new one seals.
func TestSessionKeysSealOpenAndRotate(t *testing.T) {
	oldK, newK := newKey(t), newKey(t)
	old, err := ReadSessionKeys(writeKeys(t, 0o600, "# old", base64.StdEncoding.EncodeToString(oldK)))
	if err != nil {
		t.Fatal(err)
	}
	id := old.Seal("http://10.0.0.5:8080")
	if !strings.HasPrefix(id, SessionIDPrefix) {
		t.Fatalf("id %q", id)
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session ID %q has a character outside visible ASCII", id)
		}
	}
	if id == old.Seal("http://10.0.0.5:8080") {
		t.Error("two sessions of one instance got the same ID")
	}
	if owner, ok := old.Open(id); !ok || owner != "http://10.0.0.5:8080" {
		t.Fatalf("open = %q, %v", owner, ok)
	}
	// Rotation, step 1: the new key first, the old one still there (hex
	// and unpadded base64 are read too).
	both, err := ReadSessionKeys(writeKeys(t, 0o600, base64.RawURLEncoding.EncodeToString(newK), "", hex.EncodeToString(oldK)))
	if err != nil {
		t.Fatal(err)
	}
	if owner, ok := both.Open(id); !ok || owner != "http://10.0.0.5:8080" {
		t.Errorf("an ID sealed with the old key does not open after rotation: %q, %v", owner, ok)
	}
	id2 := both.Seal("http://10.0.0.6:8080")
	if _, ok := old.Open(id2); ok {
		t.Error("an ID sealed with the new key opens with the old one alone")
	}
	// Step 2: the old key dropped; its IDs no longer open.
	only, err := ReadSessionKeys(writeKeys(t, 0o600, base64.StdEncoding.EncodeToString(newK)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := only.Open(id); ok {
		t.Error("an ID sealed with a dropped key still opens")
	}
	if owner, ok := only.Open(id2); !ok || owner != "http://10.0.0.6:8080" {
		t.Errorf("open = %q, %v", owner, ok)
	}
	// Tampering with any byte of the sealed part fails.
	b := []byte(id)
	b[len(b)-3] ^= 1
	if _, ok := only.Open(string(b)); ok && string(b) != id {
		t.Error("a tampered ID opens")
	}
}

func TestSessionKeyFileErrors(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(newKey(t))
	for _, c := range []struct {
		name  string
		mode  os.FileMode
		lines []string
		want  string
	}{
		{"readable by others", 0o644, []string{good}, "readable by others"},
		{"no key", 0o600, []string{"# nothing yet"}, "holds no key"},
		{"short key", 0o600, []string{good, base64.StdEncoding.EncodeToString([]byte("short"))}, "keys:2:"},
		{"not base64", 0o600, []string{"not a key at all!"}, "keys:1:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSessionKeys(writeKeys(t, c.mode, c.lines...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
}

// FuzzSessionIDOpen: whatever a client sends as its session ID, opening it
// neither panics nor yields an owner unless the ID was sealed with the key.
func FuzzSessionIDOpen(f *testing.F) {
	k := make([]byte, 32)
	p := filepath.Join(f.TempDir(), "keys")
	if err := os.WriteFile(p, []byte(hex.EncodeToString(k)), 0o600); err != nil {
		f.Fatal(err)
	}
	ks, err := ReadSessionKeys(p)
	if err != nil {
		f.Fatal(err)
	}
	id := ks.Seal("http://127.0.0.1:1")
	f.Add(id)
	f.Add(SessionIDPrefix)
	f.Add(SessionIDPrefix + "AAAA")
	f.Add("random-sdk-id")
	f.Fuzz(func(t *testing.T, s string) {
		owner, ok := ks.Open(s)
		if ok && s != id && owner != "" {
			// Only another genuine seal may open: it must round-trip.
			if !strings.HasPrefix(owner, "http://127.0.0.1:1") {
				t.Fatalf("forged ID %q opened to %q", s, owner)
			}
		}
	})
}

// A key ring reads its file again when it changed, before sealing and when
// an ID does not open; a file that fails serve's checks keeps the keys in
// force.
func TestKeyRingFollowsTheFile(t *testing.T) {
	oldK, newK := newKey(t), newKey(t)
	p := writeKeys(t, 0o600, base64.StdEncoding.EncodeToString(oldK))
	ring, err := NewSessionKeyRing(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	rekeyed := 0
	ring.rekeyed = func() { rekeyed++ }
	oldID := ring.Seal("http://a:1")
	// Another instance put a new key first and sealed with it.
	other, _ := ReadSessionKeys(writeKeys(t, 0o600, base64.StdEncoding.EncodeToString(newK), base64.StdEncoding.EncodeToString(oldK)))
	newID := other.Seal("http://b:1")
	if _, ok := ring.Open(newID); ok {
		t.Fatal("an ID sealed with a key the file does not hold opened")
	}
	rotated := base64.StdEncoding.EncodeToString(newK) + "\n" + base64.StdEncoding.EncodeToString(oldK) + "\n"
	if err := os.WriteFile(p+".tmp", []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
	// No restart: the ID sealed with the new key opens once the file has it…
	if owner, ok := ring.Open(newID); !ok || owner != "http://b:1" {
		t.Errorf("after the rotation an ID sealed with the new key: %q, %v", owner, ok)
	}
	// …and this instance seals with it too.
	if _, ok := other.Open(ring.Seal("http://a:1")); !ok {
		t.Error("after the rotation the ring does not seal with the new key")
	}
	if _, ok := ring.Open(oldID); !ok {
		t.Error("after the rotation the old key no longer opens")
	}
	if rekeyed != 1 {
		t.Errorf("rekeyed ran %d times, want 1", rekeyed)
	}
	// A file others can read is not used: the keys in force stay.
	if err := os.WriteFile(p, []byte(base64.StdEncoding.EncodeToString(newKey(t))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := ring.Open(oldID); !ok {
		t.Error("a key file readable by others replaced the keys in force")
	}
	if _, ok := other.Open(ring.Seal("http://a:1")); !ok {
		t.Error("a key file readable by others changed the sealing key")
	}
}
