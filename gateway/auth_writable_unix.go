//go:build unix

package gateway

import "golang.org/x/sys/unix"

// dirWritable reports whether this process may create files in dir (the
// atomic write's temporary file and rename): not in a read-only mount,
// such as a Kubernetes Secret's.
func dirWritable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }
