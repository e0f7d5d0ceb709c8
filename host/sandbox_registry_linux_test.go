package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hosttest"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/internal/proc"
)

// npxServer is a repository's (project-scope) server started as
// `npx -y PKG`, with the default sandbox.
func npxServer(name, pkg string) config.ResolvedServer {
	rs := resolved(name, config.Server{Type: config.TypeStdio, Command: "npx", Args: []string{"-y", pkg}})
	rs.Scope, rs.Trust = config.ScopeProject, config.TrustRepo
	return rs
}

// homeWithRegistry makes HOME a home of the test's own (see plantHome)
// whose ~/.npmrc names a local npm registry, started for the test, on a
// machine that can sandbox. The test may not be parallel.
func homeWithRegistry(t *testing.T) (*npmtest.Registry, string) {
	t.Helper()
	requireSandboxHost(t)
	reg := npmtest.StartRegistry(t)
	home, _, _ := plantHome(t)
	t.Setenv("HOME", home)
	if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry="+reg.URL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return reg, home
}

// A repository's `npx -y PKG` server works sandboxed with nothing
// configured for it: npx downloads PKG from the registry the user
// configured (~/.npmrc, here a real npm registry on loopback, which a
// project server may reach because the user configured it), not from the
// one the repository's .npmrc names; cold, into its private copy of the
// cache (the user's ~/.npm is never written), then warm; and with the
// registry gone, still from its cache. A package that needs a registry
// the sandbox does not list fails at once, the destination named in its
// error. (HOME is this test's own: not parallel.)
func TestNpxFromTheUsersRegistrySandboxed(t *testing.T) {
	reg, home := homeWithRegistry(t)
	ws := t.TempDir()
	// The repository's own registry: npx must not use it.
	os.WriteFile(filepath.Join(ws, ".npmrc"), []byte("registry=http://127.0.0.1:9/\n@evil:registry=http://127.0.0.1:9/\n"), 0o644)

	echo := npxServer("echo", "switchboard-echo-server")
	words := config.DescribeSandbox(host.SandboxOf(&echo, ws, nil), nil)
	t.Logf("review: %s", words)
	if dest := strings.TrimSuffix(strings.TrimPrefix(reg.URL, "http://"), "/"); !strings.Contains(words, "may download packages from your npm registry ("+dest+")") {
		t.Errorf("the review does not name the user's registry: %q", words)
	}

	for _, phase := range []string{"cold", "warm"} {
		h, st := startInWorkspace(t, ws, 90*time.Second, echo)
		if st.State != host.StateConnected {
			t.Fatalf("%s: state %s: %s\n%s", phase, st.State, st.Reason, strings.Join(st.StderrTail, "\n"))
		}
		res := mustCall(t, h, "mcp__echo__echo", map[string]any{"text": "from the local registry, " + phase})
		if !strings.Contains(textOf(res), phase) {
			t.Errorf("%s: echo = %q", phase, textOf(res))
		}
		h.Close()
	}
	if ents, _ := os.ReadDir(filepath.Join(home, ".npm")); len(ents) > 0 {
		t.Errorf("the sandboxed npx wrote the user's ~/.npm: %v", ents)
	}

	reg.Stop()
	h, st := startInWorkspace(t, ws, 90*time.Second, echo)
	if st.State != host.StateConnected {
		t.Errorf("registry gone, warm cache: state %s: %s\n%s", st.State, st.Reason, strings.Join(st.StderrTail, "\n"))
	}
	h.Close()

	// The repository's scoped registry is no destination of the sandbox:
	// npm's request fails at once (not after retries and the start-up
	// timeout), and its error names where it went.
	_, st = startInWorkspace(t, ws, 90*time.Second, npxServer("evil", "@evil/pkg"))
	t.Logf("unlisted registry: %s: %s\n%s", st.State, st.Reason, strings.Join(st.StderrTail, "\n"))
	if st.State != host.StateError || strings.Contains(st.Reason, "timed out") {
		t.Errorf("state %s, reason %q: want npm's own failure, not a time-out", st.State, st.Reason)
	}
	if tail := strings.Join(st.StderrTail, "\n"); !strings.Contains(tail, "127.0.0.1:9") {
		t.Errorf("npm's error does not name the destination: %q", tail)
	}
}

// BenchmarkNpxStart measures, side by side, the start of the same
// `npx -y switchboard-echo-server` (from a local registry on loopback,
// with the user's npm cache warm) as the user's own server, unconfined,
// and as a repository's server in the default sandbox (whose cache is a
// private copy over the user's): a host's start, its first tools list
// with the server connected, its close.
//
//	go test ./host -run '^$' -bench BenchmarkNpxStart -benchtime 10x -count 3
func BenchmarkNpxStart(b *testing.B) {
	if why := proc.SandboxSupport(); why != "" {
		b.Skip(why)
	}
	reg := npmtest.StartRegistry(b)
	home, err := os.MkdirTemp("/var/tmp", "npx-bench-home-")
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { os.RemoveAll(home) })
	b.Setenv("HOME", home)
	os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry="+reg.URL+"\n"), 0o600)
	ws := b.TempDir()
	run := func(b *testing.B, cfg *config.Resolved) {
		h := host.New(cfg, &host.Options{Gate: approved, ToolsWait: 90 * time.Second, StartupTimeout: 90 * time.Second,
			LookupEnv: func(string) (string, bool) { return "", false }})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		list, err := h.Tools(ctx)
		if err != nil || len(list.Warnings) > 0 || len(list.Tools) == 0 {
			st := hosttest.Status(h, cfg.Servers[0].Name)
			b.Fatalf("tools: %v %v; %s %s %q", err, list.Warnings, st.State, st.Reason, st.StderrTail)
		}
		h.Close()
	}
	user := cfgOf(resolved("echo", config.Server{Type: config.TypeStdio, Command: "npx", Args: []string{"-y", "switchboard-echo-server"}, Cwd: ws}))
	user.Workspace = ws
	repo := cfgOf(npxServer("echo", "switchboard-echo-server"))
	repo.Workspace = ws
	run(b, user) // the user's cache, warm
	run(b, repo) // the sandbox's private copy: what the user's lacks (nothing)
	for _, bc := range []struct {
		name string
		cfg  *config.Resolved
	}{{"unsandboxed", user}, {"sandboxed", repo}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				run(b, bc.cfg)
			}
		})
	}
}
