//go:build !unix

package host_test

import "time"

// cpuTime is not measured here (no getrusage): the benchmarks' cpu-µs/op
// reads 0.
func cpuTime() time.Duration { return 0 }
