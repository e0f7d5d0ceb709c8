package host

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A .git pointer file names its directory on its first line; whatever a
// repository writes there, the result is "" or a clean absolute path (a
// relative one below the file's folder), never a panic.
func FuzzParseGitdir(f *testing.F) {
	for _, s := range []string{"gitdir: ../.git/modules/sub\n", "gitdir:/abs/wt", "gitdir: \n", "nothing", "gitdir: a\x00b", "  gitdir:  spaced dir  \r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		got := parseGitdir(content, "/ws/sub")
		if got != "" && (!filepath.IsAbs(got) || filepath.Clean(got) != got) {
			t.Fatalf("%q: %q is not a clean absolute path", content, got)
		}
	})
}

func TestParseGitdir(t *testing.T) {
	for in, want := range map[string]string{
		"gitdir: ../.git/modules/sub\n":  "/ws/.git/modules/sub",
		"gitdir: /main/.git/worktrees/x": "/main/.git/worktrees/x",
		"gitdir:\n":                      "",
		"ref: refs/heads/main\n":         "",
	} {
		if got := parseGitdir(in, "/ws/sub"); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// .gitmodules names each submodule's path; whatever a repository writes
// there, each is relative, clean and within it, never a panic.
func FuzzParseGitmodules(f *testing.F) {
	for _, s := range []string{"[submodule \"x\"]\n\tpath = lib/x\n", "path=../../etc", "path = /abs\npath = \"q d\"\n", "path = .\npath=a/../..", "path = a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		for _, p := range parseGitmodules(content) {
			if p == "" || filepath.IsAbs(p) || filepath.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || p == "." {
				t.Fatalf("%q: %q", content, p)
			}
		}
	})
}

func TestParseGitmodules(t *testing.T) {
	got := parseGitmodules("[submodule \"a\"]\n\tpath = lib/a\n\turl = x\n[submodule \"b\"]\n  path=\"vendor/b\"\npath = ../out\npath = /etc\npath = lib/a\n")
	if want := []string{"lib/a", "vendor/b"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}
