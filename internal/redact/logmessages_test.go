package redact

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLogMessagesSurviveRedaction reads every slog call in this module's
// code. Its message must be a string literal (details belong in
// attributes, which are redacted one by one), and redaction must leave it
// unchanged: the handler scrubs every message as free text, so a message
// shaped like a secret ("oauth: could not …" reads as a key and its value)
// would reach the log garbled.
func TestLogMessagesSurviveRedaction(t *testing.T) {
	root := filepath.Join("..", "..")
	levels := map[string]int{ // method → index of the message argument
		"Debug": 0, "Info": 0, "Warn": 0, "Error": 0,
		"DebugContext": 1, "InfoContext": 1, "WarnContext": 1, "ErrorContext": 1,
		"Log": 2,
	}
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", ".git", ".peers":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			i, ok := levels[sel.Sel.Name]
			if !ok || len(call.Args) <= i || !isLogger(sel.X) {
				return true
			}
			seen++
			pos := fset.Position(call.Pos())
			lit, ok := call.Args[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: the log message is not a string literal; put the details in attributes", pos)
				return true
			}
			msg, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Errorf("%s: %v", pos, err)
				return true
			}
			if got := String(msg); got != msg {
				t.Errorf("%s: redaction garbles the log message %q into %q; reword it", pos, msg, got)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 30 {
		t.Fatalf("found only %d log calls: the scan is broken", seen)
	}
}

// isLogger reports whether x names a *slog.Logger as this module writes
// them: log, logger, Logger, or a field or variable ending in one (h.log,
// o.Logger, opts.Logger). The test has no type information; the names are
// the module's convention.
func isLogger(x ast.Expr) bool {
	var name string
	switch x := x.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		name = x.Sel.Name
	default:
		return false
	}
	l := strings.ToLower(name)
	return l == "log" || l == "logger" || strings.HasSuffix(l, "log") || strings.HasSuffix(l, "logger")
}
