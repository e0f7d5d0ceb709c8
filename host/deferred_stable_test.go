package host_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// A model provider caches the prompt up to the first byte that changes,
// and the tool block comes first: tool_search's definition must not change
// while servers connect, crash and reconnect, nor with the order they
// connect in. These tests hold each server behind a gate file, so which
// server is up when is decided by the test, not by timing.

// gated runs test server ts behind /bin/sh, which waits for the file gate
// to exist, writes its pid (the server's, after exec) to gate.pid and
// execs the server.
func gated(name, gate, ts string, args ...string) config.ResolvedServer {
	cmd, a := testserver.Command(ts, args...)
	line := "while [ ! -e " + shq(gate) + " ]; do sleep 0.02; done; echo $$ >" + shq(gate+".pid") + "; exec " + shq(cmd)
	for _, s := range a {
		line += " " + shq(s)
	}
	return resolved(name, config.Server{Type: config.TypeStdio, Command: "/bin/sh", Args: []string{"-c", line}})
}

func open(t *testing.T, gate string) {
	t.Helper()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// listNow lists the tools without waiting for servers still connecting.
func listNow(t *testing.T, h *host.Host) *host.ToolList {
	t.Helper()
	list, err := h.Tools(ctxFor(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// searchDef is tool_search's definition in list as the model gets it
// (name, description, schema, annotations), or "" when it is not listed.
func searchDef(t *testing.T, list *host.ToolList) string {
	t.Helper()
	for _, tl := range list.Tools {
		if tl.Name == host.ToolSearchName {
			b, err := json.Marshal(tl.Tool)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	return ""
}

// order is the listed tools, in order, as "name server".
func order(list *host.ToolList) []string {
	var out []string
	for _, tl := range list.Tools {
		out = append(out, tl.Name+" "+tl.Server)
	}
	return out
}

func TestToolSearchDefinitionStableAcrossConnectOrder(t *testing.T) {
	linuxOnly(t)
	run := func(t *testing.T, first, second string) (defs []string, final *host.ToolList) {
		dir := t.TempDir()
		gate := func(name string) string { return filepath.Join(dir, name) }
		alpha := gated("alpha", gate("alpha"), "many-tools", "-n", "30")
		alpha.Effective.DeferLoading = boolp(true)
		zeta := gated("zeta", gate("zeta"), "echo")
		zeta.Effective.Tools = map[string]config.ToolConfig{"add": {DeferLoading: boolp(true)}}
		h := newHost(t, cfgOf(zeta, stdio("plain", "echo"), alpha), &host.Options{ToolsWait: -1})

		waitState(t, h, "plain", host.StateConnected, 20*time.Second)
		list := listNow(t, h)
		if len(list.Deferred) != 0 || len(list.Warnings) != 2 {
			t.Fatalf("before the gates open: %d deferred, warnings %v; want none deferred, alpha and zeta not ready", len(list.Deferred), list.Warnings)
		}
		defs = append(defs, searchDef(t, list))
		for _, name := range []string{first, second} {
			open(t, gate(name))
			waitState(t, h, name, host.StateConnected, 20*time.Second)
			defs = append(defs, searchDef(t, listNow(t, h)))
		}
		final = listNow(t, h)
		if len(final.Deferred) != 31 || len(final.Warnings) != 0 {
			t.Fatalf("all up: %d deferred (want 30 of alpha + zeta's add), warnings %v", len(final.Deferred), final.Warnings)
		}
		return defs, final
	}
	defsAZ, listAZ := run(t, "alpha", "zeta")
	defsZA, listZA := run(t, "zeta", "alpha")

	want := defsAZ[len(defsAZ)-1]
	if !strings.Contains(want, `may be deferred: alpha, plain, zeta)`) {
		t.Errorf("tool_search does not name the servers in order: %s", want)
	}
	for i, d := range append(defsAZ, defsZA...) {
		if d != want {
			t.Errorf("tool_search definition #%d differs:\n got %s\nwant %s", i, d, want)
		}
	}
	if d := cmp.Diff(order(listAZ), order(listZA)); d != "" {
		t.Errorf("tool order depends on connect order (-alpha first +zeta first):\n%s", d)
	}
}

// Host.Tools sorts by name whatever order the servers connected in.
func TestToolsOrderIndependentOfConnectOrder(t *testing.T) {
	linuxOnly(t)
	names := []string{"b", "a", "c-srv"}
	run := func(t *testing.T, connect []string) []string {
		dir := t.TempDir()
		var servers []config.ResolvedServer
		for _, n := range names {
			servers = append(servers, gated(n, filepath.Join(dir, n), "echo"))
		}
		h := newHost(t, cfgOf(servers...), &host.Options{ToolsWait: -1})
		for _, n := range connect {
			open(t, filepath.Join(dir, n))
			waitState(t, h, n, host.StateConnected, 20*time.Second)
			listNow(t, h) // list (and cache) as each server arrives
		}
		got := order(listNow(t, h))
		if !slices.IsSorted(got) || len(got) < 3*2 {
			t.Errorf("tools not sorted by name, or too few:\n%s", strings.Join(got, "\n"))
		}
		return got
	}
	first := run(t, []string{"c-srv", "b", "a"})
	if d := cmp.Diff(first, run(t, []string{"a", "c-srv", "b"})); d != "" {
		t.Errorf("tool order depends on connect order (-first +second):\n%s", d)
	}
}

// A deferring server's crash and reconnect leave tool_search as it was,
// listed the whole time, whether the server defers by configuration or
// for its size: while it reconnects its last tools stay listed, deferred
// as they were (issue 29, point 6).
func TestToolSearchDefinitionSurvivesReconnect(t *testing.T) {
	linuxOnly(t)
	cases := []struct {
		name   string
		server func(gate string) config.ResolvedServer
		opts   host.Options
	}{
		{"defer_loading", func(gate string) config.ResolvedServer {
			s := gated("deferring", gate, "echo")
			s.Effective.DeferLoading = boolp(true)
			return s
		}, host.Options{}},
		{"automatic", func(gate string) config.ResolvedServer {
			return gated("deferring", gate, "many-tools", "-n", "300")
		}, host.Options{ContextBudget: 50_000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gate := filepath.Join(t.TempDir(), "gate")
			open(t, gate)
			opts := c.opts
			opts.ToolsWait, opts.Clock = -1, newRecordingClock()
			h := newHost(t, cfgOf(c.server(gate), stdio("plain", "echo")), &opts)
			waitState(t, h, "deferring", host.StateConnected, 20*time.Second)
			waitState(t, h, "plain", host.StateConnected, 20*time.Second)
			before := listNow(t, h)
			want := searchDef(t, before)
			if want == "" || len(before.Deferred) == 0 {
				t.Fatalf("tool_search %q, %d deferred; want the server's tools deferred", want, len(before.Deferred))
			}

			pid := pidIn(t, gate+".pid")
			if err := os.Remove(gate); err != nil {
				t.Fatal(err)
			}
			killPid(t, pid)
			waitState(t, h, "deferring", host.StateConnecting, 10*time.Second)
			during := listNow(t, h)
			if len(during.Deferred) != len(before.Deferred) {
				t.Fatalf("%d deferred while the server reconnects, %d before", len(during.Deferred), len(before.Deferred))
			}
			if got := searchDef(t, during); got != want {
				t.Errorf("while the server reconnects, tool_search =\n%s\nwant\n%s", got, want)
			}
			if d := cmp.Diff(order(before), order(during)); d != "" {
				t.Errorf("the crash changed the tool block (-before +during):\n%s", d)
			}

			open(t, gate)
			waitState(t, h, "deferring", host.StateConnected, 20*time.Second)
			after := listNow(t, h)
			if pidIn(t, gate+".pid") == pid || len(after.Deferred) != len(before.Deferred) {
				t.Fatalf("the server did not come back: %d deferred", len(after.Deferred))
			}
			if got := searchDef(t, after); got != want {
				t.Errorf("after the reconnect, tool_search =\n%s\nwant\n%s", got, want)
			}
			// Down for good (paused), its tools are not searched, and the
			// search says why.
			if err := h.Pause("deferring"); err != nil {
				t.Fatal(err)
			}
			res := mustCall(t, h, host.ToolSearchName, map[string]any{"query": "echo"})
			if !res.IsError || !strings.Contains(textOf(res), "deferring (paused)") {
				t.Errorf("search while the server is paused: isError %v, %q", res.IsError, textOf(res))
			}
		})
	}
}

func pidIn(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %s: %v", file, err)
	}
	return pid
}

// The definition changes when, and only when, the configuration changes
// which servers may defer tools.
func TestToolSearchDefinitionFollowsConfig(t *testing.T) {
	cfg := func(betaDefers bool, betaEnv string) *config.Resolved {
		alpha := stdio("alpha", "echo")
		alpha.Effective.DeferLoading = boolp(true)
		beta := stdio("beta", "echo")
		beta.Effective.Env = map[string]string{"X": betaEnv}
		if betaDefers {
			beta.Effective.DeferLoading = boolp(true)
		}
		return cfgOf(alpha, beta)
	}
	// Automatic deferral off: only defer_loading makes a server a candidate.
	h := newHost(t, cfg(false, "1"), &host.Options{AutoDeferShare: -1})
	first := searchDef(t, toolsOf(t, h))
	if !strings.Contains(first, "may be deferred: alpha)") {
		t.Fatalf("tool_search = %s; want it to name alpha alone", first)
	}

	if res := h.Apply(cfg(false, "2")); len(res.Restarted) != 1 {
		t.Fatalf("Apply = %+v; want beta restarted", res)
	}
	waitState(t, h, "beta", host.StateConnected, 20*time.Second)
	if got := searchDef(t, toolsOf(t, h)); got != first {
		t.Errorf("a change that defers nothing changed tool_search:\n got %s\nwant %s", got, first)
	}

	h.Apply(cfg(true, "2"))
	waitState(t, h, "beta", host.StateConnected, 20*time.Second)
	if got := searchDef(t, toolsOf(t, h)); got == first || !strings.Contains(got, "may be deferred: alpha, beta)") {
		t.Errorf("beta now defers, yet tool_search = %s", got)
	}
}
