package host_test

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// testClock is real time that a test can move ahead. Now is the wall clock
// plus the time skipped so far; an After fires when its time comes, by
// waiting or by a skip. Every delay asked for is recorded.
//
// Waits of at least skipFrom (when it is set) are skipped as they are asked
// for: they fire at once and move the clock ahead by as much. A second is the
// first reconnect backoff, so newRecordingClock skips the host's pacing
// (backoff, the breaker's cooldown, the bound on a SIGKILLed process's exit)
// while its short waits (polls, a dying process's last words) and every
// timeout of a server's work (context deadlines, real time) run as they do.
type testClock struct {
	skipFrom, skipTo time.Duration
	// holdFrom, when set, holds waits of at least this long until an
	// Advance reaches them: they never end in real time.
	holdFrom time.Duration
	mu       sync.Mutex
	skipped  time.Duration
	waits    []*clockWait
	delays   []time.Duration
	asked    chan struct{} // gets a value (if there is room) on each After
}

type clockWait struct {
	at time.Time
	ch chan time.Time
	// held waits (holdFrom) are due once the skipped time reaches dueSkip,
	// whatever the wall clock says.
	held    bool
	dueSkip time.Duration
}

// newRecordingClock skips every wait from a second to a minute: the
// reconnect backoff and the breaker's first cooldowns. Longer waits (the
// slow retries of a server in error, Options.RetryInterval) run in real
// time: skipped, a server that always fails would be started again and
// again for as long as the test runs.
func newRecordingClock() *testClock { return &testClock{skipFrom: time.Second, skipTo: time.Minute} }

// newSkipClock skips only what the test skips with Advance.
func newSkipClock() *testClock { return &testClock{asked: make(chan struct{}, 1)} }

// newHoldClock is newSkipClock whose waits of a second or more (the host's
// pacing: retries, backoff, cooldowns) end only when the test advances
// the clock to them, however long the test takes.
func newHoldClock() *testClock {
	return &testClock{holdFrom: time.Second, asked: make(chan struct{}, 1)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.skipped)
}

func (c *testClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delays = append(c.delays, d)
	if c.asked != nil {
		select {
		case c.asked <- struct{}{}:
		default:
		}
	}
	w := &clockWait{at: time.Now().Add(c.skipped + d), ch: make(chan time.Time, 1)}
	c.waits = append(c.waits, w)
	switch {
	case c.skipFrom > 0 && d >= c.skipFrom && (c.skipTo == 0 || d <= c.skipTo):
		c.skipped += d
		c.fireLocked()
	case c.holdFrom > 0 && d >= c.holdFrom:
		w.held, w.dueSkip = true, c.skipped+d // fired by Advance only
	default:
		time.AfterFunc(d, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.fireLocked()
		})
	}
	return w.ch
}

// Advance moves the clock ahead by d, firing every wait that then is due.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.skipped += d
	c.fireLocked()
}

func (c *testClock) fireLocked() {
	now := time.Now().Add(c.skipped)
	kept := c.waits[:0]
	for _, w := range c.waits {
		if w.at.After(now) || w.held && w.dueSkip > c.skipped {
			kept = append(kept, w)
			continue
		}
		w.ch <- now
	}
	clear(c.waits[len(kept):])
	c.waits = kept
}

// Delays returns every delay asked for, in order.
func (c *testClock) Delays() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.delays...)
}

// Backoffs returns the delays asked for that are reconnect backoffs (the
// values of host.Backoff), in order; the other waits are left out.
func (c *testClock) Backoffs() []time.Duration {
	var out []time.Duration
	for _, d := range c.Delays() {
		for n := 1; n <= host.MaxReconnectAttempts+1; n++ {
			if d == host.Backoff(n) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// waitFor blocks until the host has asked for a wait of d (newSkipClock),
// so that an Advance after it reaches that wait: the test waits for the
// host, not for time. (Should the wait end in real time first, under load,
// the Advance finds it done.)
func (c *testClock) waitFor(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		c.mu.Lock()
		for _, asked := range c.delays {
			if asked == d {
				c.mu.Unlock()
				return
			}
		}
		c.mu.Unlock()
		select {
		case <-c.asked:
		case <-deadline:
			t.Fatalf("the host never waited %v on the clock (delays asked: %v)", d, c.Delays())
		}
	}
}

// killPid kills process pid at once (SIGKILL on Unix).
func killPid(t *testing.T, pid int) {
	t.Helper()
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Kill()
	}
	if err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
}
