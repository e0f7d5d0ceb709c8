package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// gcSettings reads the GC percent and memory limit without changing them.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

func TestRuntimeTuning(t *testing.T) {
	p0, l0 := gcSettings()
	t.Cleanup(func() { debug.SetGCPercent(p0); debug.SetMemoryLimit(l0) })
	unset := func(string) (string, bool) { return "", false }
	set := func(k string) (string, bool) { return "50", k == "GOGC" }

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	tuneOneShotRuntime(set)
	if p, l := gcSettings(); p != 100 || l != math.MaxInt64 {
		t.Errorf("with GOGC set: GC %d, limit %d; want them untouched", p, l)
	}

	tuneOneShotRuntime(unset)
	if p, l := gcSettings(); p != -1 || l != oneShotMemoryLimit {
		t.Errorf("one-shot: GC %d, limit %d; want off until %d", p, l, oneShotMemoryLimit)
	}
	restore := tuneServeRuntime(false, unset)
	if p, l := gcSettings(); p != serveGCPercent || l != math.MaxInt64 {
		t.Errorf("serve: GC %d, limit %d; want %d and no limit", p, l, serveGCPercent)
	}
	restore()
	if p, l := gcSettings(); p != -1 || l != oneShotMemoryLimit {
		t.Errorf("after serve: GC %d, limit %d; want the one-shot settings back", p, l)
	}
}
