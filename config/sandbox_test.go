package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A project-scope stdio server is sandboxed with no network unless its
// definition lists destinations; a list is what it may reach, and what
// the approval review, status, `mcp get` and doctor say in words.
func TestSandboxNetworkOfProjectServers(t *testing.T) {
	project := func(raw string) *ResolvedServer {
		t.Helper()
		s, diags := ParseServer("srv", []byte(raw))
		if len(diags) > 0 {
			t.Fatalf("%s: %v", raw, diags)
		}
		return &ResolvedServer{Name: "srv", Written: s, Effective: s, Scope: ScopeProject, Trust: TrustRepo}
	}
	for _, tt := range []struct {
		raw, words string
		allow      []string
	}{
		{`{"command": "srv"}`, "can read and write /ws (and the system directories, read-only; the rest of your home is hidden; a private /tmp); no network", nil},
		{`{"command": "srv", "sandbox": {"network": ["registry.npmjs.org:443", "127.0.0.1:8080"]}}`,
			"can read and write /ws (and the system directories, read-only; the rest of your home is hidden; a private /tmp); network only to registry.npmjs.org:443, 127.0.0.1:8080",
			[]string{"registry.npmjs.org:443", "127.0.0.1:8080"}},
		{`{"command": "srv", "sandbox": {"fs": {"read": ["docs"]}, "network": ["[::1]:9"]}}`,
			"can read /ws/docs (and the system directories, read-only; the rest of your home is hidden; a private /tmp); network only to [::1]:9",
			[]string{"[::1]:9"}},
		{`{"command": "srv", "sandbox": {"network": true}}`, "can read and write /ws (and the system directories, read-only; the rest of your home is hidden; a private /tmp); full network", nil},
	} {
		p := EffectiveSandbox(project(tt.raw), "/ws", "/home/me", nil)
		if p == nil {
			t.Fatalf("%s: not sandboxed", tt.raw)
		}
		if diff := cmp.Diff(tt.allow, p.Allow); diff != "" {
			t.Errorf("%s: allow-list (-want +got):\n%s", tt.raw, diff)
		}
		if got := DescribeSandbox(p, nil); got != tt.words {
			t.Errorf("%s:\n got %q\nwant %q", tt.raw, got, tt.words)
		}
	}
	if _, diags := ParseServer("srv", []byte(`{"command": "srv", "sandbox": {"network": ["::1:9"]}}`)); len(diags) == 0 {
		t.Errorf("an unbracketed IPv6 destination was accepted")
	}
}
