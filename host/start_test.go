package host_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// TestStartClosesWithItsContext: a Host started on a context closes when
// the context is done, as Close does, and a subscription gets events until
// its own context ends (and one made later gets them).
func TestStartClosesWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := host.Start(ctx, cfgOf(stdio("a", "echo")), &host.Options{CloseGrace: 200 * time.Millisecond,
		LookupEnv: func(string) (string, bool) { return "", false }})
	defer h.Close()
	var got, late atomic.Int32
	subCtx, endSub := context.WithCancel(context.Background())
	h.Subscribe(subCtx, func(ev host.Event) {
		if ev.Kind == host.EventState && ev.Server == "a" {
			got.Add(1)
		}
	})
	wait, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	if _, err := h.Call(wait, "mcp__a__echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	if got.Load() == 0 {
		t.Error("the subscription got no state event of a server that connected")
	}
	endSub()
	h.Subscribe(context.Background(), func(host.Event) { late.Add(1) })
	before := got.Load()
	// A reconnect: the live subscription sees it, the ended one does not.
	if err := h.Retry("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(wait, "mcp__a__echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	if late.Load() == 0 {
		t.Error("a subscription made later saw nothing of a reconnect")
	}

	cancel()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := h.Call(wait, "mcp__a__echo", map[string]any{"text": "hi"}); errors.Is(err, host.ErrClosed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Host still takes calls after its context was cancelled")
		}
	}
	if n := got.Load(); n != before {
		t.Errorf("an ended subscription got %d more events", n-before)
	}
}

// After Close the lists fail with ErrClosed, as calls do: not an empty
// list that looks like a Host whose servers have no tools. WaitReady says
// no server is ready, Done is closed, and a background call Close ended
// says so (it said only "cancelled").
func TestListsAfterCloseFailWithErrClosed(t *testing.T) {
	h := newHost(t, cfgOf(stdio("a", "echo")), nil)
	ctx := ctxFor(t, 30*time.Second)
	if !h.WaitReady(ctx) {
		t.Fatal("server not ready")
	}
	if l, err := h.Tools(ctx); err != nil || len(l.Tools) == 0 {
		t.Fatalf("Tools before Close = %v, %v", l, err)
	}
	if h.Closed() {
		t.Fatal("Closed before Close")
	}
	bg, err := h.Start(ctx, "mcp__a__slow", map[string]any{"ms": 60000})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Done():
		t.Fatal("Done before Close")
	default:
	}
	h.Close()
	if !h.Closed() || !h.View(host.Scope{}).Closed() {
		t.Error("Closed after Close is false (of the Host, or of a view of it)")
	}
	select {
	case <-h.View(host.Scope{}).Done():
	default:
		t.Error("Done (of a view of the Host) not closed after Close")
	}
	if h.WaitReady(ctx) {
		t.Error("WaitReady after Close = true: every server is stopped")
	}
	if _, err := bg.Wait(ctx); !errors.Is(err, host.ErrClosed) || !errors.Is(err, host.ErrCancelled) {
		t.Errorf("background call Close ended: %v, want ErrCancelled and ErrClosed", err)
	}
	// Apply does nothing: no server is added to a closed Host.
	if res := h.Apply(cfgOf(stdio("a", "echo"), stdio("b", "echo"))); res.Changed() || len(h.Status()) != 1 {
		t.Errorf("Apply after Close = %+v, %d servers", res, len(h.Status()))
	}
	if _, err := h.Tools(ctx); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Tools after Close: err = %v, want ErrClosed", err)
	}
	if _, _, err := h.Prompts(ctx); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Prompts after Close: err = %v, want ErrClosed", err)
	}
	if _, err := h.Call(ctx, "mcp__a__echo", map[string]any{"text": "hi"}); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Call after Close: err = %v, want ErrClosed", err)
	}
	// Its status no longer says connected to a server that is gone.
	if st := h.Status(); len(st) != 1 || st[0].State != host.StateDisabled || st[0].Reason != host.ClosedReason {
		t.Errorf("Status after Close = %+v, want disabled (%s)", st, host.ClosedReason)
	}
}

// A server of no stated trust (a hand-built config.ResolvedServer that
// left Trust out) does not start, on New or on Apply: it is in error, its
// reason naming the field, not run as the user's own. The same definition
// with TrustUser starts beside it.
func TestServerOfNoStatedTrustDoesNotStart(t *testing.T) {
	bare := stdio("bare", "echo")
	bare.Trust = ""
	h := newHost(t, cfgOf(bare, stdio("mine", "echo")), nil)
	ctx := ctxFor(t, 30*time.Second)
	h.WaitReady(ctx)
	check := func(when string, n int) {
		t.Helper()
		if got := len(h.Status()); got != n {
			t.Fatalf("%s: %d servers, want %d", when, got, n)
		}
		for _, st := range h.Status() {
			want := host.StateConnected
			if st.Name != "mine" {
				want = host.StateError
			}
			if st.State != want || want == host.StateError && !strings.Contains(st.Reason, "config.ResolvedServer.Trust is empty") {
				t.Errorf("%s: %s is %s (%s), want %s", when, st.Name, st.State, st.Reason, want)
			}
		}
	}
	check("New", 2)
	late := stdio("late", "echo")
	late.Trust = ""
	h.Apply(cfgOf(bare, stdio("mine", "echo"), late))
	h.WaitReady(ctx)
	check("Apply", 3)
}
