package host

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// protectedNote names the kept path an error's text names with a
// read-only file system (a write) or a busy resource (a rename onto the
// mount point, as a write through a temporary file ends) — never a path
// that merely starts the same (.github is not .git), nor a result that
// is no such error.
func TestProtectedNote(t *testing.T) {
	s := &server{name: "fs"}
	s.protected.Store(&[]string{"/ws/.git", "/ws/.mcp.json"})
	for text, want := range map[string]string{
		"EROFS: read-only file system, open '/ws/.git/index.lock'":                        "/ws/.git",
		"EBUSY: resource busy or locked, rename '/ws/.mcp.json.1.tmp' -> '/ws/.mcp.json'": "/ws/.mcp.json",
		"[Errno 30] Read-only file system: '/ws/.git'":                                    "/ws/.git",
		"EROFS: read-only file system, open '/ws/.github/workflows/ci.yml'":               "",
		"ENOENT: no such file or directory, open '/ws/.git/x'":                            "",
	} {
		res := s.protectedNote(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}})
		got := ""
		if len(res.Content) == 2 {
			got = res.Content[1].(*mcp.TextContent).Text
		}
		switch {
		case want == "" && got != "":
			t.Errorf("%q: noted %q", text, got)
		case want != "" && !strings.Contains(got, "keeps "+want+" read-only"):
			t.Errorf("%q: %q, want it to name %s", text, got, want)
		}
	}
	if res := (&server{name: "free"}).protectedNote(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "EROFS /ws/.git"}}}); len(res.Content) != 1 {
		t.Errorf("an unconfined server's error got a note")
	}
}
