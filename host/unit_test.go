package host

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBackoffSchedule(t *testing.T) {
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{0, time.Second}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second},
		{4, 8 * time.Second}, {5, 16 * time.Second}, {6, 30 * time.Second}, {7, 30 * time.Second},
		{40, 30 * time.Second}, {1 << 30, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := Backoff(tt.attempt); got != tt.want {
			t.Errorf("Backoff(%d) = %v, want %v", tt.attempt, got, tt.want)
		}
	}
}

func TestBreaker(t *testing.T) {
	clock := newFakeClock()
	var transitions []string
	b := newBreaker(3, 5*time.Minute, 0, clock, func(from, to BreakerState, _ uint64) {
		transitions = append(transitions, from.String()+">"+to.String())
	})
	fail := func() {
		t.Helper()
		gen, refused := b.allow()
		if refused != nil {
			t.Fatalf("allow: %v", refused)
		}
		b.done(gen, false)
	}
	fail()
	fail()
	if st, _, _ := b.snapshot(); st != BreakerClosed {
		t.Fatalf("after 2 failures state = %v, want closed", st)
	}
	// A success resets the count: failures must be consecutive.
	gen, _ := b.allow()
	b.done(gen, true)
	fail()
	fail()
	fail()
	st, n, wait := b.snapshot()
	if st != BreakerOpen || n != 3 || wait != 5*time.Minute {
		t.Fatalf("after 3 consecutive failures = %v/%d/%v, want open/3/5m", st, n, wait)
	}
	if _, refused := b.allow(); refused == nil || !errors.Is(refused, ErrCircuitOpen) {
		t.Fatal("open breaker allowed a call")
	}
	clock.Advance(5*time.Minute - time.Second)
	if _, refused := b.allow(); refused == nil {
		t.Fatal("breaker allowed a call before the cooldown ended")
	}
	clock.Advance(time.Second)
	probe, refused := b.allow()
	if refused != nil {
		t.Fatalf("half-open breaker refused the probe: %v", refused)
	}
	if _, refused := b.allow(); refused == nil {
		t.Fatal("half-open breaker allowed a second call while the probe is in flight")
	}
	b.done(probe, false) // probe fails → open again, for the longest cooldown (5 min here)
	if st, _, wait := b.snapshot(); st != BreakerOpen || wait != 5*time.Minute {
		t.Fatalf("failed probe: %v %v, want open with a fresh cooldown", st, wait)
	}
	clock.Advance(5 * time.Minute)
	probe, refused = b.allow()
	if refused != nil {
		t.Fatal(refused)
	}
	b.done(probe, true)
	if st, _, _ := b.snapshot(); st != BreakerClosed {
		t.Fatalf("successful probe left the breaker %v", st)
	}
	want := []string{"closed>open", "open>half-open", "half-open>open", "open>half-open", "half-open>closed"}
	if diff := cmp.Diff(want, transitions); diff != "" {
		t.Errorf("transitions (-want +got):\n%s", diff)
	}
}

// The cooldown starts at seconds and doubles with each failed probe, up to
// the longest; every refusal names when the next probe is; a circuit that
// closed starts again from the first cooldown (issue 29, point 7: a 25 s
// stall cost 5 minutes of refused calls).
func TestBreakerCooldownGrows(t *testing.T) {
	clock := newFakeClock()
	b := newBreaker(3, 0, 0, clock, nil) // the defaults: 5 s, up to 5 min
	open := func() {
		t.Helper()
		for range 3 {
			gen, refused := b.allow()
			if refused != nil {
				t.Fatalf("allow: %v", refused)
			}
			b.done(gen, false)
		}
	}
	open()
	var got []time.Duration
	for range 9 {
		_, refused := b.allow()
		if refused == nil {
			t.Fatal("open breaker allowed a call")
		}
		if refused.ProbeAt != clock.Now().Add(refused.ProbeIn) || !strings.Contains(refused.Error(), "(in "+refused.ProbeIn.String()+") probes it") {
			t.Fatalf("refusal %q (%+v) does not name when the next probe is", refused, refused)
		}
		got = append(got, refused.ProbeIn)
		clock.Advance(refused.ProbeIn)
		probe, refused := b.allow()
		if refused != nil {
			t.Fatalf("no probe after the cooldown: %v", refused)
		}
		_, inFlight := b.allow()
		if inFlight == nil || inFlight.NextCooldown != min(2*got[len(got)-1], 5*time.Minute) || !strings.Contains(inFlight.Error(), "if it fails, the next probe is") {
			t.Fatalf("refusal while the probe is in flight: %v (%+v)", inFlight, inFlight)
		}
		b.done(probe, false)
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cooldowns (-want +got):\n%s", diff)
	}
	_, _, wait := b.snapshot()
	clock.Advance(wait)
	probe, _ := b.allow()
	b.done(probe, true)
	open()
	if st, _, wait := b.snapshot(); st != BreakerOpen || wait != DefaultBreakerCooldown {
		t.Errorf("opened again after closing: %v for %v, want open for the first cooldown (%v)", st, wait, DefaultBreakerCooldown)
	}
}

func TestBreakerIgnoresStaleResults(t *testing.T) {
	clock := newFakeClock()
	b := newBreaker(3, time.Minute, 0, clock, nil)
	old, _ := b.allow() // a slow call admitted while closed
	for range 3 {
		g, _ := b.allow()
		b.done(g, false)
	}
	b.done(old, true) // finishes after the breaker opened: must not close it
	if st, _, _ := b.snapshot(); st != BreakerOpen {
		t.Fatalf("a stale success changed an open breaker to %v", st)
	}
}

func TestListCache(t *testing.T) {
	clock := newFakeClock()
	c := newListCache[string](5*time.Minute, clock)
	if _, ok, _ := c.get(); ok {
		t.Fatal("empty cache reported a hit")
	}
	_, _, epoch := c.get()
	c.put([]string{"a"}, epoch)
	if got, ok, _ := c.get(); !ok || len(got) != 1 {
		t.Fatalf("get after put = %v %v", got, ok)
	}
	clock.Advance(5*time.Minute - time.Nanosecond)
	if _, ok, _ := c.get(); !ok {
		t.Fatal("cache expired before its TTL")
	}
	clock.Advance(time.Nanosecond)
	if _, ok, _ := c.get(); ok {
		t.Fatal("cache served a list past its TTL")
	}
	// A fetch that started before an invalidation must not store its result.
	_, _, epoch = c.get()
	c.invalidate() // e.g. tools/list_changed arrived mid-fetch
	c.put([]string{"stale"}, epoch)
	if got, ok, _ := c.get(); ok {
		t.Fatalf("stale fetch was stored: %v", got)
	}
}

// A package runner's first start downloads the package: without a start-up
// bound of their own, such servers get DefaultRunnerStartupTimeout, and
// every other server the plain default.
func TestRunnerStartupTimeout(t *testing.T) {
	for _, c := range []struct {
		command string
		runner  bool
	}{
		{"npx", true}, {"/usr/bin/npx", true}, {`C:\Program Files\nodejs\npx.cmd`, true},
		{"uvx", true}, {"bunx", true}, {"pipx", true}, {"dnx", true},
		{"node", false}, {"npx-helper", false}, {"python", false}, {"", false},
	} {
		if got := isPackageRunner(c.command); got != c.runner {
			t.Errorf("isPackageRunner(%q) = %v, want %v", c.command, got, c.runner)
		}
	}
}
