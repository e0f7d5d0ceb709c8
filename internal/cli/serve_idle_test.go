package cli

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestIdleReleaseDecides plays the runtime's figures tick by tick: a
// release only on a quiet tick after enough allocation, never twice in one
// idle spell, never while busy or when there is little to give back.
func TestIdleReleaseDecides(t *testing.T) {
	const mib = 1 << 20
	var s heapStats
	released := 0
	r := &idleRelease{read: func() heapStats { return s }, release: func() { released++; s.held = s.live + mib/2 }}
	step := func(name string, allocs, held, live uint64, want bool) {
		t.Helper()
		s = heapStats{allocs: s.allocs + allocs, held: held, live: live}
		before := released
		if got := r.tick(); got != want || (released > before) != want {
			t.Errorf("%s: tick released %v (release called %d times); want %v", name, got, released-before, want)
		}
	}
	step("first tick, nothing known yet", 0, 40*mib, 5*mib, false)
	step("busy", 30*mib, 40*mib, 5*mib, false)
	step("busy still", 30*mib, 40*mib, 5*mib, false)
	step("quiet, 35 MiB to give back", idleNoise-1, 40*mib, 5*mib, true)
	step("quiet again: released already", 0, 40*mib, 5*mib, false)
	step("a little traffic, not enough for another", idleReleaseMin/2, 40*mib, 5*mib, false)
	step("quiet after it", 0, 40*mib, 5*mib, false)
	step("busy again", 8*mib, 12*mib, 5*mib, false)
	step("quiet, 7 MiB to give back", 0, 12*mib, 5*mib, true)
	step("busy, little garbage", 3*mib, 6*mib, 5*mib, false)
	step("quiet, only 1 MiB to give back", 0, 6*mib, 5*mib, false)
	step("one tick of noise", idleNoise, 8*mib, 5*mib, false)
	step("quiet", 0, 8*mib, 5*mib, true)
}

// TestIdleReleaseGivesMemoryBack runs the release on this process's real
// heap: garbage left by a busy spell goes back to the system on the first
// quiet tick.
func TestIdleReleaseGivesMemoryBack(t *testing.T) {
	p := debug.SetGCPercent(200)
	t.Cleanup(func() { debug.SetGCPercent(p) })
	runtime.GC()
	read := runtimeHeapStats()
	released := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	r := &idleRelease{read: read, release: debug.FreeOSMemory}
	r.tick()
	// A busy spell: 64 MiB in 4 KiB pieces, kept until the tick so that
	// the collector cannot have run behind it (and given it back itself).
	keep := make([][]byte, 0, 1<<14)
	for range 1 << 14 {
		keep = append(keep, make([]byte, 4<<10))
	}
	if r.tick() {
		t.Fatal("released on a busy tick")
	}
	for i := range keep {
		keep[i] = nil
	}
	runtime.GC() // the spell's memory is now free, not given back
	before := released()
	// Quiet ticks: the test's own runtime may allocate a little, never
	// 64 KiB a tick; a few tries cover a stray allocation.
	var did bool
	for i := 0; i < 5 && !did; i++ {
		did = r.tick()
	}
	if !did {
		t.Fatalf("no release on quiet ticks; the heap holds %+v", read())
	}
	if got := released() - before; got < 32<<20 {
		t.Errorf("the release gave back %d KiB; want most of the 64 MiB spell", got>>10)
	}
	if r.tick() {
		t.Error("released again on the next quiet tick")
	}
}

// TestReleaseWhenIdleStops: the releaser's goroutine ends with its stop.
func TestReleaseWhenIdleStops(t *testing.T) {
	stop := releaseWhenIdle(context.Background())
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not return")
	}
}
