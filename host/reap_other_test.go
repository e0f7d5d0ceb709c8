//go:build !linux

package host_test

// maybeRunHost: the host-under-test child of the reaping tests, which read
// /proc, exists only on Linux.
func maybeRunHost() {}
