package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/switchboard-mcp/switchboard"

// rule is what one pure package may not do. Every pure package also obeys
// the module rule: inside its module it depends only on pure packages.
type rule struct {
	// Pkg is the package's import path inside the module.
	Pkg string
	// DenyDeps are packages it must not depend on, directly or not; a
	// path ending in "/..." covers that path and everything below it.
	DenyDeps []string
	// DenyImports are packages it must not import itself: standard ones
	// that everything reaches (time, syscall through os) but that it must
	// not use.
	DenyImports []string
	// OnlyIn maps an import path to the one file that may import it.
	OnlyIn map[string]string
	// DenyText maps text no source file may hold to why.
	DenyText map[string]string
	// Impure marks a package that does I/O but must stay apart from the
	// runtime: the module rule does not apply to it (only its own rules
	// do), and a pure package may not depend on it.
	Impure bool
}

// noIO names the packages that reach the network or spawn processes.
var noIO = []string{"os/exec", "net", "net/http"}

// pure lists the pure packages (the lead's layout rule: pure packages never
// import host or gateway) and what each may not do besides.
var pure = []rule{
	// config decides from files and data: it never spawns, dials or reads
	// the clock.
	{Pkg: "config", DenyDeps: noIO, DenyImports: []string{"time", "syscall"}},
	// policy decides from data; only Load reads files. It knows nothing of
	// MCP itself.
	{Pkg: "policy", DenyDeps: append([]string{"github.com/modelcontextprotocol/go-sdk/..."}, noIO...),
		DenyImports: []string{"time", "syscall"}, OnlyIn: map[string]string{"os": "load.go"}},
	// trust never spawns or dials, and callers pass the time in.
	{Pkg: "trust", DenyDeps: noIO, DenyImports: []string{"syscall"},
		DenyText: map[string]string{"time.Now": "callers pass the time in"}},
	// toolsurface builds on the MCP SDK alone: another package of this
	// module would pull I/O into it or make a cycle with the runtime.
	{Pkg: "toolsurface", DenyDeps: []string{module + "/..."}},
	// Its shape and search packages build on it (and the SDK) alone.
	{Pkg: "toolsurface/shape", DenyDeps: []string{module + "/host/...", module + "/gateway/...", module + "/internal/..."}},
	{Pkg: "toolsurface/search", DenyDeps: []string{module + "/host/...", module + "/gateway/...", module + "/internal/..."}},
	// filelock only takes a lock on a file: config and trust wait on it
	// while they edit, so it may sleep, but it never spawns or dials.
	{Pkg: "internal/filelock", DenyDeps: noIO},
	// atomicfile only replaces a file's contents (the trust store, the
	// OAuth store and the gateway's key files save through it): it never
	// spawns or dials.
	{Pkg: "internal/atomicfile", DenyDeps: append([]string{module + "/..."}, noIO...)},
	// safefile only reads a configuration file that is a regular file,
	// without blocking and within a size (every config reader uses it).
	{Pkg: "internal/safefile", DenyDeps: append([]string{module + "/..."}, noIO...)},
	// fileowner only asks whose a file is (the stores refuse another
	// user's).
	{Pkg: "internal/fileowner", DenyDeps: append([]string{module + "/..."}, noIO...)},
	{Pkg: "internal/redact"},
	{Pkg: "internal/netguard"},
	// termsafe only rewrites strings for a terminal.
	{Pkg: "internal/termsafe", DenyDeps: append([]string{module + "/..."}, noIO...)},
	// lazyre only compiles an expression on its first use.
	{Pkg: "internal/lazyre", DenyDeps: append([]string{module + "/..."}, noIO...)},
}

// telemetry are the modules of the gateway's metrics and traces
// (Prometheus, OpenTelemetry and the gRPC it exports over): an embedder
// of the front door links none of them.
var telemetry = []string{
	"github.com/prometheus/...", "go.opentelemetry.io/...", "google.golang.org/grpc/...", "google.golang.org/protobuf/...",
}

// apart lists packages that do I/O but that host, gateway and the CLI
// plug in, never the other way round.
var apart = []rule{
	// The front door (the module's root) is what an embedder links: the
	// gateway is its plug-in (gateway.New(sb)), never a part of it, and
	// neither are the CLI or the gateway's telemetry.
	{Pkg: "", Impure: true, DenyDeps: append([]string{module + "/gateway/...", module + "/internal/cli/..."}, telemetry...)},
	// host runs the servers; the gateway and the CLI are built on it.
	{Pkg: "host", Impure: true, DenyDeps: []string{module, module + "/gateway/...", module + "/internal/cli/..."}},
	// oauth is handed to host as its Authorizer: it knows nothing of
	// host, the gateway, the CLI or the front door.
	{Pkg: "oauth", Impure: true, DenyDeps: []string{module, module + "/host/...", module + "/gateway/...", module + "/internal/cli/..."}},
	// secretstore is the user's credential store, which the front door,
	// the CLI and oauth's callers plug in: it knows nothing of host, the
	// gateway, the CLI or the front door.
	{Pkg: "internal/secretstore", Impure: true, DenyDeps: []string{module, module + "/host/...", module + "/gateway/...", module + "/internal/cli/..."}},
	// The CLI is presentation on the front door: it reads no settings file
	// itself (one settings loader, switchboard.ReadSettings over
	// config.ReadSettings, is what policy, trust and the network and
	// sandbox defaults come from).
	{Pkg: "internal/cli", Impure: true, DenyText: map[string]string{
		"config.ParseSettings(":  "the CLI reads settings through the front door (switchboard.ReadSettings)",
		"config.ReadSettings(":   "the CLI reads settings through the front door (switchboard.ReadSettings)",
		"policy.Load(":           "the policy comes from the front door's settings stack (policy.FromSettings)",
		"trust.NewPreApproval(":  "pre-approvals come from the front door's launch trust",
		"trust.PreApprovalFrom(": "pre-approvals come from the front door's launch trust",
	}},
}

// beside lists packages beside the library: the front door (the root
// package) never depends on them, so embedding it adds none of their
// weight. The console (issue 33) is served by the CLI and, later, mounted
// by the gateway; it is built on the front door, never inside it.
var beside = []rule{
	{Pkg: "", Impure: true, DenyDeps: []string{module + "/internal/console/...", module + "/internal/cli/...", "github.com/chromedp/..."}},
	{Pkg: "internal/console", Impure: true, DenyDeps: []string{module + "/internal/cli/...", "github.com/chromedp/..."}},
	// The binary exports traces through the gateway's own OTLP/HTTP
	// encoder (gateway/otlp_export.go): the upstream exporters link the
	// collector's gRPC stubs, and with them gRPC, grpc-gateway and
	// x/net/trace, whose package init runs in every process (issue 36).
	// Tests may link the generated OTLP types to decode what was sent.
	{Pkg: "cmd/switchboard", Impure: true, DenyDeps: unlinkedTelemetry},
}

// unlinkedTelemetry is what the switchboard binary does not link.
var unlinkedTelemetry = []string{
	"google.golang.org/grpc/...", "github.com/grpc-ecosystem/...", "golang.org/x/net/trace",
	"go.opentelemetry.io/proto/...", "go.opentelemetry.io/otel/exporters/...",
}

// TestPurePackages is the one test of the layout rules: the real import
// graph, from `go list`, with every offending chain named.
func TestPurePackages(t *testing.T) {
	problems, err := check(".", module, slices.Concat(pure, apart, beside))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// The check is not vacuous: gateway, which runs on host, is reported with
// the chain that reaches host when it is declared pure too.
func TestCheckReportsRealImpurePackage(t *testing.T) {
	problems, err := check(".", module, append(slices.Clone(pure), rule{Pkg: "gateway"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gateway declared pure:\n%s", strings.Join(problems, "\n"))
	want := "gateway depends on host, which is not a pure package: gateway -> host "
	if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
		t.Errorf("gateway declared pure, yet no problem starts %q:\n%s", want, strings.Join(problems, "\n"))
	}
}

// Every kind of rule fails, naming the chain, on a module built to break
// them (testdata/impure), and a clean package passes.
func TestCheckReportsChains(t *testing.T) {
	const mod = "example.com/impure"
	problems, err := check(filepath.Join("testdata", "impure"), mod, []rule{
		{Pkg: "pure", DenyDeps: []string{"os/exec"}},
		{Pkg: "clean", DenyDeps: noIO, DenyImports: []string{"time"}},
		{Pkg: "clock", DenyImports: []string{"time"}, OnlyIn: map[string]string{"os": "clock.go"},
			DenyText: map[string]string{"time.Now": "callers pass the time in"}},
		// Impure: only its own rule applies, and pure still may not use it.
		{Pkg: "mid", Impure: true, DenyDeps: []string{mod + "/host/..."}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("testdata/impure:\n%s", strings.Join(problems, "\n"))
	want := []string{
		"pure depends on mid, which is not a pure package: pure -> mid",
		"pure depends on host, which is not a pure package: pure -> mid -> host",
		"pure depends on os/exec: pure -> mid -> host -> os/exec",
		"clock imports time",
		"clock/ok.go imports os; only clock.go of clock may",
		"clock/clock.go holds time.Now: callers pass the time in",
		"mid depends on host: mid -> host",
	}
	for _, w := range want {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, w) }) {
			t.Errorf("no problem starts %q", w)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for _, p := range problems {
		if strings.HasPrefix(p, "clean") {
			t.Errorf("the clean package is reported: %s", p)
		}
	}

	if _, err := check(filepath.Join("testdata", "impure"), mod, []rule{{Pkg: "nosuch"}}); err == nil {
		t.Error("a package that does not exist is not an error")
	}
}

// listed is one package as `go list -json` describes it.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

// check loads the rules' packages and their dependencies with `go list`,
// run in dir (inside module mod), and returns one line per broken rule.
func check(dir, mod string, rules []rule) ([]string, error) {
	full := func(p string) string {
		if p == "" {
			return mod // the module's root package
		}
		return mod + "/" + p
	}
	short := func(p string) string {
		if p == mod {
			return "the root package"
		}
		return strings.TrimPrefix(p, mod+"/")
	}
	args := []string{"list", "-e", "-deps", "-json"}
	isPure := map[string]bool{}
	for _, r := range rules {
		args = append(args, full(r.Pkg))
		isPure[full(r.Pkg)] = !r.Impure
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// -mod=readonly: never edit go.mod. Downloads stay allowed: on a fresh
	// machine, listing the module needs go.mod files (e.g. wincred's, a
	// Windows-only dependency) that no Linux build has fetched yet.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	pkgs := map[string]*listed{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list output: %w", err)
		}
		pkgs[p.ImportPath] = &p
	}

	var problems []string
	for _, r := range rules {
		root := pkgs[full(r.Pkg)]
		name := short(full(r.Pkg))
		if root == nil || root.Error != nil {
			msg := "not listed"
			if root != nil {
				msg = root.Error.Err
			}
			return nil, fmt.Errorf("loading %s: %s", full(r.Pkg), msg)
		}
		chain := chains(pkgs, root.ImportPath)
		path := func(dep string) string {
			parts := chain(dep)
			for i := range parts {
				parts[i] = short(parts[i])
			}
			return strings.Join(parts, " -> ")
		}
		for _, dep := range root.Deps { // sorted by go list
			if !r.Impure && (dep == mod || strings.HasPrefix(dep, mod+"/")) && !isPure[dep] {
				problems = append(problems, fmt.Sprintf("%s depends on %s, which is not a pure package: %s "+
					"(pure packages never import host, gateway or the CLI; if %s is pure itself, add it to the list in internal/archtest)",
					name, short(dep), path(dep), short(dep)))
			}
			for _, deny := range r.DenyDeps {
				if matches(deny, dep) {
					problems = append(problems, fmt.Sprintf("%s depends on %s: %s", name, short(dep), path(dep)))
				}
			}
		}
		for _, imp := range root.Imports {
			if slices.Contains(r.DenyImports, imp) {
				problems = append(problems, fmt.Sprintf("%s imports %s", name, imp))
			}
		}
		if len(r.OnlyIn) == 0 && len(r.DenyText) == 0 {
			continue
		}
		for _, name := range root.GoFiles {
			src, err := os.ReadFile(filepath.Join(root.Dir, name))
			if err != nil {
				return nil, err
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
			if err != nil {
				return nil, err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if only, ok := r.OnlyIn[p]; ok && only != name {
					problems = append(problems, fmt.Sprintf("%s/%s imports %s; only %s of %s may", r.Pkg, name, p, only, r.Pkg))
				}
			}
			for text, why := range r.DenyText {
				if bytes.Contains(src, []byte(text)) {
					problems = append(problems, fmt.Sprintf("%s/%s holds %s: %s", r.Pkg, name, text, why))
				}
			}
		}
	}
	return problems, nil
}

// matches reports whether pattern (a path, or a path ending in "/...")
// covers pkg.
func matches(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

// chains returns, for a package root depends on, the shortest import
// chain from root to it (both included).
func chains(pkgs map[string]*listed, root string) func(string) []string {
	parent := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if pkgs[p] == nil {
			continue
		}
		for _, imp := range pkgs[p].Imports {
			if _, seen := parent[imp]; !seen {
				parent[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return func(dep string) []string {
		var out []string
		for p := dep; p != ""; p = parent[p] {
			out = append(out, p)
			if _, ok := parent[p]; !ok {
				break
			}
		}
		slices.Reverse(out)
		return out
	}
}
