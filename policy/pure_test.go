package policy

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure keeps the package a pure core (STYLE.md): it reads settings
// files in Load and nothing else; it never spawns, dials, reads the clock,
// or depends on the runtime packages.
func TestPure(t *testing.T) {
	forbidden := []string{"os/exec", "net", "time", "syscall",
		"github.com/switchboard-mcp/switchboard/host", "github.com/switchboard-mcp/switchboard/gateway",
		"github.com/switchboard-mcp/switchboard/internal/cli", "github.com/modelcontextprotocol/go-sdk"}
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
					t.Errorf("%s imports %s: policy decides from data only", name, path)
				}
			}
			if path == "os" && name != "load.go" {
				t.Errorf("%s imports os: only Load reads files", name)
			}
		}
	}
}
