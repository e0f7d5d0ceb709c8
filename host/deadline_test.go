package host_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// A call retried after a dropped connection keeps its original deadline
// (issue 16): before, the retry got a fresh timeout, so a call could run
// for twice its timeout and more. The host's clock is moved past the
// deadline while the server reconnects: the retry, which would have its
// whole timeout again if the deadline were fresh, must end at once.
func TestRetriedCallKeepsItsDeadline(t *testing.T) {
	linuxOnly(t)
	const timeout = 30 * time.Second
	clock := newSkipClock()
	h := newHost(t, cfgOf(stdio("srv", "echo")), &host.Options{CallTimeout: timeout, Clock: clock})
	pid := pidOf(t, h, "srv")
	done := make(chan error, 1)
	running := make(chan struct{}, 1)
	ctx := host.WithProgress(ctxFor(t, 60*time.Second), func(*mcp.ProgressNotificationParams) {
		select {
		case running <- struct{}{}:
		default:
		}
	})
	go func() {
		// A progress notification every 100 ms.
		_, err := h.Call(ctx, "mcp__srv__slow", map[string]any{"ms": 60000, "steps": 600})
		done <- err
	}()
	select { // the call runs on the server; then the drop
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("no progress from the slow call")
	}
	killPid(t, pid)
	clock.Advance(timeout)
	// The reconnect's backoff, skipped too (it ends on its own in real
	// time if it comes first: the deadline has passed either way).
	clock.waitFor(t, host.Backoff(1))
	clock.Advance(host.Backoff(1))
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the retried call did not end at the call's deadline: it got a fresh one")
	}
	if !errors.Is(err, host.ErrTimeout) {
		t.Errorf("the retried call: %v, want ErrTimeout", err)
	}
	if st := statusOf(h, "srv"); st.Reconnects != 1 {
		t.Errorf("reconnects = %d, want 1 (the call must have been retried after the drop)", st.Reconnects)
	}
}

// WithCallDeadline starts a call's clock early, and its end is a timeout
// (IsTimeout), not a cancellation.
func TestWithCallDeadline(t *testing.T) {
	ctx, cancel := host.WithCallDeadline(context.Background(), time.Now().Add(10*time.Millisecond))
	defer cancel()
	<-ctx.Done()
	if !host.IsTimeout(ctx, nil) || !errors.Is(context.Cause(ctx), host.ErrTimeout) {
		t.Errorf("cause %v; want a timeout", context.Cause(ctx))
	}
	// A later deadline does not extend an earlier one.
	ctx2, cancel2 := host.WithCallDeadline(ctx, time.Now().Add(time.Hour))
	defer cancel2()
	if d, _ := ctx2.Deadline(); time.Until(d) > time.Minute {
		t.Errorf("deadline extended to %v", d)
	}
	plain, stop := context.WithCancel(context.Background())
	stop()
	if host.IsTimeout(plain, context.Canceled) {
		t.Error("a cancellation counted as a timeout")
	}
}
