package host

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrCircuitOpen is returned (wrapped) by calls to a server whose circuit
// breaker is open: it failed repeatedly and is not being tried until its
// cooldown ends.
var ErrCircuitOpen = errors.New("circuit open")

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
// Threshold failures in a row open it; after Cooldown one probe is let
// through (half-open); the probe's success closes it, its failure reopens
// it. A generation counter makes results from an older state harmless.
type breaker struct {
	threshold int
	cooldown  time.Duration
	clock     Clock
	onChange  func(from, to BreakerState)

	mu         sync.Mutex
	state      BreakerState
	failures   int
	openedAt   time.Time
	generation uint64
	probing    bool
}

func newBreaker(threshold int, cooldown time.Duration, clock Clock, onChange func(from, to BreakerState)) *breaker {
	if threshold <= 0 {
		threshold = 3
	}
	if cooldown <= 0 {
		cooldown = 5 * time.Minute
	}
	if clock == nil {
		clock = realClock{}
	}
	return &breaker{threshold: threshold, cooldown: cooldown, clock: clock, onChange: onChange}
}

// allow reports whether a call may proceed. It returns the generation the
// caller must hand back to done, or an error wrapping ErrCircuitOpen.
func (b *breaker) allow() (uint64, error) {
	b.mu.Lock()
	from := b.state
	defer func() { to := b.state; b.mu.Unlock(); b.notify(from, to) }()
	switch b.state {
	case BreakerOpen:
		wait := b.cooldown - b.clock.Now().Sub(b.openedAt)
		if wait > 0 {
			return 0, fmt.Errorf("%w after %d consecutive failures; next try in %s",
				ErrCircuitOpen, b.failures, wait.Round(time.Second))
		}
		b.setState(BreakerHalfOpen)
		b.probing = true
		return b.generation, nil
	case BreakerHalfOpen:
		if b.probing {
			return 0, fmt.Errorf("%w: a probe call is in flight", ErrCircuitOpen)
		}
		b.probing = true
	}
	return b.generation, nil
}

// done records the outcome of a call admitted in generation gen.
func (b *breaker) done(gen uint64, ok bool) {
	b.mu.Lock()
	from := b.state
	defer func() { to := b.state; b.mu.Unlock(); b.notify(from, to) }()
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

func (b *breaker) open() {
	b.openedAt = b.clock.Now()
	b.setState(BreakerOpen)
}

// reset closes the breaker (an explicit retry by the user).
func (b *breaker) reset() {
	b.mu.Lock()
	from := b.state
	defer func() { to := b.state; b.mu.Unlock(); b.notify(from, to) }()
	b.failures = 0
	b.probing = false
	if b.state != BreakerClosed {
		b.setState(BreakerClosed)
	}
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

func (b *breaker) notify(from, to BreakerState) {
	if b.onChange != nil && from != to {
		b.onChange(from, to)
	}
}
