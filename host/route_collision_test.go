package host_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// claimant is a real echo server that also serves tool under its own name,
// started after delay (0: at once), appending its pid to pidFile when it
// serves: an empty file proves the process never served anything.
func claimant(name, tool string, delay time.Duration, pidFile string) config.ResolvedServer {
	args := []string{"-tool", tool, "-pid-file", pidFile}
	if delay == 0 {
		return stdio(name, "echo", args...)
	}
	return stdio(name, "slow-start", append(args, "-delay", delay.String())...)
}

func servedPids(t *testing.T, pidFile string) string {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// allowOnly is a headless permit whose one allow rule is rule: every
// other call is asked for, and so refused.
func allowOnly(rule string) host.Permit {
	return host.PolicyPermit(policy.New(policy.NewRule(policy.Allow, rule, policy.Source{Scope: policy.ScopeUser})), nil)
}

// Issue 22, hole 4, as the attack was written: server a with tool b__c
// and server a__b with tool c both become mcp__a__b__c. Whichever starts
// first (each run delays the other one), a__b is refused — its name holds
// "__", so rules and tool names cannot tell its tools from a's — and never
// even starts; a's tool answers the name, the one allow rule allows a's
// tool only, and nothing reaches a__b, not its other tools either.
func TestCollidingServersOutcomeDoesNotDependOnConnectOrder(t *testing.T) {
	const runs = 6
	outcomes := make([]string, runs)
	t.Run("runs", func(t *testing.T) {
		for i := range runs {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel() // each run has a host and servers of its own
				dir := t.TempDir()
				aPids, abPids := filepath.Join(dir, "a.pids"), filepath.Join(dir, "ab.pids")
				var aDelay, abDelay time.Duration
				if i%2 == 0 {
					aDelay = 300 * time.Millisecond // a__b would be first
				} else {
					abDelay = 300 * time.Millisecond // a would be first
				}
				h := newHost(t, cfgOf(claimant("a", "b__c", aDelay, aPids), claimant("a__b", "c", abDelay, abPids)),
					&host.Options{Permit: allowOnly("mcp__a__b__c")})
				ctx := ctxFor(t, 30*time.Second)
				if !h.WaitReady(ctx) {
					t.Fatal("servers did not settle")
				}
				list, err := h.Tools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				claimants := 0
				for _, tl := range list.Tools {
					if tl.Name == "mcp__a__b__c" {
						claimants++
						if tl.Server != "a" || tl.Tool.Name != "b__c" {
							t.Errorf("run %d: mcp__a__b__c is listed for %s's %q, want a's b__c", i, tl.Server, tl.Tool.Name)
						}
					}
				}
				if claimants != 1 {
					t.Errorf("run %d: mcp__a__b__c is listed %d times, want once", i, claimants)
				}

				res, err := h.Call(ctx, "mcp__a__b__c", map[string]any{"text": "hi"})
				answer := ""
				if err != nil {
					answer = "error: " + err.Error()
				} else {
					answer = textOf(res)
				}
				if answer != "b__c: hi" {
					t.Errorf("run %d: mcp__a__b__c answered %q, want a's tool (b__c: hi)", i, answer)
				}
				// The server in error answers nothing: not the contested tool by
				// its own names, not its other tools.
				for _, try := range []func() error{
					func() error { _, err := h.CallTool(ctx, "a__b", "c", map[string]any{"text": "x"}); return err },
					func() error { _, err := h.CallTool(ctx, "a__b", "echo", map[string]any{"text": "x"}); return err },
					func() error { _, err := h.Call(ctx, "mcp__a__b__echo", map[string]any{"text": "x"}); return err },
				} {
					if err := try(); err == nil {
						t.Errorf("run %d: a call reached server a__b, which is in error", i)
					}
				}
				ab, a := statusOf(h, "a__b"), statusOf(h, "a")
				if ab.State != host.StateError || !strings.Contains(ab.Reason, `"a__b"`) {
					t.Errorf("run %d: a__b is %s (%s), want error naming it", i, ab.State, ab.Reason)
				}
				if ab.Stats.Calls != 0 || servedPids(t, abPids) != "" {
					t.Errorf("run %d: server a__b ran (pids %q) or was called (%d calls)", i, servedPids(t, abPids), ab.Stats.Calls)
				}
				if a.State != host.StateConnected {
					t.Errorf("run %d: a is %s (%s), want connected", i, a.State, a.Reason)
				}
				outcomes[i] = fmt.Sprintf("a=%s a__b=%s (%s) answer=%q", a.State, ab.State, ab.Reason, answer)
				h.Close()
			})
		}
	})
	for i, o := range outcomes {
		if o != outcomes[0] {
			t.Errorf("run %d's outcome differs from run 0's:\n %s\n %s", i, o, outcomes[0])
		}
	}
}

// A repository's server must never shadow a name the user allowed for
// their own server: the user's a with b__c allowed, and a project-scope
// a__b with tool c, approved (here every server is) or not. The repository
// server never runs, and the user's rule never allows its tool, even when
// it is the only claimant of the name (the user's own server is off).
func TestRepoServerCannotShadowUserAllowedName(t *testing.T) {
	dir := t.TempDir()
	abPids := filepath.Join(dir, "ab.pids")
	user := claimant("a", "b__c", 0, filepath.Join(dir, "a.pids"))
	repo := claimant("a__b", "c", 0, abPids)
	repo.Scope, repo.Trust, repo.File = config.ScopeProject, config.TrustRepo, "/repo/.mcp.json"
	approveAll := func(*config.ResolvedServer) (host.State, string) { return "", "" }
	permit := allowOnly("mcp__a__b__c")

	for _, tc := range []struct {
		name    string
		servers []config.ResolvedServer
		gate    host.Gate
	}{
		{"both, repo approved", []config.ResolvedServer{user, repo}, approveAll},
		{"both, repo not approved", []config.ResolvedServer{repo, user}, nil},
		{"the repo's alone, approved", []config.ResolvedServer{repo}, approveAll},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, cfgOf(tc.servers...), &host.Options{Permit: permit, Gate: tc.gate})
			ctx := ctxFor(t, 30*time.Second)
			if !h.WaitReady(ctx) {
				t.Fatal("servers did not settle")
			}
			res, err := h.Call(ctx, "mcp__a__b__c", map[string]any{"text": "hi"})
			if len(tc.servers) == 2 {
				if err != nil || textOf(res) != "b__c: hi" {
					t.Errorf("the user's tool: %v, %q; want a's answer", err, textOf(res))
				}
			} else if err == nil {
				t.Errorf("with the user's server off, mcp__a__b__c reached %q", textOf(res))
			}
			if _, err := h.CallTool(ctx, "a__b", "c", map[string]any{"text": "x"}); err == nil {
				t.Error("the repository's tool c ran")
			}
			if st := statusOf(h, "a__b"); st.State != host.StateError || servedPids(t, abPids) != "" {
				t.Errorf("the repository's a__b is %s (%s), pids %q; want error, never started", st.State, st.Reason, servedPids(t, abPids))
			}
		})
	}
	// And the rule itself, whatever runs: it names (a, b__c), not (a__b, c).
	d := policy.New(policy.NewRule(policy.Allow, "mcp__a__b__c", policy.Source{Scope: policy.ScopeUser})).
		Decide(policy.Request{Tool: "mcp__a__b__c", Server: "a__b", ToolName: "c"})
	if d.Action == policy.Allow {
		t.Errorf("allow mcp__a__b__c allows server a__b's tool c: %s", d.Reason)
	}
}

// Names equal once folded (case, - and . as _) are one name to every rule:
// my-srv and my_srv are both refused, whichever starts first, on a fresh
// start and when a reload brings the second one in; removing one lets the
// other run.
func TestFoldedTwinServersAreBothRefused(t *testing.T) {
	for i := range 4 {
		dir := t.TempDir()
		dashPids, underPids := filepath.Join(dir, "dash"), filepath.Join(dir, "under")
		var d1, d2 time.Duration
		if i%2 == 0 {
			d1 = 200 * time.Millisecond
		} else {
			d2 = 200 * time.Millisecond
		}
		dash, under := claimant("my-srv", "x", d1, dashPids), claimant("my_srv", "x", d2, underPids)
		h := newHost(t, cfgOf(dash, under), nil)
		ctx := ctxFor(t, 30*time.Second)
		if !h.WaitReady(ctx) {
			t.Fatal("servers did not settle")
		}
		for _, n := range []string{"mcp__my-srv__x", "mcp__my_srv__x", "mcp__my_srv__echo"} {
			if res, err := h.Call(ctx, n, map[string]any{"text": "x"}); err == nil {
				t.Errorf("run %d: %s answered %q; both servers must be refused", i, n, textOf(res))
			}
		}
		for _, n := range []string{"my-srv", "my_srv"} {
			st := statusOf(h, n)
			if st.State != host.StateError || !strings.Contains(st.Reason, `"my-srv", "my_srv"`) {
				t.Errorf("run %d: %s is %s (%s), want error naming both", i, n, st.State, st.Reason)
			}
		}
		if servedPids(t, dashPids)+servedPids(t, underPids) != "" {
			t.Errorf("run %d: a refused server started", i)
		}
		h.Close()
	}

	// A reload that adds a twin stops the running one too.
	dir := t.TempDir()
	under := claimant("my_srv", "x", 0, filepath.Join(dir, "under"))
	dash := claimant("my-srv", "x", 0, filepath.Join(dir, "dash"))
	h := newHost(t, cfgOf(under), nil)
	ctx := ctxFor(t, 30*time.Second)
	if res := mustCall(t, h, "mcp__my_srv__x", map[string]any{"text": "1"}); textOf(res) != "x: 1" {
		t.Fatalf("before the twin: %q", textOf(res))
	}
	h.Apply(cfgOf(under, dash))
	if _, err := h.Call(ctx, "mcp__my_srv__x", map[string]any{"text": "2"}); err == nil {
		t.Error("after a twin was added, my_srv still answers")
	}
	if st := statusOf(h, "my_srv"); st.State != host.StateError {
		t.Errorf("after a twin was added, my_srv is %s (%s)", st.State, st.Reason)
	}
	h.Apply(cfgOf(dash))
	waitState(t, h, "my-srv", host.StateConnected, 10*time.Second)
	if res := mustCall(t, h, "mcp__my-srv__x", map[string]any{"text": "3"}); textOf(res) != "x: 3" {
		t.Errorf("after the twin left: %q", textOf(res))
	}
}

// A reload that adds a__b next to a running a refuses a__b and leaves a
// answering its tool.
func TestReloadAddingAmbiguousServerKeepsTheOther(t *testing.T) {
	dir := t.TempDir()
	a := claimant("a", "b__c", 0, filepath.Join(dir, "a"))
	ab := claimant("a__b", "c", 0, filepath.Join(dir, "ab"))
	h := newHost(t, cfgOf(a), nil)
	ctx := ctxFor(t, 30*time.Second)
	mustCall(t, h, "mcp__a__b__c", map[string]any{"text": "1"})
	h.Apply(cfgOf(a, ab))
	h.WaitReady(ctx)
	if res := mustCall(t, h, "mcp__a__b__c", map[string]any{"text": "2"}); textOf(res) != "b__c: 2" {
		t.Errorf("after the reload mcp__a__b__c answered %q", textOf(res))
	}
	if st := statusOf(h, "a__b"); st.State != host.StateError || servedPids(t, filepath.Join(dir, "ab")) != "" {
		t.Errorf("a__b is %s (%s); want error, never started", st.State, st.Reason)
	}
}
