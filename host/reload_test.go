package host_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// Live reload restarts only what changed: an unchanged server keeps its
// process and session, a changed one gets a new process, a new one starts,
// a removed one is stopped and reaped.
func TestApplyRestartsOnlyWhatChanged(t *testing.T) {
	linuxOnly(t)
	keep, change, drop := stdio("keep", "echo"), stdio("change", "echo"), stdio("drop", "echo")
	h := newHost(t, cfgOf(keep, change, drop), nil)
	keepPid, changePid, dropPid := pidOf(t, h, "keep"), pidOf(t, h, "change"), pidOf(t, h, "drop")

	changed := stdio("change", "echo", "-instructions", "now different")
	added := stdio("added", "demo")
	res := h.Apply(cfgOf(keep, changed, added))
	want := host.ApplyResult{Added: []string{"added"}, Removed: []string{"drop"}, Restarted: []string{"change"}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Apply (-want +got):\n%s", diff)
	}
	if got := pidOf(t, h, "keep"); got != keepPid {
		t.Errorf("unchanged server was restarted: pid %d → %d", keepPid, got)
	}
	if st := statusOf(h, "keep"); st.Reconnects != 0 {
		t.Errorf("unchanged server reconnected %d times", st.Reconnects)
	}
	if got := pidOf(t, h, "change"); got == changePid {
		t.Errorf("changed server kept its old process %d", got)
	}
	if alive(changePid) || alive(dropPid) {
		t.Errorf("old processes survive: change %d alive=%v, drop %d alive=%v", changePid, alive(changePid), dropPid, alive(dropPid))
	}
	mustCall(t, h, "mcp__added__add", map[string]any{"a": 1, "b": 2})
	if st := statusOf(h, "drop"); st.Name != "" {
		t.Errorf("removed server still in status: %+v", st)
	}
	if _, err := h.Call(ctxFor(t, 5*time.Second), "mcp__drop__echo", map[string]any{"text": "x"}); err == nil {
		t.Error("a removed server's tool can still be called")
	}
	// Applying the same configuration again changes nothing.
	if res := h.Apply(cfgOf(keep, changed, added)); res.Changed() {
		t.Errorf("re-applying the same config: %+v", res)
	}
}

// A server held by launch trust is asked again on Apply, so an approval
// granted meanwhile starts it; a paused server stays paused across a change.
func TestApplyRegatesAndKeepsPause(t *testing.T) {
	approved := false
	gate := func(s *config.ResolvedServer) (host.State, string) {
		if s.Name == "repo" && !approved {
			return host.StateNeedsApproval, "not approved"
		}
		return "", ""
	}
	repo, paused := stdio("repo", "echo"), stdio("paused", "echo")
	h := newHost(t, cfgOf(repo, paused), &host.Options{Gate: gate})
	waitState(t, h, "repo", host.StateNeedsApproval, 5*time.Second)
	waitState(t, h, "paused", host.StateConnected, 20*time.Second)
	if err := h.Pause("paused"); err != nil {
		t.Fatal(err)
	}
	approved = true
	res := h.Apply(cfgOf(repo, stdio("paused", "echo", "-instructions", "changed")))
	if diff := cmp.Diff([]string{"repo"}, res.Regated); diff != "" {
		t.Errorf("regated (-want +got):\n%s", diff)
	}
	waitState(t, h, "repo", host.StateConnected, 20*time.Second)
	waitState(t, h, "paused", host.StatePaused, time.Second)
	if err := h.Resume("paused"); err != nil {
		t.Fatal(err)
	}
	waitState(t, h, "paused", host.StateConnected, 20*time.Second)
}

// Status counts the tools a server's last listing held back for tool_search.
func TestStatusCountsDeferredTools(t *testing.T) {
	yes := true
	lazy := stdio("lazy", "echo")
	lazy.Effective.DeferLoading = &yes
	h := newHost(t, cfgOf(lazy, stdio("eager", "echo")), nil)
	list, err := h.Tools(ctxFor(t, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	lz, eg := statusOf(h, "lazy"), statusOf(h, "eager")
	if lz.Deferred == 0 || lz.Deferred != lz.Tools || lz.Deferred != len(list.Deferred) {
		t.Errorf("lazy: %d of %d tools deferred, listing deferred %d", lz.Deferred, lz.Tools, len(list.Deferred))
	}
	if eg.Deferred != 0 {
		t.Errorf("eager: %d tools deferred", eg.Deferred)
	}
	// Activating one through tool_search leaves one fewer held back.
	h.Activate(list.Deferred[0].Name)
	if _, err := h.Tools(ctxFor(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := statusOf(h, "lazy").Deferred; got != lz.Deferred-1 {
		t.Errorf("after activating one: %d deferred, want %d", got, lz.Deferred-1)
	}
}
