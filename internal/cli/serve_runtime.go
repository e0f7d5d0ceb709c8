package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// The runtime settings of every other command (status, call, tools…), which
// run for well under a second with a heap of a few MiB: the collector is
// off until the heap reaches oneShotMemoryLimit, and then runs as usual to
// stay under it. With the collector on, `status` on 20 servers spent about
// 7 ms of its CPU collecting garbage the process was about to drop by
// exiting (docs/benchmarks.md, "Fan-out start-up"). A GOGC or GOMEMLIMIT in
// the environment wins.
const oneShotMemoryLimit = 64 << 20

// tuneOneShotRuntime applies those settings to the process; serve undoes
// them (tuneServeRuntime).
func tuneOneShotRuntime(getenv func(string) (string, bool)) {
	_, gogc := getenv("GOGC")
	_, limit := getenv("GOMEMLIMIT")
	if gogc || limit {
		return
	}
	debug.SetMemoryLimit(oneShotMemoryLimit)
	debug.SetGCPercent(-1)
}

// The runtime settings of `serve`, measured in docs/benchmarks.md ("The
// gateway relay"). A GOMAXPROCS or GOGC in the environment wins.
//
//   - On stdio the gateway relays one client's messages: work that waits
//     on pipes, not on CPU. With one P a message that arrives is handled
//     by the thread that was waiting for it, instead of being handed to
//     another core with a wake-up per hop; the relay's latency fell about
//     7 %. (Under HTTP, with many clients, every core is used.)
//   - Every message the MCP SDK decodes leaves a fresh 32 KiB buffer (SDK
//     v1.8.0), so the relay's garbage grows with traffic while its live
//     heap stays a few MiB. Letting the heap grow to three times the live
//     size between collections (GOGC=200, Go's default is 100) cut another
//     7 % for about 4 MiB more memory with 20 servers.
const serveGCPercent = 200

// tuneServeRuntime applies those settings and returns what undoes them
// (serve also runs inside tests).
func tuneServeRuntime(stdio bool, getenv func(string) (string, bool)) (restore func()) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	var undo []func()
	if _, set := getenv("GOMAXPROCS"); !set && stdio {
		prev := runtime.GOMAXPROCS(1)
		undo = append(undo, func() { runtime.GOMAXPROCS(prev) })
	}
	if _, set := getenv("GOGC"); !set {
		prev := debug.SetGCPercent(serveGCPercent)
		undo = append(undo, func() { debug.SetGCPercent(prev) })
	}
	if _, set := getenv("GOMEMLIMIT"); !set { // no cap on a gateway (see tuneOneShotRuntime)
		prev := debug.SetMemoryLimit(math.MaxInt64)
		undo = append(undo, func() { debug.SetMemoryLimit(prev) })
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}
