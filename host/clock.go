package host

import "time"

// Clock is the time source of a Host. Everything the host paces itself
// reads time only through it: reconnect backoff, the circuit breaker's
// cooldown, cache TTLs, call latency, and the bounded waits on a server
// (for a dying process's exit and last words, for a dropped connection to
// be noticed), so tests can drive them without sleeping.
//
// The timeouts of work a server does (startup, a call, a list) are context
// deadlines: their lengths are read on the Clock, but they run out in real
// time, as the server's process does.
type Clock interface {
	Now() time.Time
	// After is like time.After.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
