package toolsurface

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure keeps toolsurface a pure core: it may import the standard
// library and the MCP SDK, never another package of this module (host,
// gateway, config, internal/...), which would pull I/O into it or make an
// import cycle with the runtime that uses it.
func TestPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/switchboard-mcp/switchboard/") {
				t.Errorf("%s imports %s; toolsurface must stay pure", name, path)
			}
		}
	}
}
