package proc

import (
	"errors"
	"strings"
	"testing"
)

// macOS: a loopback allow-list becomes outbound rules for those ports
// alone; a list naming another host, or loopback for a server that may
// not reach private addresses, does not start (built here, run on macOS).
func TestSandboxSeatbeltNetwork(t *testing.T) {
	sb := &Sandbox{Write: []string{"/ws"}, Allow: []string{"127.0.0.1:8080", "[::1]:9000", "localhost:22"}, AllowPrivate: true}
	ports, err := seatbeltPorts(sb)
	if err != nil {
		t.Fatal(err)
	}
	prof := seatbeltProfile(sb, ports)
	want := `(allow network-outbound (remote tcp "localhost:8080") (remote tcp "localhost:9000") (remote tcp "localhost:22"))`
	if !strings.Contains(prof, want) || strings.Contains(prof, "(allow network*)") {
		t.Errorf("profile:\n%s\nwant %s and no network*", prof, want)
	}
	if prof := seatbeltProfile(&Sandbox{}, nil); strings.Contains(prof, "network") {
		t.Errorf("no network, yet the profile allows some:\n%s", prof)
	}
	for _, bad := range []*Sandbox{
		{Allow: []string{"registry.npmjs.org:443"}, AllowPrivate: true},
		{Allow: []string{"127.0.0.1:8080"}},
	} {
		if _, _, err := sandboxCommand(bad, "srv", nil, true); !errors.Is(err, ErrSandboxUnavailable) {
			t.Errorf("%v: %v, want ErrSandboxUnavailable", bad.Allow, err)
		}
	}
}

// macOS: a path kept read-only inside a writable one is left out of the
// rule that allows writes there (require-not), whatever the rules' order.
func TestSandboxSeatbeltReadOnlyInsideWrite(t *testing.T) {
	prof := seatbeltProfile(&Sandbox{Write: []string{"/ws", "/data"}, ReadOnly: []string{"/ws/.git"}}, nil)
	want := `(allow file-write* (require-all (require-any (subpath "/ws") (subpath "/data")) (require-not (subpath "/ws/.git"))))`
	if !strings.Contains(prof, want) {
		t.Errorf("profile:\n%s\nwant %s", prof, want)
	}
	if prof := seatbeltProfile(&Sandbox{}, nil); strings.Contains(prof, "require-all") {
		t.Errorf("no writable path, yet:\n%s", prof)
	}
}
