package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What Node says a server's npx copy lacks is read from its stderr: ESM's
// and CommonJS's complaints, a package by its name (a subpath import
// names its package) or a file of the copy; nothing that lies outside an
// npx copy, nor a relative import or a builtin.
func TestFindNpxMissing(t *testing.T) {
	const cp = "/h/.npm/_npx/0123456789abcdef"
	const imp = cp + "/node_modules/@x/server/dist/index.js"
	for _, tc := range []struct {
		name, tail  string
		pkg, file   string
		notAnNpxOne bool
	}{
		{name: "ESM package", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from " + imp, pkg: "zod"},
		{name: "ESM subpath", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod/v3' imported from " + imp, pkg: "zod"},
		{name: "scoped subpath", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk/server/index.js' imported from " + imp, pkg: "@modelcontextprotocol/sdk"},
		{name: "ESM file", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '" + cp + "/node_modules/zod/index.js' imported from " + imp, file: cp + "/node_modules/zod/index.js"},
		{name: "CommonJS", tail: "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'zod'\nRequire stack:\n- " + imp + "\n- /h/x.js", pkg: "zod"},
		{name: "not an npx copy", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /srv/app/index.js", notAnNpxOne: true},
		{name: "importer out of the copy", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from " + cp + "/node_modules/../../../../etc/x.js", notAnNpxOne: true},
		{name: "file out of the copy", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/home/u/.ssh/id_rsa' imported from " + imp, notAnNpxOne: true},
		{name: "file climbing out", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '" + cp + "/node_modules/../../../../home/u/x' imported from " + imp, notAnNpxOne: true},
		{name: "relative import", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find module './lib.js' imported from " + imp, notAnNpxOne: true},
		{name: "builtin", tail: "Error [ERR_UNKNOWN_BUILTIN_MODULE]: Cannot find package 'node:sqlite' imported from " + imp, notAnNpxOne: true},
		{name: "not a package name", tail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '..' imported from " + imp, notAnNpxOne: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := findNpxMissing(strings.Split(filepath.FromSlash(tc.tail), "\n"))
			if tc.notAnNpxOne {
				if ok {
					t.Fatalf("found %+v", m)
				}
				return
			}
			if !ok {
				t.Fatal("not found")
			}
			if m.dir != filepath.FromSlash(cp) || m.pkg != tc.pkg || m.file != filepath.FromSlash(tc.file) {
				t.Errorf("got %+v", m)
			}
		})
	}
}

// A copy is taken for incomplete only when it is an npx copy (a folder,
// not a link, holding package.json) and lacks what Node missed, looked up
// as Node does: in every node_modules from the importer's folder up.
func TestNpxCopyLacks(t *testing.T) {
	seen := "/h/.npm/_npx/0123456789abcdef"
	imp := seen + "/node_modules/@x/server/dist/index.js"
	copyOf := func(t *testing.T, files ...string) string {
		cp := filepath.Join(t.TempDir(), "_npx", "0123456789abcdef")
		for _, f := range append(files, "package.json", "node_modules/@x/server/dist/index.js") {
			p := filepath.Join(cp, filepath.FromSlash(f))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return cp
	}
	pkg := npxMissing{dir: filepath.FromSlash(seen), importer: filepath.FromSlash(imp), pkg: "zod"}
	file := npxMissing{dir: pkg.dir, importer: pkg.importer, file: filepath.FromSlash(seen + "/node_modules/zod/index.js")}

	if cp := copyOf(t); !pkg.lacks(cp) || !file.lacks(cp) {
		t.Error("a copy without zod is not taken for incomplete")
	}
	if cp := copyOf(t, "node_modules/zod/package.json", "node_modules/zod/index.js"); pkg.lacks(cp) || file.lacks(cp) {
		t.Error("a copy with zod is taken for incomplete")
	}
	if cp := copyOf(t, "node_modules/@x/server/node_modules/zod/package.json"); pkg.lacks(cp) {
		t.Error("a copy with zod nested where Node looks first is taken for incomplete")
	}
	cp := copyOf(t)
	os.Remove(filepath.Join(cp, "package.json"))
	if pkg.lacks(cp) {
		t.Error("a folder without npx's package.json is taken for an npx copy")
	}
	link := filepath.Join(t.TempDir(), "0123456789abcdef")
	if err := os.Symlink(copyOf(t), link); err != nil {
		t.Skip(err)
	}
	if pkg.lacks(link) {
		t.Error("a link is taken for an npx copy")
	}
}

// The host removes a copy only in the npm cache the server was started
// with, and the same copy only once for a server: a package that lacks
// what it imports even when whole is not downloaded on every start.
func TestRepairNpxOnlyItsCacheAndOnce(t *testing.T) {
	cache := t.TempDir()
	cp := filepath.Join(cache, "_npx", "0123456789abcdef")
	for _, f := range []string{"package.json", "node_modules/@x/server/dist/index.js"} {
		p := filepath.Join(cp, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}"), 0o644)
	}
	tail := []string{"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from " + filepath.Join(cp, "node_modules", "@x", "server", "dist", "index.js")}

	s := &server{}
	if got := s.repairNpx(tail); got != "" {
		t.Fatalf("a server that is no npx one had %s removed", got)
	}
	other := []npxCache{{seen: t.TempDir()}}
	s.npxCaches.Store(&other)
	if got := s.repairNpx(tail); got != "" {
		t.Fatalf("a copy outside the server's npm cache was removed: %s", got)
	}
	mine := []npxCache{{seen: cache}}
	s.npxCaches.Store(&mine)
	if got := s.repairNpx(tail); got != cp {
		t.Fatalf("removed %q, want %s", got, cp)
	}
	if _, err := os.Stat(cp); !os.IsNotExist(err) {
		t.Fatalf("the copy is still there: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(cp)); len(ents) != 0 {
		t.Errorf("left in _npx: %v", ents)
	}
	os.MkdirAll(filepath.Join(cp, "node_modules"), 0o755)
	os.WriteFile(filepath.Join(cp, "package.json"), []byte("{}"), 0o644)
	if got := s.repairNpx(tail); got != "" {
		t.Errorf("the same copy was removed twice: %s", got)
	}
}

// Whatever a server writes, what findNpxMissing reads stays inside an npx
// copy: its importer and file below the copy's node_modules, its package
// a package name.
func FuzzFindNpxMissing(f *testing.F) {
	f.Add("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /h/.npm/_npx/0123456789abcdef/node_modules/x/index.js")
	f.Add("Error: Cannot find module 'zod'\nRequire stack:\n- /h/.npm/_npx/0123456789abcdef/node_modules/x/index.js")
	f.Add("Cannot find module '/h/.npm/_npx/01234567/node_modules/a/../../../../x' imported from /h/.npm/_npx/01234567/node_modules/b/i.js")
	f.Add(`Cannot find package 'zod' imported from /h\_npx\0123456789abcdef\node_modules\x\i.js`)
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := findNpxMissing(strings.Split(s, "\n"))
		if !ok {
			return
		}
		nm := filepath.Join(m.dir, "node_modules")
		if filepath.Base(filepath.Dir(m.dir)) != "_npx" || !within(m.importer, nm) {
			t.Fatalf("not an npx copy's: %+v", m)
		}
		if (m.file == "") == (m.pkg == "") || m.file != "" && !within(m.file, nm) || m.pkg != "" && !npmPackageName.MatchString(m.pkg) {
			t.Fatalf("what it lacks: %+v", m)
		}
	})
}
