package cli

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// A gateway is idle most of its life: an editor's agent calls a tool, then
// thinks, or nobody uses it for hours. What it allocated while busy stays
// mapped after the collector frees it: with serve's GOGC=200 the heap grows
// to three times its live size between collections, and the runtime gives
// back to the system only what lies beyond that goal. So serve, once it has
// allocated nothing for a whole idleTick, returns the free heap to the system
// (debug.FreeOSMemory: a collection, then every free page released) when
// that gives back at least idleReleaseMin. Busy, it costs a read of five
// runtime metrics a second; each release costs one collection of a heap of
// a few MiB, at most once per busy spell. Measured in docs/benchmarks.md
// ("Idle sessions and resident size").
const (
	idleTick = time.Second
	// idleNoise is what an idle process may allocate in a tick and still
	// count as idle (the runtime's and a health check's small change).
	idleNoise = 64 << 10
	// idleReleaseMin is the least a release must give back to be worth a
	// collection.
	idleReleaseMin = 2 << 20
)

// heapStats are the runtime's figures idleRelease decides on.
type heapStats struct {
	allocs uint64 // bytes ever allocated on the heap
	held   uint64 // heap mapped and not yet given back: objects (live or not yet collected), free and unused
	live   uint64 // live heap at the end of the last collection
}

// idleRelease decides, once a tick, whether to give the free heap back.
type idleRelease struct {
	read    func() heapStats
	release func()
	last    uint64 // allocs at the previous tick
	freed   uint64 // allocs just after the last release
	started bool
}

// tick reads the runtime's figures and releases if the process allocated
// (almost) nothing since the previous tick, at least idleReleaseMin since
// the last release, and holds at least idleReleaseMin more than its live
// heap. It reports whether it released. (What a release cannot give back,
// pages that hold a live object, does not make it release again while the
// process stays idle.)
func (r *idleRelease) tick() bool {
	s := r.read()
	quiet := r.started && s.allocs-r.last < idleNoise
	r.last, r.started = s.allocs, true
	if !quiet || s.allocs-r.freed < idleReleaseMin || s.held < s.live+idleReleaseMin {
		return false
	}
	r.release()
	r.freed = r.read().allocs // what the collection itself allocated is no activity
	r.last = r.freed
	return true
}

// run ticks every idleTick until ctx ends.
func (r *idleRelease) run(ctx context.Context) {
	t := time.NewTicker(idleTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.tick()
		}
	}
}

// runtimeHeapStats reads heapStats from runtime/metrics.
func runtimeHeapStats() func() heapStats {
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	return func() heapStats {
		metrics.Read(samples)
		v := func(i int) uint64 {
			if samples[i].Value.Kind() != metrics.KindUint64 {
				return 0
			}
			return samples[i].Value.Uint64()
		}
		return heapStats{allocs: v(0), held: v(1) + v(2) + v(3), live: v(4)}
	}
}

// releaseWhenIdle starts serve's idle release (see idleTick) for as long as
// ctx lasts, and returns what stops it.
func releaseWhenIdle(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	r := &idleRelease{read: runtimeHeapStats(), release: debug.FreeOSMemory}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx)
	}()
	return func() { cancel(); <-done }
}
