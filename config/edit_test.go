package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"
)

// userFile is a hand-written user file: comments everywhere, a trailing
// comma, an unrelated key and an unusual key order.
const userFile = `// My Switchboard servers. Hands off, tools!
{
  /* keep me */
  "theme": "dark", // unrelated key
  "mcpServers": {
    // the time server
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
    "github": {
      "url": "https://api.githubcopilot.com/mcp/", // remote
      "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
    },
  },
  "zzz": [1, 2, 3,],
}
`

func writeTemp(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSetServer(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		objPath []string
		server  string
		def     string
		want    string
	}{
		{
			name:    "append to commented file",
			src:     userFile,
			objPath: []string{"mcpServers"},
			server:  "fs",
			def:     `{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]}`,
			want: `// My Switchboard servers. Hands off, tools!
{
  /* keep me */
  "theme": "dark", // unrelated key
  "mcpServers": {
    // the time server
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
    "github": {
      "url": "https://api.githubcopilot.com/mcp/", // remote
      "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
    },
    "fs": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    },
  },
  "zzz": [1, 2, 3,],
}
`,
		},
		{
			name:    "replace in place",
			src:     userFile,
			objPath: []string{"mcpServers"},
			server:  "time",
			def:     `{"command":"uvx","args":["mcp-server-time","--local-timezone=UTC"]}`,
			want: `// My Switchboard servers. Hands off, tools!
{
  /* keep me */
  "theme": "dark", // unrelated key
  "mcpServers": {
    // the time server
    "time": {
      "command": "uvx",
      "args": ["mcp-server-time", "--local-timezone=UTC"]
    },
    "github": {
      "url": "https://api.githubcopilot.com/mcp/", // remote
      "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
    },
  },
  "zzz": [1, 2, 3,],
}
`,
		},
		{
			name:    "local scope creates the parents",
			src:     userFile,
			objPath: []string{"projects", "/home/me/src/app", "mcpServers"},
			server:  "db",
			def:     `{"command":"db-mcp"}`,
			want: `// My Switchboard servers. Hands off, tools!
{
  /* keep me */
  "theme": "dark", // unrelated key
  "mcpServers": {
    // the time server
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
    "github": {
      "url": "https://api.githubcopilot.com/mcp/", // remote
      "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
    },
  },
  "zzz": [1, 2, 3,],
  "projects": {
    "/home/me/src/app": {
      "mcpServers": {
        "db": {
          "command": "db-mcp"
        }
      }
    }
  },
}
`,
		},
		{
			name:    "empty object without trailing comma",
			src:     "{\n\t\"mcpServers\": {}\n}\n",
			objPath: []string{"mcpServers"},
			server:  "a",
			def:     `{"url":"https://x.example/mcp"}`,
			want:    "{\n\t\"mcpServers\": {\n\t\t\"a\": {\n\t\t\t\"url\": \"https://x.example/mcp\"\n\t\t}\n\t}\n}\n",
		},
		{
			name:    "blank file",
			src:     "\n",
			objPath: []string{"mcpServers"},
			server:  "a",
			def:     `{"command":"a"}`,
			want:    "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\"\n    }\n  }\n}\n",
		},
		{
			name:    "name needing pointer escapes",
			src:     `{"mcpServers": {"a~1b": {"command": "x"}}}`,
			objPath: []string{"projects", "/w/a~b", "mcpServers"},
			server:  "a/b",
			def:     `{"command":"y"}`,
			want: `{"mcpServers": {"a~1b": {"command": "x"}},
  "projects": {
    "/w/a~b": {
      "mcpServers": {
        "a/b": {
          "command": "y"
        }
      }
    }
  }
}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "mcp.json", tt.src, 0o640)
			if err := SetServer(path, tt.objPath, tt.server, json.RawMessage(tt.def)); err != nil {
				t.Fatal(err)
			}
			got := readString(t, path)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if runtime.GOOS != "windows" {
				fi, _ := os.Stat(path)
				if fi.Mode().Perm() != 0o640 {
					t.Errorf("mode = %v, want the file's own 0640", fi.Mode().Perm())
				}
			}
			// The result is valid JSONC holding the new definition.
			var doc any
			if err := json.Unmarshal(standardize(t, got), &doc); err != nil {
				t.Fatalf("result does not parse: %v", err)
			}
			// Setting the same definition again changes nothing.
			if err := SetServer(path, tt.objPath, tt.server, json.RawMessage(tt.def)); err != nil {
				t.Fatal(err)
			}
			if again := readString(t, path); again != got {
				t.Errorf("second identical SetServer changed the file:\n%s", cmp.Diff(got, again))
			}
		})
	}
}

// TestSetServerPreservesOutsideEntry checks the byte-for-byte promise
// directly: the file before and after differ only inside one span.
func TestSetServerPreservesOutsideEntry(t *testing.T) {
	path := writeTemp(t, "mcp.json", userFile, 0o600)
	if err := SetServer(path, []string{"mcpServers"}, "new", json.RawMessage(`{"command":"n"}`)); err != nil {
		t.Fatal(err)
	}
	got := readString(t, path)
	prefix, suffix := commonPrefix(userFile, got), commonSuffix(userFile, got)
	suffix = min(suffix, len(userFile)-prefix, len(got)-prefix)
	{
		inserted := got[prefix : len(got)-suffix]
		removed := userFile[prefix : len(userFile)-suffix]
		if removed != "" {
			t.Errorf("bytes of the original were changed: %q", removed)
		}
		if !strings.Contains(inserted, `"new"`) {
			t.Errorf("inserted span %q does not hold the entry", inserted)
		}
	}
	for _, keep := range []string{"// My Switchboard servers. Hands off, tools!", "/* keep me */", "// unrelated key", "// the time server", "// remote", `"zzz": [1, 2, 3,],`} {
		if !strings.Contains(got, keep) {
			t.Errorf("lost %q", keep)
		}
	}

	found, err := RemoveServer(path, []string{"mcpServers"}, "new")
	if err != nil || !found {
		t.Fatalf("RemoveServer = %v, %v", found, err)
	}
	if got := readString(t, path); got != userFile {
		t.Errorf("add then remove is not the identity:\n%s", cmp.Diff(userFile, got))
	}
}

func TestLocalAddRemoveIsIdentity(t *testing.T) {
	path := writeTemp(t, "mcp.json", userFile, 0o600)
	objPath := []string{"projects", "/home/me/app", "mcpServers"}
	if err := SetServer(path, objPath, "a", json.RawMessage(`{"command":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if err := SetServer(path, []string{"projects", "/home/me/other", "mcpServers"}, "b", json.RawMessage(`{"command":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if err := SetServer(path, objPath, "c", json.RawMessage(`{"command":"c"}`)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "c"} {
		if found, err := RemoveServer(path, objPath, name); err != nil || !found {
			t.Fatalf("RemoveServer(%s) = %v, %v", name, found, err)
		}
	}
	// The other workspace keeps "projects" alive; the emptied one is gone.
	if got := readString(t, path); strings.Contains(got, "/home/me/app") || !strings.Contains(got, "/home/me/other") {
		t.Errorf("after removing a and c:\n%s", got)
	}
	if found, err := RemoveServer(path, []string{"projects", "/home/me/other", "mcpServers"}, "b"); err != nil || !found {
		t.Fatalf("RemoveServer(b) = %v, %v", found, err)
	}
	if diff := cmp.Diff(userFile, readString(t, path)); diff != "" {
		t.Errorf("add then remove is not the identity (-want +got):\n%s", diff)
	}
}

func TestRemoveServer(t *testing.T) {
	path := writeTemp(t, "mcp.json", userFile, 0o600)
	found, err := RemoveServer(path, []string{"mcpServers"}, "time")
	if err != nil || !found {
		t.Fatalf("RemoveServer = %v, %v", found, err)
	}
	want := strings.Replace(userFile, "    // the time server\n    \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]},\n", "", 1)
	if diff := cmp.Diff(want, readString(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// The last entry: the trailing comma style stays.
	if _, err := RemoveServer(path, []string{"mcpServers"}, "github"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); !strings.Contains(got, "\"mcpServers\": {\n  },\n  \"zzz\"") {
		t.Errorf("after removing everything:\n%s", got)
	}

	for _, tc := range []struct {
		name    string
		objPath []string
		server  string
	}{
		{"absent name", []string{"mcpServers"}, "nope"},
		{"absent object", []string{"projects", "/w", "mcpServers"}, "time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := readString(t, path)
			found, err := RemoveServer(path, tc.objPath, tc.server)
			if err != nil || found {
				t.Errorf("RemoveServer = %v, %v; want false, nil", found, err)
			}
			if readString(t, path) != before {
				t.Error("file changed")
			}
		})
	}

	found, err = RemoveServer(filepath.Join(t.TempDir(), "none.json"), []string{"mcpServers"}, "x")
	if err != nil || found {
		t.Errorf("missing file: RemoveServer = %v, %v", found, err)
	}
}

func TestEditBadFile(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		wantLine  int
		wantCol   int
		wantInMsg string
	}{
		{"missing comma", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {}\n  }\n}\n", 4, 5, "invalid JSONC"},
		{"unterminated comment", "{\n  /* oops\n}\n", 2, 3, "invalid JSONC"},
		{"not an object", "[1, 2]\n", 1, 1, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "mcp.json", tt.src, 0o600)
			err := SetServer(path, []string{"mcpServers"}, "c", json.RawMessage(`{"command":"c"}`))
			var d Diagnostic
			if !errors.As(err, &d) {
				t.Fatalf("err = %v (%T), want a Diagnostic", err, err)
			}
			if d.File != path || d.Line != tt.wantLine || d.Col != tt.wantCol {
				t.Errorf("position = %s, want %s:%d:%d", d.Position, path, tt.wantLine, tt.wantCol)
			}
			if !strings.Contains(d.Error(), tt.wantInMsg) || d.Fix == "" {
				t.Errorf("message %q lacks %q or a fix", d.Error(), tt.wantInMsg)
			}
			if got := readString(t, path); got != tt.src {
				t.Errorf("file was changed to %q", got)
			}
			if _, err := RemoveServer(path, []string{"mcpServers"}, "a"); !errors.As(err, &d) {
				t.Errorf("RemoveServer err = %v, want a Diagnostic", err)
			}
		})
	}

	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		err := SetServer(dir, []string{"mcpServers"}, "c", json.RawMessage(`{"command":"c"}`))
		var d Diagnostic
		if !errors.As(err, &d) || d.File != dir || !strings.Contains(d.Message, "directory") {
			t.Errorf("SetServer on a directory: err = %v, want a Diagnostic naming it", err)
		}
		if _, err := HasServer(dir, []string{"mcpServers"}, "c"); !errors.As(err, &d) {
			t.Errorf("HasServer on a directory: err = %v, want a Diagnostic", err)
		}
	})
	t.Run("definition not an object", func(t *testing.T) {
		path := writeTemp(t, "mcp.json", "{}", 0o600)
		if err := SetServer(path, []string{"mcpServers"}, "c", json.RawMessage(`["x"]`)); err == nil {
			t.Error("SetServer accepted an array definition")
		}
	})
	t.Run("parent not an object", func(t *testing.T) {
		path := writeTemp(t, "mcp.json", `{"mcpServers": []}`, 0o600)
		if err := SetServer(path, []string{"mcpServers"}, "c", json.RawMessage(`{"command":"c"}`)); err == nil {
			t.Error("SetServer wrote into an array")
		}
	})
}

func TestSetServerCreatesPrivateFile(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".switchboard", "mcp.json")
	if err := SetServer(path, []string{"mcpServers"}, "a", json.RawMessage(`{"command":"a"}`)); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\"\n    }\n  }\n}\n"
	if got := readString(t, path); got != want {
		t.Errorf("(-want +got):\n%s", cmp.Diff(want, got))
	}
	if runtime.GOOS == "windows" {
		return
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, want 0700", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left temporary files behind: %v", entries)
	}
}

func TestSetServerFollowsSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := SetServer(link, []string{"mcpServers"}, "a", json.RawMessage(`{"command":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if !strings.Contains(readString(t, target), `"a"`) {
		t.Error("the target was not edited")
	}

	// A link to a file not made yet (a dotfiles checkout links
	// ~/.switchboard/mcp.json before the file exists) is kept too: the
	// first edit creates the file it points to, through a relative link.
	dots := filepath.Join(dir, "dotfiles")
	if err := os.Mkdir(dots, 0o700); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join("dotfiles", "mcp.json"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := SetServer(dangling, []string{"mcpServers"}, "b", json.RawMessage(`{"command":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(dangling); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the dangling symlink was replaced by a file")
	}
	if b, err := os.ReadFile(filepath.Join(dots, "mcp.json")); err != nil || !strings.Contains(string(b), `"b"`) {
		t.Errorf("the link's target was not created: %v", err)
	}
}

func TestSetWorkspaceEnablement(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".switchboard", "workspace.json")
	steps := []struct {
		name    string
		enabled bool
		want    string
	}{
		{"time", true, "{\n  \"enabledMcpServers\": [\"time\"]\n}\n"},
		{"fs", true, "{\n  \"enabledMcpServers\": [\"time\", \"fs\"]\n}\n"},
		{"fs", true, "{\n  \"enabledMcpServers\": [\"time\", \"fs\"]\n}\n"},
		{"time", false, "{\n  \"enabledMcpServers\": [\"fs\"],\n  \"disabledMcpServers\": [\"time\"]\n}\n"},
		// The list time leaves empty goes.
		{"time", true, "{\n  \"enabledMcpServers\": [\"fs\", \"time\"]\n}\n"},
	}
	for i, s := range steps {
		if err := SetWorkspaceEnablement(root, s.name, s.enabled); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(s.want, readString(t, path)); diff != "" {
			t.Fatalf("step %d (%s, %v) (-want +got):\n%s", i, s.name, s.enabled, diff)
		}
	}
}

func TestSetWorkspaceEnablementKeepsLayout(t *testing.T) {
	src := `{
  // servers I want here
  "enabledMcpServers": [
    "a", // the a server
    "b",
  ],
  "disabledMcpServers": ["c", "d"], // noisy
  "other": true
}
`
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".switchboard"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ".switchboard", "workspace.json")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetWorkspaceEnablement(root, "c", true); err != nil {
		t.Fatal(err)
	}
	want := `{
  // servers I want here
  "enabledMcpServers": [
    "a", // the a server
    "b",
    "c",
  ],
  "disabledMcpServers": ["d"], // noisy
  "other": true
}
`
	if diff := cmp.Diff(want, readString(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestEnablementEmptiedListGoes: mcp disable then mcp enable of a name
// leaves no "disabledMcpServers": [] behind in the local entry; a list
// that a comment goes with stays, emptied.
func TestEnablementEmptiedListGoes(t *testing.T) {
	path := writeTemp(t, "mcp.json", "{\n  \"mcpServers\": {}\n}\n", 0o600)
	if err := SetLocalEnablement(path, "/w", "a", false); err != nil {
		t.Fatal(err)
	}
	if err := SetLocalEnablement(path, "/w", "a", true); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {},\n  \"projects\": {\n    \"/w\": {\n      \"enabledMcpServers\": [\"a\"]\n    }\n  }\n}\n"
	if diff := cmp.Diff(want, readString(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	src := "{\n  \"disabledMcpServers\": [\"a\"], // noisy\n  \"other\": true\n}\n"
	root := t.TempDir()
	ws := WorkspaceFile(root)
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetWorkspaceEnablement(root, "a", true); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, ws); !strings.Contains(got, "\"disabledMcpServers\": [], // noisy") {
		t.Errorf("the list its comment goes with went:\n%s", got)
	}
}

// TestToolsHiddenUndone: hiding a tool and showing it again gives the
// file back as it was, in a workspace's entry and at the top level; a
// filter with another tool, or an "enabledTools" list, stays.
func TestToolsHiddenUndone(t *testing.T) {
	src := "{\n  // mine\n  \"mcpServers\": {\"s\": {\"command\": \"x\"}}\n}\n"
	for _, objPath := range [][]string{{"projects", "/w"}, nil} {
		path := writeTemp(t, "mcp.json", src, 0o600)
		if err := SetToolsHidden(path, objPath, "s", []string{"t"}, true); err != nil {
			t.Fatal(err)
		}
		if got := readString(t, path); !strings.Contains(got, `"disabledTools": ["t"]`) {
			t.Fatalf("%v: not hidden:\n%s", objPath, got)
		}
		if err := SetToolsHidden(path, objPath, "s", []string{"t"}, false); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(src, readString(t, path)); diff != "" {
			t.Errorf("%v: hidden and shown again (-want +got):\n%s", objPath, diff)
		}
	}

	path := writeTemp(t, "mcp.json", `{"toolFilters": {"s": {"disabledTools": ["t", "u"]}, "r": {"enabledTools": ["a"], "disabledTools": ["b"]}}}`, 0o600)
	if err := SetToolsHidden(path, nil, "s", []string{"t"}, false); err != nil {
		t.Fatal(err)
	}
	if err := SetToolsHidden(path, nil, "r", []string{"b"}, false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"toolFilters": {"s": {"disabledTools": ["u"]}, "r": {"enabledTools": ["a", "b"]}}}`+"\n", readString(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestIndentJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`{"a":[],"b":{}}`, "{\n>  \"a\": [],\n>  \"b\": {}\n>}"},
		{`{"url":"https://x/?a=1&b=<2>","n":1.50}`, "{\n>  \"url\": \"https://x/?a=1&b=<2>\",\n>  \"n\": 1.50\n>}"},
		{`[{"a":1},2]`, "[\n>  {\n>    \"a\": 1\n>  },\n>  2\n>]"},
		{`{"z":1,"a":2}`, "{\n>  \"z\": 1,\n>  \"a\": 2\n>}"},
	} {
		if got := string(indentJSON([]byte(tc.in), ">", "  ")); got != tc.want {
			t.Errorf("indentJSON(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRemoveLastKeepsClosingIndent(t *testing.T) {
	src := "{\n  \"mcpServers\": {\n    \"a\": {}, // first\n    \"b\": {},   // last\n  },\n}\n"
	path := writeTemp(t, "mcp.json", src, 0o600)
	if _, err := RemoveServer(path, []string{"mcpServers"}, "b"); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"a\": {}, // first\n  },\n}\n"
	if diff := cmp.Diff(want, readString(t, path)); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}

	root := t.TempDir()
	ws := WorkspaceFile(root)
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		t.Fatal(err)
	}
	src = "{\n  \"enabledMcpServers\": [\n    \"x\", // one\n    \"y\",   // two\n  ],\n}\n"
	if err := os.WriteFile(ws, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetWorkspaceEnablement(root, "y", false); err != nil {
		t.Fatal(err)
	}
	want = "{\n  \"enabledMcpServers\": [\n    \"x\", // one\n  ],\n  \"disabledMcpServers\": [\"y\"],\n}\n"
	if diff := cmp.Diff(want, readString(t, ws)); diff != "" {
		t.Errorf("array (-want +got):\n%s", diff)
	}
}

func TestEditKeepsCRLF(t *testing.T) {
	crlf := strings.ReplaceAll(userFile, "\n", "\r\n")
	path := writeTemp(t, "mcp.json", crlf, 0o600)
	if err := SetServer(path, []string{"projects", "/w", "mcpServers"}, "a", json.RawMessage(`{"command":"a","args":["x"]}`)); err != nil {
		t.Fatal(err)
	}
	got := readString(t, path)
	if strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Errorf("mixed line ends:\n%q", got)
	}
	if _, err := RemoveServer(path, []string{"projects", "/w", "mcpServers"}, "a"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != crlf {
		t.Errorf("add then remove changed a CRLF file:\n%s", cmp.Diff(crlf, got))
	}
}

func TestPointer(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"mcpServers", "a"}, "/mcpServers/a"},
		{[]string{"projects", "/home/x", "mcpServers"}, "/projects/~1home~1x/mcpServers"},
		{[]string{"a~b/c"}, "/a~0b~1c"},
	} {
		if got := pointer(tc.in); got != tc.want {
			t.Errorf("pointer(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func standardize(t *testing.T, s string) []byte {
	t.Helper()
	v, err := hujson.Standardize([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

func TestHasServer(t *testing.T) {
	path := writeTemp(t, "mcp.json", userFile, 0o600)
	for _, tc := range []struct {
		objPath []string
		name    string
		want    bool
	}{
		{[]string{"mcpServers"}, "time", true},
		{[]string{"mcpServers"}, "nope", false},
		{[]string{"projects", "/w", "mcpServers"}, "time", false},
	} {
		got, err := HasServer(path, tc.objPath, tc.name)
		if err != nil || got != tc.want {
			t.Errorf("HasServer(%q, %q) = %v, %v; want %v", tc.objPath, tc.name, got, err, tc.want)
		}
	}
	if got, err := HasServer(filepath.Join(t.TempDir(), "none"), []string{"mcpServers"}, "a"); got || err != nil {
		t.Errorf("missing file: %v, %v", got, err)
	}
	bad := writeTemp(t, "bad.json", "{,}", 0o600)
	var d Diagnostic
	if _, err := HasServer(bad, []string{"mcpServers"}, "a"); !errors.As(err, &d) || d.Line != 1 {
		t.Errorf("bad file: err = %v", err)
	}
}

// FuzzEditRoundTrip: whatever JSONC object a user file holds, adding a
// server leaves a file that parses and holds it, removing it again leaves a
// file that parses, and the other top-level keys keep their values.
func FuzzEditRoundTrip(f *testing.F) {
	for _, seed := range []string{
		userFile,
		"{}",
		"{\n}\n",
		`{"mcpServers": {}}`,
		"{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"a\"}, // c\n\t},\n}",
		"// only a comment\n{ /* x */ }",
		`{"projects": {"/w": {"mcpServers": {"b": {"url": "https://b"}}}}, "x": [1, {"y": null}]}`,
	} {
		f.Add([]byte(seed), "fuzz-new", true)
		f.Add([]byte(seed), "a/b~c", false)
	}
	f.Fuzz(func(t *testing.T, src []byte, name string, local bool) {
		v, err := hujson.Parse(src)
		if err != nil {
			return
		}
		if _, ok := v.Value.(*hujson.Object); !ok {
			return
		}
		objPath := []string{"mcpServers"}
		if local {
			objPath = []string{"projects", "/work space", "mcpServers"}
		}
		path := filepath.Join(t.TempDir(), "mcp.json")
		if err := os.WriteFile(path, src, 0o600); err != nil {
			t.Fatal(err)
		}
		before := topLevel(t, src)
		if has, err := HasServer(path, objPath, name); err != nil || has {
			return // the name is taken, or a parent is not an object
		}
		if err := SetServer(path, objPath, name, json.RawMessage(`{"command":"x","args":["<&>"]}`)); err != nil {
			return // e.g. a parent that is not an object: reported, not written
		}
		added, _ := os.ReadFile(path)
		if _, err := hujson.Parse(added); err != nil {
			t.Fatalf("after SetServer the file does not parse: %v\n%s", err, added)
		}
		if has, err := HasServer(path, objPath, name); err != nil || !has {
			t.Fatalf("after SetServer HasServer = %v, %v\n%s", has, err, added)
		}
		if found, err := RemoveServer(path, objPath, name); err != nil || !found {
			t.Fatalf("RemoveServer = %v, %v", found, err)
		}
		removed, _ := os.ReadFile(path)
		if _, err := hujson.Parse(removed); err != nil {
			t.Fatalf("after RemoveServer the file does not parse: %v\n%s", err, removed)
		}
		after := topLevel(t, removed)
		for k, want := range before {
			if k == objPath[0] {
				continue
			}
			if got := after[k]; got != want {
				t.Fatalf("top-level %q changed: %s -> %s", k, want, got)
			}
		}
	})
}

// topLevel returns the top-level members of a JSONC object as compact
// standard JSON.
func topLevel(t *testing.T, src []byte) map[string]string {
	t.Helper()
	std, err := hujson.Standardize(append([]byte(nil), src...))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(std, &m); err != nil {
		return nil // duplicate keys and the like: nothing to compare
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			t.Fatal(err)
		}
		out[k] = b.String()
	}
	return out
}
