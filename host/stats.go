package host

import (
	"slices"
	"sync"
	"time"
)

// latencyWindow is how many recent call durations the percentiles use.
const latencyWindow = 1024

// stats counts calls and keeps a window of recent latencies, for the p50
// and p99 of CallStats.
type stats struct {
	mu     sync.Mutex
	calls  int64
	errors int64
	ring   [latencyWindow]time.Duration
	n      int
}

func (s *stats) record(d time.Duration, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if failed {
		s.errors++
	}
	s.ring[s.n%latencyWindow] = d
	s.n++
}

func (s *stats) snapshot() CallStats {
	s.mu.Lock()
	n := min(s.n, latencyWindow)
	window := slices.Clone(s.ring[:n])
	out := CallStats{Calls: s.calls, Errors: s.errors}
	s.mu.Unlock()
	if n == 0 {
		return out
	}
	slices.Sort(window)
	out.P50 = window[(n-1)*50/100]
	out.P99 = window[(n-1)*99/100]
	return out
}
