package cli

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
	old, err := readSessionKeys(writeKeys(t, 0o600, "# old", base64.StdEncoding.EncodeToString(oldK)))
	if err != nil {
		t.Fatal(err)
	}
	id := old.seal("http://10.0.0.5:8080")
	if !strings.HasPrefix(id, sessionIDPrefix) {
		t.Fatalf("id %q", id)
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session ID %q has a character outside visible ASCII", id)
		}
	}
	if id == old.seal("http://10.0.0.5:8080") {
		t.Error("two sessions of one instance got the same ID")
	}
	if owner, ok := old.open(id); !ok || owner != "http://10.0.0.5:8080" {
		t.Fatalf("open = %q, %v", owner, ok)
	}
	// Rotation, step 1: the new key first, the old one still there (hex
	// and unpadded base64 are read too).
	both, err := readSessionKeys(writeKeys(t, 0o600, base64.RawURLEncoding.EncodeToString(newK), "", hex.EncodeToString(oldK)))
	if err != nil {
		t.Fatal(err)
	}
	if owner, ok := both.open(id); !ok || owner != "http://10.0.0.5:8080" {
		t.Errorf("an ID sealed with the old key does not open after rotation: %q, %v", owner, ok)
	}
	id2 := both.seal("http://10.0.0.6:8080")
	if _, ok := old.open(id2); ok {
		t.Error("an ID sealed with the new key opens with the old one alone")
	}
	// Step 2: the old key dropped; its IDs no longer open.
	only, err := readSessionKeys(writeKeys(t, 0o600, base64.StdEncoding.EncodeToString(newK)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := only.open(id); ok {
		t.Error("an ID sealed with a dropped key still opens")
	}
	if owner, ok := only.open(id2); !ok || owner != "http://10.0.0.6:8080" {
		t.Errorf("open = %q, %v", owner, ok)
	}
	// Tampering with any byte of the sealed part fails.
	b := []byte(id)
	b[len(b)-3] ^= 1
	if _, ok := only.open(string(b)); ok && string(b) != id {
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
			_, err := readSessionKeys(writeKeys(t, c.mode, c.lines...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
}

func TestAdvertiseURL(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:8080", "[::]:8080", ":8080"} {
		if _, err := advertiseURL("", listen); err == nil {
			t.Errorf("no --advertise with the wildcard listen address %s was accepted", listen)
		}
	}
	if u, err := advertiseURL("", "[::1]:8080"); err != nil || u != "" {
		t.Errorf("derived advertise on [::1] = %q, %v (want it left to serveHTTP)", u, err)
	}
	if _, err := advertiseURL("ftp://x", "127.0.0.1:0"); err == nil {
		t.Error("--advertise ftp://x was accepted")
	}
	if u, err := advertiseURL("http://10.0.0.5:8080/mcp", "0.0.0.0:8080"); err != nil || u != "http://10.0.0.5:8080" {
		t.Errorf("advertise = %q, %v", u, err)
	}
	if u, err := advertiseURL("", "127.0.0.1:0"); err != nil || u != "" {
		t.Errorf("derived advertise = %q, %v (want it left to serveHTTP)", u, err)
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
	ks, err := readSessionKeys(p)
	if err != nil {
		f.Fatal(err)
	}
	id := ks.seal("http://127.0.0.1:1")
	f.Add(id)
	f.Add(sessionIDPrefix)
	f.Add(sessionIDPrefix + "AAAA")
	f.Add("random-sdk-id")
	f.Fuzz(func(t *testing.T, s string) {
		owner, ok := ks.open(s)
		if ok && s != id && owner != "" {
			// Only another genuine seal may open: it must round-trip.
			if !strings.HasPrefix(owner, "http://127.0.0.1:1") {
				t.Fatalf("forged ID %q opened to %q", s, owner)
			}
		}
	})
}

// `gateway session-key add` makes a file serve accepts, and rotating puts
// the new key first while the old one (and the user's comments) stay.
func TestGatewaySessionKeyAdd(t *testing.T) {
	ios, _, _, errOut := Test()
	p := filepath.Join(t.TempDir(), "session-keys")
	if err := gatewaySessionKeyAddRun(&GatewaySessionKeyOptions{IO: ios, File: p}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode())
	}
	first, err := readSessionKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	id := first.seal("http://10.0.0.5:8080")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, "# the key of the first deploy\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := gatewaySessionKeyAddRun(&GatewaySessionKeyOptions{IO: ios, File: p}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	if !strings.Contains(string(b), "# the key of the first deploy") {
		t.Errorf("rotation lost the file's comment:\n%s", b)
	}
	both, err := readSessionKeys(p)
	if err != nil || len(both.aeads) != 2 {
		t.Fatalf("after rotation: %v, %d keys", err, len(both.aeads))
	}
	if _, ok := both.open(id); !ok {
		t.Error("the old key no longer opens its IDs after rotation")
	}
	if _, ok := first.open(both.seal("http://x:1")); ok {
		t.Error("the new file still seals with the old key")
	}
	if !strings.Contains(errOut.String(), "older key(s) still open") {
		t.Errorf("stderr %q", errOut.String())
	}
	// A file others can read is refused, not extended.
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := gatewaySessionKeyAddRun(&GatewaySessionKeyOptions{IO: ios, File: p}); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("err = %v", err)
	}
	if b2, _ := os.ReadFile(p); string(b2) != string(b) {
		t.Error("a refused add changed the file")
	}
}

// A rotation in two steps, for instances whose copies of the file change
// at their own times: `add --next` puts the new key second (it opens, the
// first still seals), `promote` makes it first.
func TestGatewaySessionKeyAddNextAndPromote(t *testing.T) {
	ios, _, _, errOut := Test()
	p := filepath.Join(t.TempDir(), "session-keys")
	if err := gatewaySessionKeyAddRun(&GatewaySessionKeyOptions{IO: ios, File: p, Next: true}); err == nil || !strings.Contains(err.Error(), "holds none") {
		t.Fatalf("add --next to a new file: %v; want it refused", err)
	}
	if err := gatewaySessionKeyAddRun(&GatewaySessionKeyOptions{IO: ios, File: p}); err != nil {
		t.Fatal(err)
	}
	old, _ := readSessionKeys(p)
	oldID := old.seal("http://10.0.0.5:8080")
	if err := gatewaySessionKeyAddRun(&GatewaySessionKeyOptions{IO: ios, File: p, Next: true}); err != nil {
		t.Fatal(err)
	}
	staged, err := readSessionKeys(p)
	if err != nil || len(staged.aeads) != 2 {
		t.Fatalf("after add --next: %v, %d keys", err, len(staged.aeads))
	}
	if _, ok := old.open(staged.seal("http://x:1")); !ok {
		t.Error("after add --next the file seals with the new key already")
	}
	if !strings.Contains(errOut.String(), "session-key promote") {
		t.Errorf("add --next does not say what comes next: %q", errOut.String())
	}
	if err := gatewaySessionKeyPromoteRun(&GatewaySessionKeyOptions{IO: ios, File: p}); err != nil {
		t.Fatal(err)
	}
	promoted, err := readSessionKeys(p)
	if err != nil || len(promoted.aeads) != 2 {
		t.Fatalf("after promote: %v, %d keys", err, len(promoted.aeads))
	}
	newID := promoted.seal("http://x:1")
	if _, ok := old.open(newID); ok {
		t.Error("after promote the file still seals with the old key")
	}
	if _, ok := staged.open(newID); !ok {
		t.Error("an instance still on the staged file cannot open an ID sealed after promote")
	}
	if _, ok := promoted.open(oldID); !ok {
		t.Error("after promote the old key no longer opens its IDs")
	}
	// One key: nothing to promote.
	one := writeKeys(t, 0o600, base64.StdEncoding.EncodeToString(newKey(t)))
	if err := gatewaySessionKeyPromoteRun(&GatewaySessionKeyOptions{IO: ios, File: one}); err == nil {
		t.Error("promote with one key was accepted")
	}
}

// A key ring reads its file again when it changed, before sealing and when
// an ID does not open; a file that fails serve's checks keeps the keys in
// force.
func TestKeyRingFollowsTheFile(t *testing.T) {
	oldK, newK := newKey(t), newKey(t)
	p := writeKeys(t, 0o600, base64.StdEncoding.EncodeToString(oldK))
	ring, err := newKeyRing(p)
	if err != nil {
		t.Fatal(err)
	}
	rekeyed := 0
	ring.rekeyed = func() { rekeyed++ }
	oldID := ring.seal("http://a:1")
	// Another instance put a new key first and sealed with it.
	other, _ := readSessionKeys(writeKeys(t, 0o600, base64.StdEncoding.EncodeToString(newK), base64.StdEncoding.EncodeToString(oldK)))
	newID := other.seal("http://b:1")
	if _, ok := ring.open(newID); ok {
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
	if owner, ok := ring.open(newID); !ok || owner != "http://b:1" {
		t.Errorf("after the rotation an ID sealed with the new key: %q, %v", owner, ok)
	}
	// …and this instance seals with it too.
	if _, ok := other.open(ring.seal("http://a:1")); !ok {
		t.Error("after the rotation the ring does not seal with the new key")
	}
	if _, ok := ring.open(oldID); !ok {
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
	if _, ok := ring.open(oldID); !ok {
		t.Error("a key file readable by others replaced the keys in force")
	}
	if _, ok := other.open(ring.seal("http://a:1")); !ok {
		t.Error("a key file readable by others changed the sealing key")
	}
}
