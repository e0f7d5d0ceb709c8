//go:build unix

package host_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// A server that stops answering (SIGSTOP) trips its breaker; its tools stay
// listed, a call fails at once with a CircuitOpenError, and once it runs
// again (SIGCONT) the circuit closes within a second of its answer, long
// before the cooldown (issue 16, point 3).
func TestStalledServerCircuitClosesWhenItAnswersAgain(t *testing.T) {
	linuxOnly(t)
	srv := stdio("stall", "echo")
	h := newHost(t, cfgOf(srv), &host.Options{BreakerCooldown: time.Hour})
	waitState(t, h, "stall", host.StateConnected, 20*time.Second)
	pid := pidOf(t, h, "stall")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid)
	stopped := true
	t.Cleanup(func() {
		if stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	timeOutThrice(t, h, "mcp__stall__echo", map[string]any{"text": "x"})
	waitState(t, h, "stall", host.StateCircuitOpen, time.Second)

	list, err := h.Tools(ctxFor(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !hasTool(list, "mcp__stall__echo") {
		t.Errorf("tools of the open circuit not listed: %d tools, warnings %q", len(list.Tools), list.Warnings)
	}
	// The host pings it; once the ping goes unanswered it says so.
	waitFor(t, 10*time.Second, "the open circuit's reason says it is pinged", func() bool {
		_, err := h.Call(ctxFor(t, 10*time.Second), "mcp__stall__echo", map[string]any{"text": "x"})
		var coe *host.CircuitOpenError
		return errors.As(err, &coe) && coe.Watching
	})
	// It fails fast: a call that reached the stopped server would end in
	// ErrTimeout, not in the circuit's refusal.
	_, err = h.Call(ctxFor(t, 10*time.Second), "mcp__stall__echo", map[string]any{"text": "x"})
	var coe *host.CircuitOpenError
	if !errors.As(err, &coe) || !errors.Is(err, host.ErrCircuitOpen) || coe.Server != "stall" || coe.Failures != 3 {
		t.Fatalf("call through the open circuit: %v; want a CircuitOpenError of stall after 3 failures", err)
	}
	if coe.LastFailure == "" || coe.ProbeIn <= 0 {
		t.Errorf("refusal %+v; want the last failure and when it probes", coe)
	}

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	// The pings see it answer again and close the circuit (within
	// waitState's bound; the cooldown is far longer).
	st := waitState(t, h, "stall", host.StateConnected, 5*time.Second)
	if st.Reconnects != 0 {
		t.Errorf("%d reconnects: the same connection should serve again", st.Reconnects)
	}
	mustCall(t, h, "mcp__stall__echo", map[string]any{"text": "back"})
}

// A reconnect closes an open circuit at once: the server killed while its
// circuit is open comes back, and calls work without waiting out the
// cooldown.
func TestReconnectClosesTheCircuit(t *testing.T) {
	linuxOnly(t)
	srv := stdio("stall", "echo")
	clock := newHoldClock() // the reconnect waits until the test advances the clock
	h := newHost(t, cfgOf(srv), &host.Options{BreakerCooldown: time.Hour, Clock: clock})
	waitState(t, h, "stall", host.StateConnected, 20*time.Second)
	pid := pidOf(t, h, "stall")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid)
	timeOutThrice(t, h, "mcp__stall__echo", map[string]any{"text": "x"})
	waitState(t, h, "stall", host.StateCircuitOpen, time.Second)
	killPid(t, pid)
	// While it reconnects a call still fails fast, not after the reconnect,
	// and says so once the host has seen the death (not that the server
	// does not answer pings).
	waitFor(t, 10*time.Second, "a refusal saying the server is being reconnected", func() bool {
		_, err := h.Call(ctxFor(t, 10*time.Second), "mcp__stall__echo", map[string]any{"text": "x"})
		if !errors.Is(err, host.ErrCircuitOpen) {
			t.Fatalf("call while reconnecting: %v, want ErrCircuitOpen", err)
		}
		return strings.Contains(err.Error(), "the call was not made; the server's connection was lost and it is being reconnected: the circuit closes once it is back")
	})
	// The reconnect waits out its backoff (on the clock), not the cooldown.
	clock.waitFor(t, host.Backoff(1))
	clock.Advance(host.Backoff(1))
	waitFor(t, 20*time.Second, "reconnected with the circuit closed", func() bool {
		st := statusOf(h, "stall")
		return st.State == host.StateConnected && st.Reconnects == 1
	})
	mustCall(t, h, "mcp__stall__echo", map[string]any{"text": "back"})
}

// waitStopped waits until the kernel shows pid stopped: kill(2) returns
// before the stop takes effect, and on a busy machine a request sent at
// once could still be answered.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	waitFor(t, 10*time.Second, "the server stopped", func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// The state follows the command name in parentheses.
		i := bytes.LastIndexByte(b, ')')
		return i > 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't')
	})
}

// A crash under several calls in flight is one failure for the breaker,
// not one per call it cut: the circuit stays closed, so the calls made
// while the server reconnects wait for it and run, instead of being
// refused until it is back (the soak's kills under load opened it).
func TestOneCrashIsOneFailure(t *testing.T) {
	linuxOnly(t)
	ledger := filepath.Join(t.TempDir(), "runs")
	// side_effect is no idempotent tool: a call the kill cuts is not
	// retried, and is a failure.
	srv := stdio("crashy", "echo", "-side-effect-file", ledger, "-side-effect-hold", "10s")
	h := newHost(t, cfgOf(srv), nil)
	waitState(t, h, "crashy", host.StateConnected, 20*time.Second)
	pid := pidOf(t, h, "crashy")
	const inFlight = 4 // more than the breaker's threshold (3)
	errs := make(chan error, inFlight)
	for i := range inFlight {
		go func() {
			_, err := h.Call(ctxFor(t, 30*time.Second), "mcp__crashy__side_effect", map[string]any{"note": fmt.Sprint("cut-", i)})
			errs <- err
		}()
	}
	// Every call has run (its line is in the ledger) and holds its answer.
	waitFor(t, 10*time.Second, "every call running on the server", func() bool {
		n, _ := testserver.CountSideEffects(ledger)
		return n == inFlight
	})
	killPid(t, pid)
	for range inFlight {
		if err := <-errs; !errors.Is(err, host.ErrMayHaveRun) {
			t.Fatalf("a call cut by the kill: %v, want ErrMayHaveRun", err)
		}
	}
	if st := statusOf(h, "crashy"); st.State == host.StateCircuitOpen {
		t.Fatalf("one crash under %d calls opened the circuit: %s", inFlight, st.Reason)
	}
	// The next call waits for the reconnect and runs.
	res, err := h.Call(ctxFor(t, 30*time.Second), "mcp__crashy__echo", map[string]any{"text": "after the crash"})
	if err != nil || res.IsError {
		t.Fatalf("the call after the crash: %v %v", err, res)
	}
}

// A remote server that goes away still opens the circuit after three
// failed calls: one crash counting once (TestOneCrashIsOneFailure) is for
// a connection that ended, not for calls that fail one by one.
func TestRemoteServerGoneOpensTheCircuit(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	h := newHost(t, cfgOf(remote("far", config.TypeHTTP, srv.URL)), nil)
	mustCall(t, h, "mcp__far__echo", map[string]any{"text": "up"})
	srv.Close()
	var errs []string
	for range 6 {
		_, err := h.Call(ctxFor(t, 20*time.Second), "mcp__far__echo", map[string]any{"text": "down"})
		if err == nil {
			t.Fatal("a call to a server that is gone succeeded")
		}
		errs = append(errs, err.Error())
		if errors.Is(err, host.ErrCircuitOpen) {
			break
		}
	}
	// Three failures, each saying why (the SDK's own words were only
	// "server error: rejected by transport"), then the circuit.
	if len(errs) != 4 || !strings.Contains(errs[3], "circuit open after 3 consecutive failures") {
		t.Fatalf("calls to a server that is gone:\n%s\nwant three failures, then the circuit open", strings.Join(errs, "\n"))
	}
	// A second later the circuit is still open, and says the server does
	// not answer: the transport's refusal of the host's pings is no answer
	// (it closes the circuit once the server answers again).
	time.Sleep(time.Second)
	if _, err := h.Call(ctxFor(t, 20*time.Second), "mcp__far__echo", map[string]any{"text": "down"}); !errors.Is(err, host.ErrCircuitOpen) || !strings.Contains(err.Error(), "the server does not answer") {
		t.Errorf("a call a second after the circuit opened: %v, want it refused by the open circuit of a server that does not answer", err)
	}
	for _, e := range errs[:3] {
		// The cause: "connection refused", or EOF on a kept-alive
		// connection the server closed.
		// net/http's `Post "URL": ` is not said: a URL may hold a credential.
		if !strings.Contains(e, `the request did not go through (`) || strings.Contains(e, srv.URL) {
			t.Errorf("a call to a server that is gone: %s; want it to say the request did not go through, and why", e)
		}
	}
}
