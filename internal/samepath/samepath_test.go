package samepath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWithinByIdentity(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(repo, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(repo, "sub", "settings.json")
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A link outside the repository that points at a file inside it.
	link := filepath.Join(outside, "settings.json")
	if err := os.Symlink(file, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	// Another spelling of the repository folder.
	alias := filepath.Join(root, "alias")
	if err := os.Symlink(repo, alias); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"file in repo", FileWithin(file, repo), true},
		{"link to a file in repo", FileWithin(link, repo), true},
		{"link, not followed", Within(filepath.Dir(link), repo), false},
		{"repo by another spelling", FileWithin(file, alias), true},
		{"folder itself", Within(repo, repo), true},
		{"outside", Within(outside, repo), false},
		{"missing dir", Within(repo, filepath.Join(root, "nope")), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
