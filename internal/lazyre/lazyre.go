// Package lazyre compiles a regular expression on its first use rather
// than at start-up.
//
// Every process of the switchboard binary runs the init of every package
// it links — the gateway, the supervisor each host starts, the bundled
// demo server, each `switchboard call` — and a package-level
// regexp.MustCompile costs its compilation there (the expressions of
// host, gateway, the CLI and the registry took ~200 KB and a few tenths of
// a millisecond per start), while most runs never match anything with
// most of them.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr the first time it is called
// (panicking, as regexp.MustCompile does, if expr does not compile) and
// returns the same *regexp.Regexp every time. Safe for concurrent use.
//
// It is not inlined: inlined, each use would carry its own copy of
// sync.OnceValue's closures (about 2 KB of code for nine uses).
//
//go:noinline
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
