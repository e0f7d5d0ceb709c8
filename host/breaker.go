package host

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrCircuitOpen is returned (wrapped, as a *CircuitOpenError) by calls to a
// server whose circuit breaker is open: it failed repeatedly and calls fail
// fast until it answers again or its cooldown ends.
var ErrCircuitOpen = errors.New("circuit open")

// CircuitOpenError is the error of a call refused at once because its
// server's circuit is open. It wraps ErrCircuitOpen. A gateway or CLI shows
// it to the model as an isError result: the tool is still listed, the
// server is just not being called for now.
type CircuitOpenError struct {
	// Server is the configured name of the server.
	Server string
	// Failures is how many calls failed in a row to open the circuit.
	Failures int
	// LastFailure says why the last of them failed (may be empty).
	LastFailure string
	// Watching: the server stopped answering altogether, so the host pings
	// it in the background and closes the circuit as soon as it answers.
	Watching bool
	// Reconnecting: the server's connection was lost and the host is
	// connecting it again; the circuit closes once it is back.
	Reconnecting bool
	// ProbeIn is how long until a call is let through as a probe (the end
	// of the cooldown); 0 when a probe call is in flight now.
	ProbeIn time.Duration
	// ProbeAt is when that will be (zero while a probe call is in flight).
	ProbeAt time.Time
	// NextCooldown is the cooldown the circuit opens for if the coming
	// probe fails: each failed probe doubles it, up to the longest
	// (Options.BreakerMaxCooldown).
	NextCooldown time.Duration
}

func (e *CircuitOpenError) Error() string {
	msg := "circuit open"
	if e.Server != "" {
		msg = e.Server + ": " + msg
	}
	if e.Failures > 0 {
		msg += fmt.Sprintf(" after %d consecutive failures", e.Failures)
	}
	if e.LastFailure != "" {
		msg += " (last: " + e.LastFailure + ")"
	}
	msg += "; the call was not made"
	switch {
	case e.ProbeAt.IsZero():
		msg += "; a probe call is in flight, and calls fail fast until it returns"
		if e.NextCooldown > 0 {
			msg += fmt.Sprintf(" (if it fails, the next probe is %s later)", e.NextCooldown.Round(time.Second))
		}
	case e.Reconnecting:
		msg += "; the server's connection was lost and it is being reconnected: the circuit closes once it is back"
	case e.Watching:
		msg += fmt.Sprintf("; the server does not answer: it is pinged in the background and the circuit closes as soon as it answers (at the latest, a call probes it in %s)", e.ProbeIn.Round(time.Second))
	default:
		msg += fmt.Sprintf("; the next call after %s (in %s) probes it", e.ProbeAt.UTC().Format(time.TimeOnly+"Z"), e.ProbeIn.Round(time.Second))
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrCircuitOpen) hold.
func (e *CircuitOpenError) Unwrap() error { return ErrCircuitOpen }

// BreakerState is the state of a per-server circuit breaker.
type BreakerState int

const (
	BreakerClosed BreakerState = iota
	BreakerOpen
	BreakerHalfOpen
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("BreakerState(%d)", int(s))
}

// breaker is a consecutive-failure circuit breaker shaped like gobreaker:
// Threshold failures in a row open it; after a cooldown one probe is let
// through (half-open); the probe's success closes it, its failure reopens
// it for twice the cooldown, up to the longest. The first cooldown is
// short (seconds): a server whose calls stalled for a while and then
// recovered is probed, and served, soon after, while one that stays broken
// is probed ever more rarely. Evidence from outside the calls (a
// reconnect, an answered ping) can close it at once (recover). A
// generation counter makes results from an older state harmless.
type breaker struct {
	threshold   int
	first, most time.Duration // the first cooldown and the longest
	clock       Clock
	onChange    func(from, to BreakerState, gen uint64)

	mu         sync.Mutex
	state      BreakerState
	failures   int
	cooldown   time.Duration // the current one: first, doubled per failed probe
	openedAt   time.Time
	generation uint64
	probing    bool
}

// newBreaker returns a closed breaker. first <= 0 is
// DefaultBreakerCooldown; most is raised to first when shorter (<= 0:
// DefaultBreakerMaxCooldown).
func newBreaker(threshold int, first, most time.Duration, clock Clock, onChange func(from, to BreakerState, gen uint64)) *breaker {
	if threshold <= 0 {
		threshold = DefaultBreakerThreshold
	}
	if first <= 0 {
		first = DefaultBreakerCooldown
	}
	if most <= 0 {
		most = DefaultBreakerMaxCooldown
	}
	most = max(most, first)
	if clock == nil {
		clock = realClock{}
	}
	return &breaker{threshold: threshold, first: first, most: most, cooldown: first, clock: clock, onChange: onChange}
}

// allow reports whether a call may proceed. It returns the generation the
// caller must hand back to done (or release), or the refusal (Server,
// LastFailure and Watching are the caller's to fill in).
func (b *breaker) allow() (uint64, *CircuitOpenError) {
	b.mu.Lock()
	from := b.state
	defer func() { to, gen := b.state, b.generation; b.mu.Unlock(); b.notify(from, to, gen) }()
	switch b.state {
	case BreakerOpen:
		if r := b.refusalLocked(); r != nil {
			return 0, r
		}
		b.setState(BreakerHalfOpen)
		b.probing = true
		return b.generation, nil
	case BreakerHalfOpen:
		if b.probing {
			return 0, b.probingLocked()
		}
		b.probing = true
	}
	return b.generation, nil
}

// probingLocked is the refusal while a probe call is in flight. The
// caller holds b.mu.
func (b *breaker) probingLocked() *CircuitOpenError {
	return &CircuitOpenError{Failures: b.failures, NextCooldown: b.nextCooldownLocked()}
}

// nextCooldownLocked is the cooldown a failed probe opens the circuit for.
func (b *breaker) nextCooldownLocked() time.Duration {
	return min(2*b.cooldown, b.most)
}

// refusalLocked is the refusal of an open breaker whose cooldown is not
// over, else nil. The caller holds b.mu.
func (b *breaker) refusalLocked() *CircuitOpenError {
	wait := b.cooldown - b.clock.Now().Sub(b.openedAt)
	if wait <= 0 {
		return nil
	}
	return &CircuitOpenError{Failures: b.failures, ProbeIn: wait, ProbeAt: b.openedAt.Add(b.cooldown), NextCooldown: b.nextCooldownLocked()}
}

// done records the outcome of a call admitted in generation gen.
func (b *breaker) done(gen uint64, ok bool) {
	b.mu.Lock()
	from := b.state
	defer func() { to, g := b.state, b.generation; b.mu.Unlock(); b.notify(from, to, g) }()
	if gen != b.generation {
		return // the breaker moved on; this result is stale
	}
	if ok {
		b.failures = 0
		b.probing = false
		if b.state != BreakerClosed {
			b.setState(BreakerClosed)
		}
		return
	}
	b.failures++
	switch b.state {
	case BreakerHalfOpen:
		b.probing = false
		b.open()
	case BreakerClosed:
		if b.failures >= b.threshold {
			b.open()
		}
	}
}

// release gives back an admission of generation gen whose call was never
// made (the server was not connected): it says nothing of the server's
// health, but a half-open breaker must let the next call probe.
func (b *breaker) release(gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen == b.generation && b.state == BreakerHalfOpen {
		b.probing = false
	}
}

// open opens the breaker: for the first cooldown when it was closed, for
// twice the last (up to the longest) when a probe failed.
func (b *breaker) open() {
	if b.state == BreakerHalfOpen {
		b.cooldown = b.nextCooldownLocked()
	} else {
		b.cooldown = b.first
	}
	b.openedAt = b.clock.Now()
	b.setState(BreakerOpen)
}

// recover closes the breaker if it is still in generation gen and not
// closed: the server was seen answering again (an answered ping). It
// reports whether it closed it.
func (b *breaker) recover(gen uint64) bool {
	b.mu.Lock()
	from := b.state
	defer func() { to, g := b.state, b.generation; b.mu.Unlock(); b.notify(from, to, g) }()
	if gen != b.generation || b.state == BreakerClosed {
		return false
	}
	b.failures = 0
	b.probing = false
	b.setState(BreakerClosed)
	return true
}

// reset closes the breaker (an explicit retry by the user, or a new
// connection).
func (b *breaker) reset() {
	b.mu.Lock()
	from := b.state
	defer func() { to, gen := b.state, b.generation; b.mu.Unlock(); b.notify(from, to, gen) }()
	b.failures = 0
	b.probing = false
	if b.state != BreakerClosed {
		b.setState(BreakerClosed)
	}
}

// probeAt is when the open breaker lets the next call through as the
// probe (zero when it is not open).
func (b *breaker) probeAt() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != BreakerOpen {
		return time.Time{}
	}
	return b.openedAt.Add(b.cooldown)
}

// currentCooldown is the cooldown of the circuit now open (or last open).
func (b *breaker) currentCooldown() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cooldown
}

// snapshot returns the state and, when open, how long until the next probe.
func (b *breaker) snapshot() (BreakerState, int, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var wait time.Duration
	if b.state == BreakerOpen {
		wait = max(b.cooldown-b.clock.Now().Sub(b.openedAt), 0)
	}
	return b.state, b.failures, wait
}

// setState moves to a new state under b.mu; the change is reported by
// notify once the lock is released, so a hook may read the breaker.
func (b *breaker) setState(to BreakerState) {
	b.state = to
	b.generation++
}

func (b *breaker) notify(from, to BreakerState, gen uint64) {
	if b.onChange != nil && from != to {
		b.onChange(from, to, gen)
	}
}
