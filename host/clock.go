package host

import "time"

// Clock is the time source of a Host. Backoff, the circuit breaker and the
// caches read time only through it, so tests can drive them without sleeping.
type Clock interface {
	Now() time.Time
	// After is like time.After.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
