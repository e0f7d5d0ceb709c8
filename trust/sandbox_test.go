package trust

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/config"
)

// A definition without a "sandbox" field keeps the fingerprint it had
// before the field existed (its approvals stay valid: its sandbox is the
// scope default, which is the user's to set); writing, changing or
// removing the field makes the approval stale, naming "sandbox".
func TestSandboxInFingerprint(t *testing.T) {
	base := config.Server{Command: "npx", Args: []string{"-y", "pkg"}}
	// The v1 encoding of base, as it was before the sandbox field.
	const before = `["switchboard-launch-v1","stdio","npx",["-y","pkg"],[],"","",[],"",[]]`
	if got := string(Encode(base)); got != before {
		t.Fatalf("a definition without a sandbox encodes as\n%s\nwant, as before the field,\n%s", got, before)
	}
	with := func(sb *config.Sandbox) config.Server { d := base; d.Sandbox = sb; return d }
	variants := map[string]config.Server{
		"default": with(&config.Sandbox{}),
		"off":     with(&config.Sandbox{Off: true}),
		"network": with(&config.Sandbox{Network: config.SandboxNetwork{All: true}}),
		"allow":   with(&config.Sandbox{Network: config.SandboxNetwork{Allow: []string{"127.0.0.1:80"}}}),
		"read":    with(&config.Sandbox{FS: &config.SandboxFS{Read: []string{"docs"}}}),
		"write":   with(&config.Sandbox{FS: &config.SandboxFS{Write: []string{"docs"}}}),
	}
	seen := map[string]string{Fingerprint(base): "absent"}
	for name, d := range variants {
		fp := Fingerprint(d)
		if other, dup := seen[fp]; dup {
			t.Errorf("%s and %s have the same fingerprint", name, other)
		}
		seen[fp] = name
	}

	s := Open(t.TempDir())
	rs := repoServer("srv", base)
	if _, err := s.Approve("/ws", rs, t0); err != nil {
		t.Fatal(err)
	}
	for name, d := range variants {
		v := s.Check(repoServer("srv", d), "/ws")
		if v.Status != Stale {
			t.Fatalf("%s: %v, want approval-stale", name, v.Status)
		}
		if diff := cmp.Diff([]string{"sandbox"}, v.Changed); diff != "" {
			t.Errorf("%s: changed (-want +got):\n%s", name, diff)
		}
	}
	// Approved with a sandbox, then the field removed: stale too.
	if _, err := s.Approve("/ws2", repoServer("srv", variants["read"]), t0); err != nil {
		t.Fatal(err)
	}
	if v := s.Check(rs, "/ws2"); v.Status != Stale || !cmp.Equal(v.Changed, []string{"sandbox"}) {
		t.Errorf("sandbox removed: %v %v, want approval-stale naming sandbox", v.Status, v.Changed)
	}
}
