package archtest

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The product spec the code was drawn from is not in the repository, so a
// comment or doc that cites one of its sections (the section sign, U+00A7,
// and a number) points a reader nowhere. Comments say the rule itself, or
// point at a package doc or a section of docs/. A section of an RFC is a
// public document and may be cited: "RFC 8414", the sign, "3.3". This file
// writes the sign as \u00a7 so that it passes its own check.

// rfcSection is a section sign that belongs to an RFC reference.
var rfcSection = regexp.MustCompile(`RFC \d+ \x{a7}\d+(\.\d+)*`)

// strayRef reports whether line holds a section sign that is not part of
// an RFC reference.
func strayRef(line string) bool {
	return strings.Contains(rfcSection.ReplaceAllString(line, ""), "\u00a7")
}

// specRefFile reports whether rel (slash-separated, relative to the module
// root) is a file the rule covers: a Go file outside any testdata folder,
// README.md, or a Markdown file directly in docs/.
func specRefFile(rel string) bool {
	parts := strings.Split(rel, "/")
	if slices.Contains(parts[:len(parts)-1], "testdata") {
		return false
	}
	switch {
	case strings.HasSuffix(rel, ".go"):
		return true
	case rel == "README.md":
		return true
	case len(parts) == 2 && parts[0] == "docs" && strings.HasSuffix(rel, ".md"):
		return true
	}
	return false
}

// specRefs walks the module at root and returns one "file:line: text"
// problem per line of a covered file that holds a stray section sign, and
// the covered files it read.
func specRefs(root string) (problems, read []string, err error) {
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !specRefFile(rel) {
			return nil
		}
		read = append(read, rel)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if line := sc.Text(); strayRef(line) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s", rel, n, strings.TrimSpace(line)))
			}
		}
		return sc.Err()
	})
	return problems, read, err
}

// TestNoSpecSectionRefs: no Go file, README.md or docs/*.md cites a section
// of the spec that is not in the repository.
func TestNoSpecSectionRefs(t *testing.T) {
	t.Parallel()
	problems, read, err := specRefs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s\n\tcites a section the repository does not hold: say the rule, or point at a package doc or docs/<file>.md and its section (\"RFC N \u00a7x\" is fine)", p)
	}
	// Not vacuous: the files that held such references were read.
	for _, want := range []string{"README.md", "docs/security.md", "docs/gateway.md", "host/host.go", "policy/doc.go", "internal/cli/errors.go"} {
		if !slices.Contains(read, want) {
			t.Errorf("%s was not read; read %d files", want, len(read))
		}
	}
}

func TestStrayRef(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		want bool
	}{
		{"// Exit codes (SPEC \u00a76).", true},
		{"## Launch trust (SPEC \u00a72)", true},
		{"// the states of \u00a74: disabled, paused", true},
		{"(\u00a7 Live reload)", true},
		{"// SPEC \u00a710.4 sandbox", true},
		{"// the hash of \u00a75, as RFC 8414 \u00a73.3 says", true},
		{"RFC 8414 \u00a73.3 refuses that", false},
		{"// (RFC 7518 \u00a76.2.2 and RFC 7518 \u00a76.3.2):", false},
		{"// RFC 6750 \u00a73, RFC 9728 \u00a75.1: it names", false},
		{"// a line without a section sign", false},
		{"RFC \u00a73", true},
	} {
		if got := strayRef(c.line); got != c.want {
			t.Errorf("strayRef(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

// The walk reports a reference planted in a copy of real files, and only
// in the files the rule covers.
func TestSpecRefsReportsPlant(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	copyFile := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	var files []string
	for _, rel := range []string{"README.md", "docs/security.md", "host/host.go"} {
		files = append(files, copyFile(rel))
	}
	// Files outside the rule hold the sign and are not reported.
	for rel, text := range map[string]string{
		"host/testdata/x.go":   "package x // (SPEC \u00a74)\n",
		"docs/sub/notes.md":    "see \u00a73\n",
		"notes.md":             "see \u00a73\n",
		".hidden/y.go":         "package y // \u00a73\n",
		"node_modules/z/z.go":  "package z // \u00a73\n",
		"oauth/rfc_comment.go": "package oauth\n\n// by RFC 8414 \u00a73.3\n",
	} {
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if problems, _, err := specRefs(root); err != nil || len(problems) > 0 {
		t.Fatalf("before the plant: %q, %v", problems, err)
	}

	lines := map[string]int{}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		plant := []string{"## Launch trust (SPEC \u00a72)\n", "See SPEC \u00a73.\n", "// Defaults of SPEC \u00a74.\n"}[i]
		if err := os.WriteFile(f, append(b, plant...), 0o644); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		lines[filepath.ToSlash(rel)] = strings.Count(string(b), "\n") + 1
	}
	problems, _, err := specRefs(root)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for rel, n := range lines {
		text := map[string]string{"README.md": "## Launch trust (SPEC \u00a72)", "docs/security.md": "See SPEC \u00a73.", "host/host.go": "// Defaults of SPEC \u00a74."}[rel]
		want = append(want, fmt.Sprintf("%s:%d: %s", rel, n, text))
	}
	slices.Sort(want)
	slices.Sort(problems)
	if !slices.Equal(problems, want) {
		t.Errorf("after the plant:\n got %q\nwant %q", problems, want)
	}

	// Remove the plants: clean again.
	for _, rel := range []string{"README.md", "docs/security.md", "host/host.go"} {
		copyFile(rel)
	}
	if problems, _, err := specRefs(root); err != nil || len(problems) > 0 {
		t.Errorf("after removing the plant: %q, %v", problems, err)
	}
}
