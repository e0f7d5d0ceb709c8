package host_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// killDuring starts a call, kills the server's process while the call is in
// flight (at its first progress notification, or 300 ms in for a tool that
// sends none), and returns the call's outcome.
func killDuring(t *testing.T, h *host.Host, server, tool string, args map[string]any) (string, error) {
	t.Helper()
	pid := pidOf(t, h, server)
	type outcome struct {
		text string
		err  error
	}
	done := make(chan outcome, 1)
	running := make(chan struct{}, 1)
	ctx := host.WithProgress(ctxFor(t, 30*time.Second), func(*mcp.ProgressNotificationParams) {
		select {
		case running <- struct{}{}:
		default:
		}
	})
	go func() {
		res, err := h.Call(ctx, "mcp__"+server+"__"+tool, args)
		if err != nil {
			done <- outcome{"", err}
			return
		}
		done <- outcome{textOf(res), nil}
	}()
	select { // the request is on the wire
	case <-running:
	case <-time.After(300 * time.Millisecond):
	}
	killPid(t, pid)
	select {
	case o := <-done:
		return o.text, o.err
	case <-time.After(20 * time.Second):
		t.Fatal("call hung after its server was killed")
	}
	return "", nil
}

// A call cut by a dropped connection is never silently run twice: a tool
// without idempotentHint fails with ErrMayHaveRun, within a second.
func TestNonIdempotentCallIsNotRetried(t *testing.T) {
	linuxOnly(t)
	h := newHost(t, cfgOf(stdio("srv", "hang-call")), &host.Options{Clock: newRecordingClock()})
	// Cut by the kill, not by a timeout (killDuring fails the test if the
	// call outlives the kill by its bound).
	_, err := killDuring(t, h, "srv", "hang", map[string]any{})
	if !errors.Is(err, host.ErrMayHaveRun) || errors.Is(err, host.ErrTimeout) {
		t.Fatalf("err = %v, want ErrMayHaveRun", err)
	}
	if !strings.Contains(err.Error(), "may or may not have run") {
		t.Errorf("message %q does not say the call may have run", err)
	}
	// The server comes back for later calls.
	waitState(t, h, "srv", host.StateConnected, 20*time.Second)
}

// An idempotent tool cut by a dropped connection is retried once after the
// reconnect and succeeds.
func TestIdempotentCallIsRetriedOnce(t *testing.T) {
	linuxOnly(t)
	clock := newRecordingClock()
	h := newHost(t, cfgOf(stdio("srv", "echo")), &host.Options{Clock: clock})
	// A progress notification every 100 ms: the kill comes at the first.
	text, err := killDuring(t, h, "srv", "slow", map[string]any{"ms": 800, "steps": 8})
	if err != nil {
		t.Fatalf("idempotent call after a kill: %v", err)
	}
	if !strings.Contains(text, "slept 800 ms") {
		t.Errorf("result = %q", text)
	}
	if st := statusOf(h, "srv"); st.Reconnects != 1 {
		t.Errorf("reconnects = %d, want 1", st.Reconnects)
	}
}

// A request that never reached the server (it died before the write) is
// retried after the reconnect, and runs exactly once.
func TestUnwrittenCallRunsOnce(t *testing.T) {
	linuxOnly(t)
	effects := filepath.Join(t.TempDir(), "effects")
	s := stdio("srv", "echo")
	s.Effective.Env = map[string]string{testserver.SideEffectEnv: effects}
	h := newHost(t, cfgOf(s), &host.Options{Clock: newRecordingClock()})
	pid := pidOf(t, h, "srv")
	killPid(t, pid)
	// Wait until it is reaped, not just a zombie: a dying process's other
	// threads can hold its file table (and so the pipe) a moment longer.
	for deadline := time.Now().Add(5 * time.Second); exists(pid); {
		if time.Now().After(deadline) {
			t.Fatal("killed server still alive")
		}
		time.Sleep(time.Millisecond)
	}
	// The server is dead before the call starts. Whether the host has noticed the death yet or not, the call must
	// either wait for the reconnect or find its write refused: both end in
	// one run.
	res, err := h.Call(ctxFor(t, 20*time.Second), "mcp__srv__side_effect", map[string]any{"note": "once"})
	if err != nil {
		t.Fatalf("call after kill: %v", err)
	}
	n, err := testserver.CountSideEffects(effects)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("side effect ran %d times (%q), want exactly 1", n, textOf(res))
	}
	_ = os.Remove(effects)
}

func exists(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// Close under a call of an idempotent tool ends the call at once with
// ErrClosed: the cut connection never comes back, so the retry after a
// reconnect must not wait for one until the caller's deadline.
func TestCloseEndsACallWaitingForAReconnect(t *testing.T) {
	linuxOnly(t)
	h := newHost(t, cfgOf(stdio("srv", "echo")), nil)
	running := make(chan struct{}, 1)
	ctx := host.WithProgress(ctxFor(t, 60*time.Second), func(*mcp.ProgressNotificationParams) {
		select {
		case running <- struct{}{}:
		default:
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, "mcp__srv__slow", map[string]any{"ms": 30000, "steps": 300})
		done <- err
	}()
	select { // the request is on the wire
	case <-running:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress from slow")
	}
	h.Close()
	select {
	case err := <-done:
		if !errors.Is(err, host.ErrClosed) {
			t.Errorf("call cut by Close: err = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call still waiting 5 s after Close")
	}
}

// Close while a call waits for its server to finish connecting ends the
// call at once too.
func TestCloseEndsACallWaitingForAStart(t *testing.T) {
	linuxOnly(t)
	h := newHost(t, cfgOf(stdio("srv", "slow-start", "-until-file", filepath.Join(t.TempDir(), "never"))), nil)
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(ctxFor(t, 60*time.Second), "mcp__srv__echo", map[string]any{"text": "hi"})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // the call waits for the start
	h.Close()
	select {
	case err := <-done:
		if !errors.Is(err, host.ErrClosed) {
			t.Errorf("call cut by Close: err = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call still waiting 5 s after Close")
	}
}
