package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/policy"
)

// rulesFor is the text of the rules the Auth applies to principal name
// (of no group) right now, sorted.
func rulesFor(a *gateway.Auth, name string) []string {
	var out []string
	for _, r := range a.Scoped().For(name, nil) {
		out = append(out, string(r.List)+":"+r.Text)
	}
	sort.Strings(out)
	return out
}

// TestAuthAllowFor is the writer of a principal's "always": the rule goes
// to that principal's entry only (a new entry holding only "allow" for a
// caller without one), the file keeps its comments, other entries and
// mode, and the Auth applies the rule at once, without a reload by
// anyone else. Writing it twice changes nothing; a name an entry cannot
// have, a rule that would not take effect and a broken file write
// nothing.
func TestAuthAllowFor(t *testing.T) {
	aliceKey, aliceID, _ := gateway.NewKey()
	bobKey, bobID, _ := gateway.NewKey()
	path := filepath.Join(t.TempDir(), gateway.AuthFileName)
	src := `// the team's gateway: keep this comment
{
  "principals": {
    "alice": {"keys": [{"id": "` + aliceID + `", "sha256": "` + gateway.KeyHash(aliceKey) + `", "created": "2026-12-02T10:00:00Z"}]},
    // bob reads only
    "bob": {"keys": [{"id": "` + bobID + `", "sha256": "` + gateway.KeyHash(bobKey) + `", "created": "2026-12-02T10:00:00Z"}],
            "allow": ["mcp__fs__read_file"], "deny": ["mcp__alpha__echo"]},
  },
}
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	a := gateway.NewAuth(&gateway.AuthOptions{File: path})
	ctx := context.Background()
	alice, err := a.Authenticate(ctx, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	if !a.CanAllowFor(alice) {
		t.Fatal("alice, a key's principal, cannot have rules written")
	}
	if got := a.AllowWhere("alice"); !strings.HasPrefix(got, "alice's entry in ") || !strings.HasSuffix(got, gateway.AuthFileName) {
		t.Errorf("AllowWhere: %q", got)
	}

	if err := a.AllowFor("alice", "mcp__alpha__echo"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"allow:mcp__alpha__echo"}, rulesFor(a, "alice")); diff != "" {
		t.Errorf("alice's rules right after AllowFor (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"allow:mcp__fs__read_file", "deny:mcp__alpha__echo"}, rulesFor(a, "bob")); diff != "" {
		t.Errorf("bob's rules (-want +got):\n%s", diff)
	}
	// A policy with alice's rules allows her call.
	pol := policy.New().With(a.Scoped().For("alice", nil)...)
	if d := pol.Decide(policy.Request{Tool: "mcp__alpha__echo", Server: "alpha", ToolName: "echo"}); d.Action != policy.Allow {
		t.Errorf("alice's call after AllowFor: %v", d)
	}
	raw, _ := os.ReadFile(path)
	for _, keep := range []string{"// the team's gateway: keep this comment", "// bob reads only", gateway.KeyHash(bobKey)} {
		if !strings.Contains(string(raw), keep) {
			t.Errorf("the file lost %q:\n%s", keep, raw)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after the edit: %v %v", fi.Mode(), err)
	}
	for _, key := range []string{aliceKey, bobKey} {
		if _, err := a.Authenticate(ctx, key); err != nil {
			t.Errorf("a key after the edit: %v", err)
		}
	}

	// A second rule is appended; the same rule again changes nothing.
	if err := a.AllowFor("alice", "mcp__alpha__add"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := a.AllowFor("alice", "mcp__alpha__echo"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("writing a rule that is there changed the file:\n%s\n---\n%s", before, after)
	}
	f, _, err := gateway.ReadAuthFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp__alpha__echo", "mcp__alpha__add"}, f.Principals["alice"].Allow); diff != "" {
		t.Errorf("alice's allow list (-want +got):\n%s", diff)
	}

	// An access token's caller with no entry gets one holding only allow.
	dave := &gateway.Principal{Name: "dave@example.com", Issuer: "https://login.example.com"}
	if !a.CanAllowFor(dave) {
		t.Fatal("a token's caller cannot have rules written")
	}
	if err := a.AllowFor(dave.Name, "mcp__alpha__echo"); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(path)
	std, err := hujson.Standardize(raw)
	if err != nil {
		t.Fatal(err)
	}
	var generic struct {
		Principals map[string]map[string]any `json:"principals"`
	}
	if err := json.Unmarshal(std, &generic); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"allow": []any{"mcp__alpha__echo"}}, generic.Principals["dave@example.com"]); diff != "" {
		t.Errorf("dave's new entry (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"allow:mcp__alpha__echo"}, rulesFor(a, dave.Name)); diff != "" {
		t.Errorf("dave's rules (-want +got):\n%s", diff)
	}

	// Refused, the file untouched.
	before, _ = os.ReadFile(path)
	for _, c := range []struct{ name, rule string }{
		{"auth0|1234", "mcp__alpha__echo"}, // a token's name an entry cannot have
		{"alice", "mcp__*"},                // a rule that would not take effect
		{"alice", " mcp__alpha__pid"},
	} {
		if err := a.AllowFor(c.name, c.rule); err == nil {
			t.Errorf("AllowFor(%q, %q) wrote", c.name, c.rule)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("a refused write changed the file:\n%s", after)
	}
	if p := (&gateway.Principal{Name: "auth0|1234", Issuer: "https://login.example.com"}); a.CanAllowFor(p) {
		t.Error("rules can be written for a name the file cannot hold")
	}
	if p := (&gateway.Principal{Name: gateway.SharedTokenPrincipal}); a.CanAllowFor(p) {
		t.Error("rules can be written for the shared token's principal")
	}
	if gateway.NewAuth(nil).CanAllowFor(alice) || gateway.NewAuth(nil).AllowFor("alice", "mcp__alpha__echo") == nil {
		t.Error("an Auth without a file writes rules")
	}

	// A file its administrator made read-only (chmod 400) is not written
	// to: always is not offered.
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if a.CanAllowFor(alice) {
		t.Error("rules can be written to a file of mode 0400")
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if !a.CanAllowFor(alice) {
		t.Error("rules cannot be written once the file is 0600 again")
	}

	// A file broken by hand is not rewritten (and accepts no key until
	// fixed): not even offered.
	broken := string(before) + "}"
	if err := os.WriteFile(path, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = a.Reload()
	if a.CanAllowFor(alice) {
		t.Error("rules can be written to a broken file")
	}
	if err := a.AllowFor("alice", "mcp__alpha__pid"); err == nil {
		t.Error("AllowFor wrote to a broken file")
	}
	if after, _ := os.ReadFile(path); string(after) != broken {
		t.Errorf("the broken file was rewritten:\n%s", after)
	}
}

// AddAllow creates the file, private, when there is none; an access
// token's caller can have rules written there before it exists.
func TestAddAllowCreatesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sb", gateway.AuthFileName)
	a := gateway.NewAuth(&gateway.AuthOptions{File: path})
	if p := (&gateway.Principal{Name: "dave", Issuer: "https://login.example.com"}); !a.CanAllowFor(p) {
		t.Error("no rules can be written for dave while the file is not there yet")
	}
	added, err := gateway.AddAllow(path, "group:eng", "mcp__github__get_me")
	if err != nil || !added {
		t.Fatalf("AddAllow: %v %v", added, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file: %v %v", fi, err)
	}
	f, _, err := gateway.ReadAuthFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp__github__get_me"}, f.Principals["group:eng"].Allow); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
