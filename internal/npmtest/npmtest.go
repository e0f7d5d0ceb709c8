// Package npmtest installs the npm reference MCP servers that Switchboard's
// end-to-end tests and benchmarks run against, and tells tests where they are.
//
// The servers and the TypeScript SDK are pinned by testdata/npm/package.json
// and package-lock.json at the module root. [Install] runs `npm ci` there once
// per machine: concurrent test packages (go test ./... runs them in parallel)
// serialize on a file lock, and a stamp holding the lockfile's SHA-256 makes
// every later call return at once until the lockfile changes.
//
// Tests then start a server as `node <entry.js>` (faster than npx, and with
// no shell or npx process between the host and the server):
//
//	p := npmtest.Install(t)
//	cmd := exec.Command(p.Node, p.Everything)             // stdio
//	cmd := exec.Command(p.Node, p.Filesystem, t.TempDir()) // allowed dirs as args
//	cmd := exec.Command(p.Node, p.Memory)                 // set MEMORY_FILE_PATH to a temp file
//
// server-everything also serves Streamable HTTP (`node entry streamableHttp`,
// port from $PORT, endpoint /mcp) and SSE (`sse`); see npmtest_test.go.
//
// Two real MCP clients are pinned too, for tests of the gateway behind them:
//
//	exec.Command(p.Node, p.Inspector, "--cli", cmd, args…, "--method", "tools/list")
//	exec.Command(p.Claude, "mcp", "list") // with HOME set to a temporary folder
//
// Claude Code is the largest part of the install: its native binary for
// this platform is about 400 MB on disk.
//
// [StartRegistry] runs a local npm registry on loopback (verdaccio, pinned
// by testdata/npm-registry and installed the same way) serving the small
// packages of testdata/npm-registry/packages, for tests of package runners
// (npx) that must download without the internet.
package npmtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Paths locates an installed set of reference servers. All paths are absolute.
type Paths struct {
	// Dir is testdata/npm, the folder holding package.json and node_modules.
	Dir string
	// Node is the node executable.
	Node string
	// Everything, Filesystem and Memory are the entry scripts of
	// @modelcontextprotocol/server-everything, server-filesystem and
	// server-memory: run them as `Node <entry> [args…]`.
	Everything string
	Filesystem string
	Memory     string
	// BasicApp is the entry script of @modelcontextprotocol/server-basic-vanillajs,
	// an MCP Apps example server (a tool whose _meta.ui.resourceUri names a
	// ui:// HTML resource). `Node <entry> --stdio` serves stdio; without the
	// flag it serves Streamable HTTP.
	BasicApp string
	// SDK is the folder of the pinned @modelcontextprotocol/sdk package, for
	// TypeScript client scripts (resolve imports from Dir).
	SDK string
	// Inspector is the entry script of @modelcontextprotocol/inspector (its
	// launcher): run it as `Node Inspector --cli <server command…> --method …`.
	Inspector string
	// Claude is the Claude Code executable (@anthropic-ai/claude-code's
	// native binary for this platform): run it directly, not with Node, and
	// with HOME pointing at a temporary folder, since it keeps its config in
	// ~/.claude.json and ~/.claude.
	Claude string
}

// InstallTimeout bounds one `npm ci`.
const InstallTimeout = 10 * time.Minute

// Install makes sure the pinned npm packages are installed and returns where
// they are. Without node or npm it skips the test, or fails it when $CI is
// "true" (CI must not silently skip the end-to-end tests). It is safe to call
// from many tests and many test processes at once.
func Install(t testing.TB) Paths {
	t.Helper()
	p, err := install(t.Logf)
	if err != nil {
		var missing missingToolError
		if errors.As(err, &missing) && os.Getenv("CI") != "true" {
			t.Skipf("npmtest: %v; skipping the npm end-to-end test (install Node.js 20+ to run it)", err)
		}
		if errors.As(err, &missing) {
			t.Fatalf("npmtest: %v, and CI=true: the npm end-to-end tests must run in CI (install Node.js 20+ with npm)", err)
		}
		t.Fatalf("npmtest: %v", err)
	}
	return p
}

// Ensure is Install for programs that are not tests, such as the bench
// program: it installs the pinned packages when needed (logging progress to
// logf, which may be nil) and returns where they are, or an error saying
// what is missing (node or npm not in $PATH) or what failed.
func Ensure(logf func(string, ...any)) (Paths, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return install(logf)
}

type missingToolError struct{ tool string }

func (e missingToolError) Error() string {
	return fmt.Sprintf("%s not found in $PATH", e.tool)
}

func install(logf func(string, ...any)) (Paths, error) {
	root, err := moduleRoot()
	if err != nil {
		return Paths{}, err
	}
	dir := filepath.Join(root, "testdata", "npm")
	node, err := exec.LookPath("node")
	if err != nil {
		return Paths{}, missingToolError{"node"}
	}
	if node, err = filepath.Abs(node); err != nil {
		return Paths{}, err
	}
	if err := ciOnce(dir, logf); err != nil {
		return Paths{}, err
	}

	p := Paths{Dir: dir, Node: node, SDK: filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")}
	for _, e := range []struct {
		pkg  string
		dest *string
	}{
		{"server-everything", &p.Everything},
		{"server-filesystem", &p.Filesystem},
		{"server-memory", &p.Memory},
		{"server-basic-vanillajs", &p.BasicApp},
	} {
		entry, err := binEntry(filepath.Join(dir, "node_modules", "@modelcontextprotocol", e.pkg))
		if err != nil {
			return Paths{}, err
		}
		*e.dest = entry
	}
	inspector, err := namedBinEntry(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector"), "mcp-inspector")
	if err != nil {
		return Paths{}, err
	}
	p.Inspector = inspector
	if p.Claude, err = claudeBinary(filepath.Join(dir, "node_modules", "@anthropic-ai")); err != nil {
		return Paths{}, err
	}
	return p, nil
}

// ciOnce runs `npm ci` in dir unless its node_modules holds the stamp of
// its lockfile: once per machine and lockfile, concurrent callers (test
// processes) serializing on a file lock.
func ciOnce(dir string, logf func(string, ...any)) error {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return fmt.Errorf("reading the lockfile: %w", err)
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	stamp := filepath.Join(dir, "node_modules", ".switchboard-npmtest-stamp")
	if stampMatches(stamp, want) {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return missingToolError{"npm"}
	}
	// The lock lives outside node_modules (npm ci deletes that) and outside
	// the work tree (it is no source file).
	lockPath := filepath.Join(os.TempDir(), "switchboard-npmtest-"+shortHash(dir)+".lock")
	unlock, err := lockFile(lockPath)
	if err != nil {
		return fmt.Errorf("locking %s: %w", lockPath, err)
	}
	defer unlock()
	// Another process may have installed while we waited for the lock.
	if stampMatches(stamp, want) {
		return nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), InstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out.String())
	}
	if err := os.WriteFile(stamp, []byte(want+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing the install stamp: %w", err)
	}
	logf("npmtest: npm ci in %s took %v", filepath.Base(dir), time.Since(start).Round(time.Millisecond))
	return nil
}

// claudeBinary finds Claude Code's native executable in the @anthropic-ai
// folder: npm installs the one platform package (claude-code-<os>-<arch>…)
// that fits this machine, and the wrapper's postinstall copies its binary
// over bin/claude.exe. The platform package's own copy is used, so that
// it works also where npm ran no install scripts.
func claudeBinary(scope string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(scope, "claude-code-*", "claude*"))
	sort.Strings(matches)
	for _, m := range matches {
		if b := filepath.Base(m); b != "claude" && b != "claude.exe" {
			continue
		}
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
			return m, nil
		}
	}
	return "", fmt.Errorf("no Claude Code binary for this platform under %s/claude-code-* (npm installs the one that fits the machine; is this platform one that @anthropic-ai/claude-code ships?)", scope)
}

func stampMatches(stamp, want string) bool {
	got, err := os.ReadFile(stamp)
	return err == nil && strings.TrimSpace(string(got)) == want
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// binEntry returns the absolute path of the script named by the "bin" field
// of the package in pkgDir: the string itself, or the only (else the first
// by name) entry of the map.
func binEntry(pkgDir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", pkgDir, err)
	}
	var pkg struct {
		Name string          `json:"name"`
		Bin  json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", fmt.Errorf("parsing %s/package.json: %w", pkgDir, err)
	}
	var rel string
	var one string
	var many map[string]string
	switch {
	case json.Unmarshal(pkg.Bin, &one) == nil && one != "":
		rel = one
	case json.Unmarshal(pkg.Bin, &many) == nil && len(many) > 0:
		names := make([]string, 0, len(many))
		for k := range many {
			names = append(names, k)
		}
		sort.Strings(names)
		rel = many[names[0]]
	default:
		return "", fmt.Errorf("%s has no \"bin\" entry", pkg.Name)
	}
	entry := filepath.Join(pkgDir, filepath.FromSlash(rel))
	if _, err := os.Stat(entry); err != nil {
		return "", fmt.Errorf("%s: bin entry: %w", pkg.Name, err)
	}
	return entry, nil
}

// namedBinEntry returns the absolute path of the script that the "bin"
// map of the package in pkgDir names name.
func namedBinEntry(pkgDir, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", pkgDir, err)
	}
	var pkg struct {
		Name string            `json:"name"`
		Bin  map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", fmt.Errorf("parsing %s/package.json: %w", pkgDir, err)
	}
	rel, ok := pkg.Bin[name]
	if !ok {
		return "", fmt.Errorf("%s has no bin entry %q", pkg.Name, name)
	}
	entry := filepath.Join(pkgDir, filepath.FromSlash(rel))
	if _, err := os.Stat(entry); err != nil {
		return "", fmt.Errorf("%s: bin entry %s: %w", pkg.Name, name, err)
	}
	return entry, nil
}

// moduleRoot walks up from the working directory (a test's is its package
// folder) to the folder holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod found above the working directory")
		}
		dir = parent
	}
}
