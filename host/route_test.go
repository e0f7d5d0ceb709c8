package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// Two servers whose names sanitize alike ("a.b" and "a_b") claim the same
// model-facing names: both are in error from the start (which connects
// first plays no part), calls never reach either however often they are
// made, and once one is removed the other registers its names and serves
// them.
func TestRoutingCollisionAcrossServersAndRecovery(t *testing.T) {
	dot, under := stdio("a.b", "echo"), stdio("a_b", "echo")
	h := newHost(t, cfgOf(dot, under), nil)
	ctx := ctxFor(t, 30*time.Second)
	if _, err := h.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if res, err := h.Call(ctx, "mcp__a_b__echo", map[string]any{"text": "hi"}); err == nil {
			t.Fatalf("echo reached a refused server: %q", textOf(res))
		}
	}
	for _, name := range []string{"a.b", "a_b"} {
		if st := statusOf(h, name); st.State != host.StateError || !strings.Contains(st.Reason, `"a.b", "a_b"`) || st.Stats.Calls != 0 {
			t.Fatalf("%s is %s (%s) with %d calls; want error naming both, never called", name, st.State, st.Reason, st.Stats.Calls)
		}
	}

	h.Apply(cfgOf(under))
	var st host.ServerStatus
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := h.Call(ctx, "mcp__a_b__echo", map[string]any{"text": "again"}); err == nil {
			st = statusOf(h, "a_b")
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("after removing a.b, a_b's tool is not callable: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.State != host.StateConnected || st.Stats.Calls == 0 {
		t.Errorf("after removing a.b, a_b is %s (%s) with %d calls; want it connected and called", st.State, st.Reason, st.Stats.Calls)
	}
}
