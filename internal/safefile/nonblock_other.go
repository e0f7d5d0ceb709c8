//go:build !unix

package safefile

// nonBlock is 0 where opening a file cannot wait for a writer (Windows
// names its pipes apart, under \\.\pipe\).
const nonBlock = 0
