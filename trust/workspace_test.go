package trust

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

// symlinkOrSkip makes link point at target, or skips where the system
// does not let this user make symlinks (Windows without the privilege).
func symlinkOrSkip(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make symlinks here: %v", err)
	}
}

func mkdir(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// realDir is t.TempDir with its own links resolved (macOS: /var is a link
// to /private/var), so that tests compare keys with real paths.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// storeKeys returns the workspace keys trust.json holds, sorted.
func storeKeys(t *testing.T, home string) []string {
	t.Helper()
	var d storeFile
	b, err := os.ReadFile(filepath.Join(home, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range d.Workspaces {
		out = append(out, k)
	}
	return sortedSet(setOf(out))
}

func setOf(l []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range l {
		m[s] = true
	}
	return m
}

func TestWorkspaceKey(t *testing.T) {
	root := realDir(t)
	proj := mkdir(t, filepath.Join(root, "proj"))
	other := mkdir(t, filepath.Join(root, "other"))
	symlinkOrSkip(t, proj, filepath.Join(root, "link"))
	symlinkOrSkip(t, filepath.Join(root, "link"), filepath.Join(root, "link2")) // a link to a link
	symlinkOrSkip(t, root, filepath.Join(root, "up"))                           // a link in the middle of the path
	symlinkOrSkip(t, filepath.Join(root, "nowhere"), filepath.Join(root, "dangling"))
	for _, tc := range []struct{ in, want string }{
		{proj, proj},
		{proj + string(filepath.Separator), proj},
		{filepath.Join(root, "link"), proj},
		{filepath.Join(root, "link2"), proj},
		{filepath.Join(root, "up", "proj"), proj},
		{filepath.Join(root, "up", "link", "..", "other"), other}, // Clean first, as a shell's cd does
		{other, other},
		// Resolution fails: the cleaned path itself.
		{filepath.Join(root, "missing", "..", "missing2"), filepath.Join(root, "missing2")},
		{filepath.Join(root, "dangling"), filepath.Join(root, "dangling")},
		// Not absolute: no key, so nothing is ever approved for it.
		{"proj", ""},
		{"", ""},
	} {
		if got := WorkspaceKey(tc.in); got != tc.want {
			t.Errorf("WorkspaceKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// A key is its own key: looking it up again finds the same entry.
		if tc.want != "" && WorkspaceKey(tc.want) != tc.want {
			t.Errorf("WorkspaceKey(%q) = %q: a key is not its own key", tc.want, WorkspaceKey(tc.want))
		}
	}
	if WorkspaceKey(proj) == WorkspaceKey(other) {
		t.Error("two directories share a key")
	}
}

// TestApprovalFollowsTheDirectory: an approval given through a symlinked
// path holds for the directory whatever path reaches it, and not for
// another directory the link is later pointed at.
func TestApprovalFollowsTheDirectory(t *testing.T) {
	root := realDir(t)
	home := filepath.Join(root, "sb")
	proj := mkdir(t, filepath.Join(root, "proj"))
	evil := mkdir(t, filepath.Join(root, "evil"))
	link := filepath.Join(root, "link")
	symlinkOrSkip(t, proj, link)
	symlinkOrSkip(t, link, filepath.Join(root, "link2"))
	rs := repoServer("fs", config.Server{Command: "node", Args: []string{"./server.js"}})

	s := Open(home)
	if _, err := s.Approve(link, rs, t0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{proj}, storeKeys(t, home)); diff != "" {
		t.Errorf("filed under (-want +got):\n%s", diff)
	}
	for _, ws := range []string{proj, link, filepath.Join(root, "link2"), proj + "/."} {
		if v := Open(home).Check(rs, ws); v.Status != Approved {
			t.Errorf("through %s: %v, want approved", ws, v.Status)
		}
	}
	// Same definition, another directory (whose ./server.js is other code).
	if v := s.Check(rs, evil); v.Status != NeedsApproval {
		t.Errorf("another directory: %v", v.Status)
	}
	// The link now leads there: the approval stays with proj.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	symlinkOrSkip(t, evil, link)
	if v := s.Check(rs, link); v.Status != NeedsApproval {
		t.Errorf("repointed link: %v, want needs-approval", v.Status)
	}
	if v := s.Check(rs, proj); v.Status != Approved {
		t.Errorf("proj after the link moved: %v", v.Status)
	}
	// Revoking through any path revokes the directory's approval.
	symlinkOrSkip(t, proj, filepath.Join(root, "link3"))
	if found, err := s.Revoke(filepath.Join(root, "link3"), "fs"); err != nil || !found {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if v := Open(home).Check(rs, proj); v.Status != NeedsApproval {
		t.Errorf("after revoke: %v", v.Status)
	}
}

// legacyStore writes trust.json as a version that did not resolve links
// did: the approval of rs filed under the path exactly as given.
func legacyStore(t *testing.T, home, path string, rs *config.ResolvedServer) {
	t.Helper()
	tmp := t.TempDir()
	if _, err := Open(tmp).Approve("/placeholder", rs, t0); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(tmp, FileName))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	ws := d["workspaces"].(map[string]any)
	ws[path] = ws["/placeholder"]
	delete(ws, "/placeholder")
	b, _ = json.Marshal(d)
	mkdir(t, home)
	if err := os.WriteFile(filepath.Join(home, FileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLegacyUnresolvedEntries: an approval an older version filed under a
// symlinked path is honored for exactly that path (what that version
// granted), not through other paths; approving again moves it to the
// key; revoking through any path to the directory removes it.
func TestLegacyUnresolvedEntries(t *testing.T) {
	root := realDir(t)
	proj := mkdir(t, filepath.Join(root, "proj"))
	link := filepath.Join(root, "link")
	symlinkOrSkip(t, proj, link)
	rs := repoServer("fs", config.Server{Command: "fs-mcp"})

	t.Run("honored for the same path only", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "sb")
		legacyStore(t, home, link, rs)
		s := Open(home)
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if v := s.Check(rs, link); v.Status != Approved {
			t.Errorf("through the legacy path: %v, want approved", v.Status)
		}
		if v := s.Check(rs, proj); v.Status != NeedsApproval {
			t.Errorf("through the real path: %v, want needs-approval", v.Status)
		}
		if got := s.Approved(link); !cmp.Equal(got, []string{"fs"}) {
			t.Errorf("Approved(link) = %v", got)
		}
		// A changed definition is stale against the legacy approval.
		changed := repoServer("fs", config.Server{Command: "evil-mcp"})
		if v := s.Check(changed, link); v.Status != Stale || !cmp.Equal(v.Changed, []string{"command"}) {
			t.Errorf("changed: %v %v", v.Status, v.Changed)
		}
	})
	t.Run("approving again migrates it", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "sb")
		legacyStore(t, home, link, rs)
		if _, err := Open(home).Approve(link, rs, t0); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{proj}, storeKeys(t, home)); diff != "" {
			t.Errorf("keys after approving again (-want +got):\n%s", diff)
		}
		for _, ws := range []string{link, proj} {
			if v := Open(home).Check(rs, ws); v.Status != Approved {
				t.Errorf("through %s: %v", ws, v.Status)
			}
		}
	})
	t.Run("revoke through the real path removes it", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "sb")
		legacyStore(t, home, link, rs)
		s := Open(home)
		if found, err := s.Revoke(proj, "fs"); err != nil || !found {
			t.Fatalf("revoke: %v %v", found, err)
		}
		if v := s.Check(rs, link); v.Status != NeedsApproval {
			t.Errorf("legacy approval survived revoke: %v", v.Status)
		}
	})
	t.Run("reset through the real path removes it", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "sb")
		legacyStore(t, home, link, rs)
		s := Open(home)
		if _, err := s.Approve(proj, repoServer("git", config.Server{Command: "git-mcp"}), t0); err != nil {
			t.Fatal(err)
		}
		names, err := s.Reset(proj)
		if err != nil || !cmp.Equal(names, []string{"fs", "git"}) {
			t.Fatalf("reset: %v %v", names, err)
		}
		if v := s.Check(rs, link); v.Status != NeedsApproval {
			t.Errorf("legacy approval survived reset: %v", v.Status)
		}
	})
	t.Run("a legacy entry of a link now elsewhere is not this directory's", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "sb")
		elsewhere := filepath.Join(root, "moved")
		symlinkOrSkip(t, mkdir(t, filepath.Join(root, "b")), elsewhere)
		legacyStore(t, home, elsewhere, rs)
		if found, _ := Open(home).Revoke(proj, "fs"); found {
			t.Error("revoking proj removed the approval of another directory")
		}
		if v := Open(home).Check(rs, proj); v.Status != NeedsApproval {
			t.Errorf("proj: %v", v.Status)
		}
	})
}
