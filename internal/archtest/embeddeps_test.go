package archtest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites testdata/embed.deps from the import graph:
//
//	go test ./internal/archtest -run TestEmbedDeps -update
var update = flag.Bool("update", false, "rewrite testdata/embed.deps")

// embedDeps is the checked list of what examples/embed — an agent's MCP
// layer on the front door — links: every module and every package outside
// the standard library. A change to it is a change to every embedder's
// cost, shown in review as a diff of this file.
const embedDeps = "testdata/embed.deps"

// embedMaxBytes bounds examples/embed's binary (linux/amd64, go build
// -trimpath): issue 32's "16 MB", read as ls -h reads it (16 MiB). The
// front door without the gateway's telemetry was 15.6 MiB; with tool
// pinning and the tasks adapter it grew to 16.1 MiB; internal/proc reading
// the proxy settings itself instead of through golang.org/x/net's
// httpproxy (which linked x/net/idna and x/text a second time) brought it
// to 15.9 MiB; profiles, views and sessions in the front door (+114 KB)
// and the tasks extension took it to 16.02 MiB, and three generic sorts
// and inserts of structs, 9 KB of instantiated code, were written plainly
// to come back under: 16,764,344 bytes (2026-12-04); a profile's own
// deferral modifiers (views apply them; the front door splits their
// patterns itself rather than link toolsurface.ParsePattern) made it
// 16,775,912 bytes, 1.3 KB under.
//
// The bound is read on a -trimpath build since 2026-12-05: a plain build
// writes the directories of the machine that builds it (the checkout,
// GOROOT, the module cache) into its line tables and DWARF, so the same
// code measured 16,777,112 bytes in /work/main, 16,777,136 in /tmp/ci40
// and 16,785,600 in /home/runner/work/switchboard/switchboard — the
// project's CI, building elsewhere, failed a commit this machine passed.
// Those bytes are the builder's, not the embedder's cost, and -trimpath
// is how a release is built; the same code reads 16,761,232 bytes
// trimmed, wherever it is built. The pins check's raw stat
// (internal/safefile's Seen, 2 KB) and the redaction's match conditions
// (internal/redact, kept as data rather than code) made it 16,774,216
// bytes, 2.9 KB under. The host's relay path on protocol 2026-07-28
// (the client identity in each request, questions handed to the SDK)
// took it 19.6 KB over; the OS keyring (go-keyring and godbus) became a
// backend the embedder imports (package oskeyring; the CLI does), which
// examples/embed, reading no secret from an OS store, does not:
// 16,267,064 bytes, 510 KB under (2026-12-05). The largest parts left are the
// standard library's TLS, x509 and HTTP and the go-sdk's own (its mcp
// package links encoding/gob and segmentio's JSON).
const embedMaxBytes = 16 << 20

// TestEmbedDeps (tailscale's depaware, in small): the modules and packages
// examples/embed links, for linux/amd64, are those testdata/embed.deps
// lists; a new one fails with the diff, until the file is rewritten with
// -update. Whatever the file says, none is the gateway's telemetry
// (Prometheus, OpenTelemetry, gRPC).
func TestEmbedDeps(t *testing.T) {
	t.Parallel()
	got, err := linked(filepath.Join("..", ".."), "./examples/embed")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(got, "\n") {
		for _, deny := range telemetry {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && matches(deny, f[1]) {
				t.Errorf("examples/embed links %s, which only the gateway's telemetry needs", f[1])
			}
		}
	}
	if *update {
		if err := os.WriteFile(embedDeps, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(embedDeps)
	if err != nil {
		t.Fatalf("%v (write it with: go test ./internal/archtest -run TestEmbedDeps -update)", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("examples/embed links other packages than %s lists (-listed +linked); if that is meant, "+
			"rewrite it with go test ./internal/archtest -run TestEmbedDeps -update and let review see the diff:\n%s", embedDeps, diff)
	}
}

// The list changes when the graph does: a program that imports the
// gateway links Prometheus, which the check names.
func TestLinkedNamesTelemetry(t *testing.T) {
	t.Parallel()
	got, err := linked(filepath.Join("..", ".."), "./gateway")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "\nmodule github.com/prometheus/client_golang\n") {
		t.Errorf("the gateway's list names no Prometheus module:\n%s", got)
	}
}

// TestEmbedSize builds examples/embed as a release is built (-trimpath,
// so that the figure is the same whichever directory it is built in) and
// checks its size, on the platform the bound is for.
func TestEmbedSize(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the bound is for linux/amd64")
	}
	if testing.Short() {
		t.Skip("builds a program")
	}
	t.Parallel()
	fi, err := os.Stat(build(t, "./examples/embed", "-trimpath"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > embedMaxBytes {
		t.Errorf("examples/embed (go build -trimpath) is %d bytes, %d over %d MiB: see what it links (%s)", fi.Size(), fi.Size()-embedMaxBytes, embedMaxBytes>>20, embedDeps)
	}
}

// linked returns what the package pattern pkg links on linux/amd64, as
// testdata/embed.deps holds it: a header, then "module M" lines, then
// "package P" lines, each sorted, the standard library left out.
func linked(dir, pkg string) (string, error) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}{{end}}", pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %v\n%s", pkg, err, stderr.String())
	}
	var mods, pkgs []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkgs = append(pkgs, "package "+f[0])
		if len(f) == 2 && !slices.Contains(mods, "module "+f[1]) {
			mods = append(mods, "module "+f[1])
		}
	}
	slices.Sort(mods)
	slices.Sort(pkgs)
	head := "# What " + pkg + " links on linux/amd64, beyond the standard library. Rewrite with:\n" +
		"#\tgo test ./internal/archtest -run TestEmbedDeps -update\n"
	return head + strings.Join(mods, "\n") + "\n" + strings.Join(pkgs, "\n") + "\n", nil
}
