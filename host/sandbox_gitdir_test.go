package host

import (
	"path/filepath"
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
