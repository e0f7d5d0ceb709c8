package cli

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/gateway"
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
	first, err := gateway.ReadSessionKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	id := first.Seal("http://10.0.0.5:8080")
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
	both, err := gateway.ReadSessionKeys(p)
	if err != nil || both.Len() != 2 {
		t.Fatalf("after rotation: %v, %d keys", err, both.Len())
	}
	if _, ok := both.Open(id); !ok {
		t.Error("the old key no longer opens its IDs after rotation")
	}
	if _, ok := first.Open(both.Seal("http://x:1")); ok {
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
	old, _ := gateway.ReadSessionKeys(p)
	oldID := old.Seal("http://10.0.0.5:8080")
	if err := gatewaySessionKeyAddRun(&GatewaySessionKeyOptions{IO: ios, File: p, Next: true}); err != nil {
		t.Fatal(err)
	}
	staged, err := gateway.ReadSessionKeys(p)
	if err != nil || staged.Len() != 2 {
		t.Fatalf("after add --next: %v, %d keys", err, staged.Len())
	}
	if _, ok := old.Open(staged.Seal("http://x:1")); !ok {
		t.Error("after add --next the file seals with the new key already")
	}
	if !strings.Contains(errOut.String(), "session-key promote") {
		t.Errorf("add --next does not say what comes next: %q", errOut.String())
	}
	if err := gatewaySessionKeyPromoteRun(&GatewaySessionKeyOptions{IO: ios, File: p}); err != nil {
		t.Fatal(err)
	}
	promoted, err := gateway.ReadSessionKeys(p)
	if err != nil || promoted.Len() != 2 {
		t.Fatalf("after promote: %v, %d keys", err, promoted.Len())
	}
	newID := promoted.Seal("http://x:1")
	if _, ok := old.Open(newID); ok {
		t.Error("after promote the file still seals with the old key")
	}
	if _, ok := staged.Open(newID); !ok {
		t.Error("an instance still on the staged file cannot open an ID sealed after promote")
	}
	if _, ok := promoted.Open(oldID); !ok {
		t.Error("after promote the old key no longer opens its IDs")
	}
	// One key: nothing to promote.
	one := writeKeys(t, 0o600, base64.StdEncoding.EncodeToString(newKey(t)))
	if err := gatewaySessionKeyPromoteRun(&GatewaySessionKeyOptions{IO: ios, File: one}); err == nil {
		t.Error("promote with one key was accepted")
	}
}
