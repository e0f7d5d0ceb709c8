package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// The tests of a runtime that recovers (issue 29): failed starts are tried
// again, a server reconnecting keeps its tools listed, and a connect that
// fails for reasons of its own is not tried a second time pinned to an
// older protocol revision.

// starts reads the counter a test server's -state file keeps; -1 while
// the server is writing it.
func starts(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %q", file, b)
	}
	return n
}

// A server that exits at once, before reading anything, is started once:
// it is not tried again pinned to an older protocol revision, which only
// doubled its time to the error (issue 29, point 4). The one that needs
// the pin still gets it (TestDiscoverKillRetriesPinned).
func TestExitAtOnceIsNotRetriedPinned(t *testing.T) {
	file := filepath.Join(t.TempDir(), "starts")
	// The hold clock keeps the next try (a second later) from coming.
	h := newHost(t, cfgOf(stdio("broken", "exit-init", "-state", file)), &host.Options{Clock: newHoldClock()})
	st := waitState(t, h, "broken", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "fatal: cannot open database") {
		t.Errorf("reason %q", st.Reason)
	}
	if n := starts(t, file); n != 1 {
		t.Errorf("the server was started %d times for one try, want 1", n)
	}
}

// A remote server that answers 401 is asked once per try (server/discover,
// then initialize): no pinned retry (issue 29, point 4).
func TestUnauthorizedIsNotRetriedPinned(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{RequireHeader: "Authorization: Bearer right"})
	h := newHost(t, cfgOf(remote("locked", config.TypeHTTP, srv.URL)), &host.Options{Clock: newHoldClock()})
	st := waitState(t, h, "locked", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "Unauthorized") {
		t.Errorf("reason %q", st.Reason)
	}
	if n := srv.Requests(); n != 2 {
		t.Errorf("%d requests for one try, want 2 (server/discover and initialize)", n)
	}
}

// A server that misses its startup timeout once (a busy machine) is tried
// again after the first backoff, and status says when (issue 29, point
// 16: a 51-server gateway kept serving 3 servers for the rest of its life).
func TestMissedStartupTimeoutIsRetried(t *testing.T) {
	file := filepath.Join(t.TempDir(), "starts")
	late := stdio("late", "slow-start", "-delay", "1h", "-state", file, "-slow", "1")
	late.Effective.StartupTimeout = 2000 // ms: the second start must make it, on a busy machine
	clock := newHoldClock()
	h := newHost(t, cfgOf(late), &host.Options{Clock: clock, CloseGrace: hungGrace})
	st := waitState(t, h, "late", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "no answer to initialize within 2s") {
		t.Errorf("reason %q; want the timeout", st.Reason)
	}
	if wait := st.NextTry.Sub(clock.Now()); wait <= 0 || wait > time.Second {
		t.Errorf("next try %v from now, want within the first backoff (1s)", wait)
	}
	clock.waitFor(t, time.Second)
	clock.Advance(time.Second)
	st = waitState(t, h, "late", host.StateConnected, 20*time.Second)
	if !st.NextTry.IsZero() {
		t.Errorf("connected with a next try at %v", st.NextTry)
	}
	mustCall(t, h, "mcp__late__echo", map[string]any{"text": "back"})
	if n := starts(t, file); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

// Failed starts are tried again like lost connections, 1 s, 2 s and 4 s
// apart, and then every RetryInterval (5 min) for as long as the host runs;
// the server stays in error meanwhile, its reason saying when the next try
// is.
func TestFailedStartRetrySchedule(t *testing.T) {
	file := filepath.Join(t.TempDir(), "starts")
	clock := newHoldClock()
	h := newHost(t, cfgOf(stdio("broken", "exit-init", "-state", file)), &host.Options{Clock: clock})
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, host.DefaultRetryInterval, host.DefaultRetryInterval} {
		waitFor(t, 20*time.Second, fmt.Sprintf("start %d", i+1), func() bool { return starts(t, file) == i+1 })
		st := waitState(t, h, "broken", host.StateError, 20*time.Second)
		waitFor(t, 20*time.Second, fmt.Sprintf("the wait after start %d", i+1), func() bool {
			st = statusOf(h, "broken")
			wait := st.NextTry.Sub(clock.Now())
			return wait > d-time.Second && wait <= d
		})
		if st.State != host.StateError || !strings.HasSuffix(st.Reason, "fatal: cannot open database") {
			t.Errorf("after start %d: %s (%s)", i+1, st.State, st.Reason)
		}
		clock.Advance(d)
	}
	waitFor(t, 20*time.Second, "start 6", func() bool { return starts(t, file) == 6 })
}

// Resume starts a server in error at once (the gateway's admin resume said
// "resumed" and left it down); a running one is left alone, and one that
// cannot start says why (issue 29, point 16).
func TestResumeStartsAFailedServer(t *testing.T) {
	file := filepath.Join(t.TempDir(), "starts")
	late := stdio("late", "slow-start", "-delay", "1h", "-state", file, "-slow", "1")
	late.Effective.StartupTimeout = 2000 // ms: the second start must make it, on a busy machine
	off := stdio("off", "echo")
	off.Availability, off.DisabledReason = config.Disabled, "enabled: false in mcp.json"
	h := newHost(t, cfgOf(late, off), &host.Options{Clock: newHoldClock(), CloseGrace: hungGrace})
	waitState(t, h, "late", host.StateError, 20*time.Second)
	if err := h.Resume("late"); err != nil {
		t.Fatalf("resume: %v", err)
	}
	// The next try is held on the clock: only Resume can have started it.
	waitState(t, h, "late", host.StateConnected, 20*time.Second)
	pid := pidOf(t, h, "late")
	if err := h.Resume("late"); err != nil {
		t.Errorf("resume of a connected server: %v", err)
	}
	if got := pidOf(t, h, "late"); got != pid {
		t.Errorf("resume restarted a connected server: pid %d, then %d", pid, got)
	}
	err := h.Resume("off")
	if !errors.Is(err, host.ErrNotConnected) || !strings.Contains(err.Error(), "off is disabled: enabled: false in mcp.json") {
		t.Errorf("resume of a disabled server: %v", err)
	}
}

// A server that lost its connection keeps its last tools listed while it
// reconnects, at once, without the wait for connecting servers; a call
// waits for it within its timeout, and fails with a readable error, not
// "unknown tool", when it is not back by then (issue 29, point 6).
func TestReconnectingServerKeepsItsTools(t *testing.T) {
	linuxOnly(t)
	clock := newHoldClock()
	h := newHost(t, cfgOf(stdio("back", "echo"), stdio("other", "echo")), &host.Options{Clock: clock})
	pid := pidOf(t, h, "back")
	killPid(t, pid)
	st := waitState(t, h, "back", host.StateConnecting, 20*time.Second)
	if !st.Reconnecting || st.Tools == 0 || !strings.Contains(st.Reason, "reconnect 1/3") || !strings.Contains(st.Reason, "its last lists stay served") {
		t.Errorf("status while reconnecting: %+v", st)
	}
	// Held on the clock, the reconnect waits: the list does not.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	list, err := h.Tools(ctx)
	if err != nil {
		t.Fatalf("tools while a server reconnects: %v (the list waited for it)", err)
	}
	if !hasTool(list, "mcp__back__echo") || !hasTool(list, "mcp__other__echo") {
		t.Errorf("tools while back reconnects: %d tools, warnings %q", len(list.Tools), list.Warnings)
	}
	dctx, dcancel := host.WithCallDeadline(ctxFor(t, 10*time.Second), time.Now().Add(300*time.Millisecond))
	defer dcancel()
	_, err = h.Call(dctx, "mcp__back__echo", map[string]any{"text": "x"})
	if !errors.Is(err, host.ErrNotConnected) || errors.Is(err, host.ErrUnknownTool) || !strings.Contains(err.Error(), "back is reconnecting") {
		t.Errorf("call past its deadline while back reconnects: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		res, err := h.Call(ctxFor(t, 20*time.Second), "mcp__back__echo", map[string]any{"text": "waited"})
		if err == nil && textOf(res) != "waited" {
			err = fmt.Errorf("echo answered %q", textOf(res))
		}
		done <- err
	}()
	clock.waitFor(t, time.Second)
	clock.Advance(time.Second)
	if err := <-done; err != nil {
		t.Errorf("call made while back reconnected: %v", err)
	}
	if st := statusOf(h, "back"); st.State != host.StateConnected || st.Reconnecting || st.Reconnects != 1 {
		t.Errorf("after the reconnect: %+v", st)
	}
}

// A server whose calls stall while it still answers pings (its backend
// hangs for a while) is probed by a real call after seconds, not after
// minutes: the first cooldown is 5 s on the host's clock, and the probe
// that works closes the circuit (issue 29, point 7: a 25 s stall cost 5
// minutes of refused calls). Status shows the probe's time as NextTry,
// the time the refusal names, and says connected once it has come.
func TestStalledCallsAreProbedWithinSeconds(t *testing.T) {
	clock := newHoldClock()
	h := newHost(t, cfgOf(stdio("busy", "echo")), &host.Options{Clock: clock})
	waitState(t, h, "busy", host.StateConnected, 20*time.Second)
	timeOutThrice(t, h, "mcp__busy__slow", map[string]any{"ms": 5000})
	st := waitState(t, h, "busy", host.StateCircuitOpen, time.Second)
	_, err := h.Call(ctxFor(t, 10*time.Second), "mcp__busy__echo", map[string]any{"text": "x"})
	var coe *host.CircuitOpenError
	if !errors.As(err, &coe) || coe.Watching {
		t.Fatalf("call through the open circuit: %v; want a refusal, not watching (it answers pings)", err)
	}
	const firstCooldown = 5 * time.Second
	if coe.ProbeIn <= 0 || coe.ProbeIn > firstCooldown || !strings.Contains(err.Error(), "probes it") {
		t.Errorf("refusal %q: the next probe in %v, want within the first cooldown (%v)", err, coe.ProbeIn, firstCooldown)
	}
	if !st.NextTry.Equal(coe.ProbeAt) || !strings.Contains(st.Reason, "next probe in ") {
		t.Errorf("status %s (%s), next try %v; the refusal names %v", st.State, st.Reason, st.NextTry, coe.ProbeAt)
	}
	clock.Advance(firstCooldown)
	if st := statusOf(h, "busy"); st.State != host.StateConnected || !st.NextTry.IsZero() {
		t.Errorf("after the cooldown: %s (%s), next try %v; want connected (the next call is the probe)", st.State, st.Reason, st.NextTry)
	}
	if res := mustCall(t, h, "mcp__busy__echo", map[string]any{"text": "probe"}); textOf(res) != "probe" {
		t.Errorf("probe answered %q", textOf(res))
	}
	mustCall(t, h, "mcp__busy__echo", map[string]any{"text": "closed"})
}
