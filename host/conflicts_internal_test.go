package host

import (
	"context"
	"fmt"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// repoServers is a configuration of n project servers that are never
// approved: each is held by launch trust, so starting them spawns nothing
// and what is measured is the host's own work per server.
func repoServers(n int) *config.Resolved {
	cfg := &config.Resolved{Workspace: "/work/proj"}
	for i := range n {
		def := config.Server{Type: config.TypeStdio, Command: "true", Args: []string{fmt.Sprint(i)}}
		cfg.Servers = append(cfg.Servers, config.ResolvedServer{
			Name: fmt.Sprintf("s%d", i), Written: def, Effective: def,
			Scope: config.ScopeProject, Trust: config.TrustRepo, File: "/work/proj/.mcp.json",
		})
	}
	return cfg
}

// Issue 28 point 8: `status` was quadratic in servers (4,000 took 9–72 s)
// because every server's start recomputed the name-conflict set over all
// servers. The set is computed once per configuration: the names gone
// through stay a small multiple of the servers, where a computation per
// start goes through n² of them. No clock is read.
func TestNameConflictsOncePerConfiguration(t *testing.T) {
	const n = 400
	cfg := repoServers(n)
	before := nameConflictsWork.Load()
	h := New(cfg, &Options{LookupEnv: func(string) (string, bool) { return "", false }})
	defer h.Close()
	if !h.WaitReady(context.Background()) {
		t.Fatal("servers did not settle")
	}
	for _, st := range h.Status() {
		if st.State != StateNeedsApproval {
			t.Fatalf("%s is %s (%s), want needs-approval: the test needs servers that do not spawn", st.Name, st.State, st.Reason)
		}
	}
	// A reload that changes one server, and a retry of each: neither may
	// go back to a computation per server.
	next := repoServers(n)
	next.Servers[0].Written.Args = []string{"changed"}
	next.Servers[0].Effective.Args = []string{"changed"}
	h.Apply(next)
	for _, st := range h.Status() {
		_ = h.Retry(st.Name) // a held server says why it cannot start; the check still runs
	}
	// Start and Apply go through n names each; other hosts of this
	// package's tests add a few more. n per start would be n*n.
	if work := nameConflictsWork.Load() - before; work > 4*n {
		t.Errorf("the name-conflict check went through %d names for %d servers (a start and a reload); want it computed once per configuration (%d names each)", work, n, n)
	}
}

// BenchmarkStartManyServers starts a host with 10,000 project servers held
// by launch trust and reads their status: the host's part of `status` on
// a repository that defines that many.
//
//	go test ./host -run '^$' -bench StartManyServers -benchtime 3x
func BenchmarkStartManyServers(b *testing.B) {
	cfg := repoServers(10000)
	opts := &Options{LookupEnv: func(string) (string, bool) { return "", false }}
	for b.Loop() {
		h := New(cfg, opts)
		h.WaitReady(context.Background())
		if st := h.Status(); len(st) != 10000 {
			b.Fatalf("%d servers", len(st))
		}
		h.Close()
	}
}
