package cli

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestRepoFileNestedDeep: a repository commits a .mcp.json,
// .vscode/mcp.json or .cursor/mcp.json nested millions deep. Every command
// a user runs in the clone must refuse it with its position, not end with a
// stack overflow (which, with the default stack, comes after a minute and
// a gigabyte).
func TestRepoFileNestedDeep(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	w := newRTWorld(t)
	deep := `{"mcpServers": {"a": ` + strings.Repeat("[", 3_000_000)
	// Each file is written before the commands that read it, so that a
	// command cannot pass by reporting another file's nesting.
	for _, step := range []struct {
		file string
		runs [][]string
	}{
		{".vscode/mcp.json", [][]string{{"mcp", "import", "--from", "vscode"}}},
		{".cursor/mcp.json", [][]string{
			{"mcp", "import", "--from", "cursor"},
			{"mcp", "install-gateway", "--client", "cursor", "--scope", "project"},
			// Into the user file, the repository's is read for duplicates.
			{"mcp", "install-gateway", "--client", "cursor", "--scope", "user"},
		}},
		{".mcp.json", [][]string{
			{"doctor"},
			{"mcp", "add", "--scope", "project", "b", "--", "echo"},
		}},
	} {
		path := filepath.Join(w.proj, step.file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(deep), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range step.runs {
			out, stderr, _ := w.run(false, args...)
			if !strings.Contains(out+stderr, "nested more than 500 levels deep") {
				t.Errorf("%s: the nesting is not reported\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out, stderr)
			}
		}
	}
}
