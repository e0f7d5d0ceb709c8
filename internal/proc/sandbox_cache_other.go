//go:build !linux

package proc

// RemoveFromCacheCopies removes rel from a cache's private copies: on
// Linux only, where a sandboxed server's writes to a cache go to copies of
// its own (see Cache).
func RemoveFromCacheCopies(private, rel string) []string { return nil }
