package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// testServers is the package of the servers that crash, hang and flood on
// purpose; only the test-only packages below may link it.
const testServers = "internal/testserver"

// testOnly are the packages of this module that are never shipped nor
// imported by an embedder, and so may import testServers: the package
// itself (with testhttp and testoauth) and the bench program, which doubles
// as the test servers it measures.
var testOnly = []string{testServers + "/...", "bench"}

// TestProductionLinksNoTestServers: no package of the module outside
// testOnly depends on internal/testserver, through any chain of non-test
// imports. That covers the switchboard binary (./cmd/switchboard) and every
// package an embedder can import.
func TestProductionLinksNoTestServers(t *testing.T) {
	t.Parallel()
	problems, roots, err := checkTestOnly(".", module, []string{module + "/..."}, testOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	// Not vacuous: the binary and a public package were among those checked.
	for _, want := range []string{"cmd/switchboard", "host", "gateway"} {
		if !slices.Contains(roots, want) {
			t.Errorf("%s was not checked; checked: %s", want, strings.Join(roots, " "))
		}
	}
}

// The check reports, with its chain, a program that links the test servers
// (testdata/linked, which is outside testOnly).
func TestCheckTestOnlyReportsLinkedProgram(t *testing.T) {
	t.Parallel()
	fixture := module + "/internal/archtest/testdata/linked"
	problems, _, err := checkTestOnly(".", module, []string{fixture}, testOnly)
	if err != nil {
		t.Fatal(err)
	}
	want := "internal/archtest/testdata/linked depends on internal/testserver, which only tests may link: " +
		"internal/archtest/testdata/linked -> internal/testserver"
	if !slices.Contains(problems, want) {
		t.Errorf("no problem %q in:\n%s", want, strings.Join(problems, "\n"))
	}
}

// TestBinaryHoldsNoTestServers builds the switchboard binary and looks in
// it for what linking internal/testserver leaves behind: its package path
// (in the symbol table, stripped or not), its argument and the fault
// servers' names. The import graph says the same; this is the check on the
// artefact users run.
func TestBinaryHoldsNoTestServers(t *testing.T) {
	t.Parallel()
	bin := build(t, "./cmd/switchboard")
	found, err := testServerTraces(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("the switchboard binary holds %q: it links internal/testserver (see TestProductionLinksNoTestServers)", found)
	}
}

// The binary scan finds the traces in a program that links the servers.
func TestTestServerTracesFindsLinkedProgram(t *testing.T) {
	t.Parallel()
	bin := build(t, "./internal/archtest/testdata/linked")
	found, err := testServerTraces(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{module + "/" + testServers, testserver.Arg, "crash-mid-call"} {
		if !slices.Contains(found, want) {
			t.Errorf("%q not found in a program that links internal/testserver; found %q", want, found)
		}
	}
}

// build compiles the package at pkg (relative to the module root), with
// go build's flags, into a temporary directory and returns the binary's
// path.
func build(t *testing.T, pkg string, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bin")
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, flags...), pkg)...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out
}

// testServerTraces returns the strings of internal/testserver that the
// binary at path holds: its import path, [testserver.Arg], and the name of
// every server that has a '-' in it (the others — echo, flap, garbage… —
// are words any program may hold).
func testServerTraces(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	needles := []string{module + "/" + testServers, testserver.Arg}
	for _, n := range testserver.Names() {
		if strings.Contains(n, "-") {
			needles = append(needles, n)
		}
	}
	if !slices.Contains(needles, "crash-mid-call") {
		return nil, fmt.Errorf("testserver.Names() no longer holds crash-mid-call: %q", needles)
	}
	var found []string
	for _, n := range needles {
		if bytes.Contains(b, []byte(n)) {
			found = append(found, n)
		}
	}
	return found, nil
}

// checkTestOnly lists patterns (run in dir, inside module mod) with their
// dependencies and returns one problem per package outside testOnly that
// depends on a package inside it, with the chain; and the packages it
// checked (the ones patterns matched, without mod).
func checkTestOnly(dir, mod string, patterns, testOnly []string) (problems, roots []string, err error) {
	short := func(p string) string { return strings.TrimPrefix(p, mod+"/") }
	isTestOnly := func(p string) bool {
		return slices.ContainsFunc(testOnly, func(pat string) bool { return matches(mod+"/"+pat, p) })
	}
	args := append([]string{"list", "-e", "-deps", "-json"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly") // as check: downloads allowed, go.mod never edited
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	pkgs := map[string]*listed{}
	var order []string
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			listed
			DepOnly bool
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("reading go list output: %w", err)
		}
		pkgs[p.ImportPath] = &p.listed
		if !p.DepOnly {
			order = append(order, p.ImportPath)
		}
	}
	for _, root := range order {
		p := pkgs[root]
		if p.Error != nil {
			// Fail closed: a package that does not load has unknown imports.
			return nil, nil, fmt.Errorf("loading %s: %s", root, p.Error.Err)
		}
		roots = append(roots, short(root))
		if isTestOnly(root) {
			continue
		}
		var chain func(string) []string
		for _, dep := range p.Deps {
			if !isTestOnly(dep) {
				continue
			}
			if chain == nil {
				chain = chains(pkgs, root)
			}
			parts := chain(dep)
			// Name the first test-only package on the chain: that is the import to remove.
			first := slices.IndexFunc(parts, isTestOnly)
			if first != len(parts)-1 {
				continue // reported through that first package
			}
			for i := range parts {
				parts[i] = short(parts[i])
			}
			problems = append(problems, fmt.Sprintf("%s depends on %s, which only tests may link: %s",
				short(root), short(dep), strings.Join(parts, " -> ")))
		}
	}
	return problems, roots, nil
}
