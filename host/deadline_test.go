package host_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// A call retried after a dropped connection keeps its original deadline
// (issue 16): before, the retry got a fresh timeout, so a call could run
// for twice its timeout and more.
func TestRetriedCallKeepsItsDeadline(t *testing.T) {
	linuxOnly(t)
	const timeout = 3 * time.Second
	h := newHost(t, cfgOf(stdio("srv", "echo")), &host.Options{CallTimeout: timeout})
	pid := pidOf(t, h, "srv")
	begin := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(ctxFor(t, 60*time.Second), "mcp__srv__slow", map[string]any{"ms": 60000})
		done <- err
	}()
	time.Sleep(timeout / 2) // the request is on the wire; then the drop
	killPid(t, pid)
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the retried call hung")
	}
	took := time.Since(begin)
	if err == nil {
		t.Fatal("a 60 s call finished within its 3 s timeout")
	}
	// With a fresh deadline the retry (after a reconnect of about a
	// second) would end near 1.5 + 1 + 3 s.
	if took > timeout+time.Second {
		t.Errorf("the retried call ended after %v; its timeout is %v from the start (err: %v)", took, timeout, err)
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
