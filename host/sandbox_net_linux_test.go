package host_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// lineListener answers each connection's first line with name.
func lineListener(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					fmt.Fprintf(c, "%s\n", name)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A project-scope server's network allow-list, end to end: the netprobe
// server, sandboxed by default as a project server, lists one loopback
// listener of the host. Under the project policy that destination is
// refused anyway (loopback is private: directly, nothing answers at
// that address in its network; through the proxy, 403 saying why); once
// the user allows private networks for project servers it is reached both
// ways, and an unlisted listener still is not. A user-scope server with
// the same list reaches it without the setting.
func TestSandboxNetworkAllowListInHost(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	requireSandboxHost(t)
	listed, other := lineListener(t, "listed"), lineListener(t, "other")
	ws := t.TempDir()
	probe := func(name string, scope config.Scope) config.ResolvedServer {
		cmd, args := testserver.Command("netprobe")
		rs := resolved(name, config.Server{Type: config.TypeStdio, Command: cmd, Args: args,
			Sandbox: &config.Sandbox{Network: config.SandboxNetwork{Allow: []string{listed}}}})
		if scope == config.ScopeProject {
			rs.Scope, rs.Trust = config.ScopeProject, config.TrustRepo
		}
		return rs
	}
	gate := func(*config.ResolvedServer) (host.State, string) { return "", "" } // approved: the network is under test
	cfg := func() *config.Resolved {
		c := cfgOf(probe("repo", config.ScopeProject), probe("mine", config.ScopeUser))
		c.Workspace = ws
		return c
	}
	call := func(h *host.Host, server, addr, way string) (string, bool) {
		t.Helper()
		res := mustCall(t, h, "mcp__"+server+"__connect", map[string]any{"addr": addr, "way": way})
		return textOf(res), res.IsError
	}
	ctx := ctxFor(t, 60*time.Second)

	strict := newHost(t, cfg(), &host.Options{Gate: gate})
	if _, err := strict.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if got, isErr := call(strict, "repo", listed, "direct"); !isErr || !strings.Contains(got, "connection refused") {
		t.Errorf("project policy, direct to the listed loopback %s: %q, want connection refused", listed, got)
	}
	if got, isErr := call(strict, "repo", listed, "proxy"); !isErr || !strings.Contains(got, "403") || !strings.Contains(got, "allowPrivateNetworkForProjectServers") {
		t.Errorf("project policy, proxy to the listed loopback %s: %q, want 403 naming the setting", listed, got)
	}
	for _, way := range []string{"direct", "proxy"} {
		if got, isErr := call(strict, "mine", listed, way); isErr || got != "listed" {
			t.Errorf("user scope, %s to the listed %s: %q, want listed", way, listed, got)
		}
	}

	open := newHost(t, cfg(), &host.Options{Gate: gate, AllowPrivateNetworkForProjectServers: true})
	if _, err := open.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	for _, way := range []string{"direct", "proxy"} {
		if got, isErr := call(open, "repo", listed, way); isErr || got != "listed" {
			t.Errorf("private allowed, %s to the listed %s: %q, want listed", way, listed, got)
		}
		if got, isErr := call(open, "repo", other, way); !isErr {
			t.Errorf("private allowed, %s to the unlisted %s: %q, want an error", way, other, got)
		}
	}
}
