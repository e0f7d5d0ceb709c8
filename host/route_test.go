package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// Two servers whose names sanitize alike ("a.b" and "a_b") claim the same
// model-facing names: the one that registers second is in error, calls keep
// reaching the first however often they are made (a call must never
// re-route or clear the collision), and once the first server is removed
// the second registers its names and serves them.
func TestRoutingCollisionAcrossServersAndRecovery(t *testing.T) {
	dot, under := stdio("a.b", "echo"), stdio("a_b", "echo")
	h := newHost(t, cfgOf(dot, under), nil)
	ctx := ctxFor(t, 30*time.Second)
	if _, err := h.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	var winner, loser string
	for _, name := range []string{"a.b", "a_b"} {
		st := statusOf(h, name)
		switch {
		case st.State == host.StateConnected:
			winner = name
		case st.State == host.StateError && strings.Contains(st.Reason, "collide"):
			loser = name
		}
	}
	if winner == "" || loser == "" {
		t.Fatalf("want one server connected and one in error for colliding names; got %+v and %+v", statusOf(h, "a.b"), statusOf(h, "a_b"))
	}
	for range 5 {
		res := mustCall(t, h, "mcp__a_b__echo", map[string]any{"text": "hi"})
		if textOf(res) != "hi" {
			t.Fatalf("echo = %q", textOf(res))
		}
		if st := statusOf(h, loser); st.State != host.StateError {
			t.Fatalf("after a call, the colliding server %s is %s (%s), want error", loser, st.State, st.Reason)
		}
	}
	if st := statusOf(h, winner); st.Stats.Calls != 5 {
		t.Errorf("server %s got %d calls, want all 5", winner, st.Stats.Calls)
	}

	keep := dot
	if loser == "a_b" {
		keep = under
	}
	h.Apply(cfgOf(keep))
	var st host.ServerStatus
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := h.Call(ctx, "mcp__a_b__echo", map[string]any{"text": "again"}); err == nil {
			st = statusOf(h, loser)
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("after removing %s, %s's tool is not callable: %v", winner, loser, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.State != host.StateConnected || st.Stats.Calls == 0 {
		t.Errorf("after removing %s, %s is %s (%s) with %d calls; want it connected and called", winner, loser, st.State, st.Reason, st.Stats.Calls)
	}
}
