package trust

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure keeps trust a pure core (STYLE.md): it never spawns, dials or
// reads the clock, and it never imports the runtime that uses it.
func TestPure(t *testing.T) {
	forbidden := []string{"os/exec", "net", "syscall",
		"github.com/switchboard-mcp/switchboard/host", "github.com/switchboard-mcp/switchboard/gateway",
		"github.com/switchboard-mcp/switchboard/internal/cli"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
		src, _ := os.ReadFile(name)
		if strings.Contains(string(src), "time.Now") {
			t.Errorf("%s reads the clock: callers pass the time in", name)
		}
	}
}
