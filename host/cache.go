package host

import (
	"sync"
	"time"
)

// DefaultCacheTTL is how long a server's tool, prompt and resource lists are
// trusted before they are fetched again (a list_changed notification, a
// reconnect or a refresh drops them sooner).
const DefaultCacheTTL = 5 * time.Minute

// listCache holds one list fetched from a server. It is invalidated by its
// TTL, explicitly (list_changed, refresh) and by reconnecting; a fetch
// started before an invalidation never overwrites it with stale data.
type listCache[T any] struct {
	ttl   time.Duration
	clock Clock
	// method is the request that fetches the list ("tools/list"…), for
	// the messages about a failed fetch.
	method string

	mu    sync.Mutex
	items []T
	// last is the last list fetched, kept through invalidations: what a
	// server whose circuit is open, or that is reconnecting, goes on
	// serving.
	last    []T
	valid   bool
	fetched time.Time
	epoch   uint64 // bumped by invalidate
}

func newListCache[T any](ttl time.Duration, clock Clock) *listCache[T] {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &listCache[T]{ttl: ttl, clock: clock}
}

// get returns the cached list when it is valid and fresh, and the epoch a
// fetch must pass to put.
func (c *listCache[T]) get() (items []T, ok bool, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.valid && c.clock.Now().Sub(c.fetched) < c.ttl {
		return c.items, true, c.epoch
	}
	return nil, false, c.epoch
}

// put stores a fetched list unless the cache was invalidated since epoch.
func (c *listCache[T]) put(items []T, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch != c.epoch {
		return
	}
	c.items, c.last, c.valid, c.fetched = items, items, true, c.clock.Now()
}

func (c *listCache[T]) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.valid = false
	c.items = nil
	c.epoch++
}

// lastKnown returns the last list fetched, even when it was invalidated
// since.
func (c *listCache[T]) lastKnown() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// peek returns the last stored list even if stale (for status counts).
func (c *listCache[T]) peek() ([]T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items, c.valid
}
