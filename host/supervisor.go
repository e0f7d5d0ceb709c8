package host

import "github.com/switchboard-mcp/switchboard/internal/proc"

// MaybeRunSupervisor must be the first call in the main function of a
// program that runs a Host with stdio servers. The host then starts every
// stdio server through one small supervisor per process, a second copy of
// this same program, which stops each server and everything it started
// when the server ends and when the host exits, even by SIGKILL
// (docs/security.md, "Server processes", lists the few exceptions).
//
// If this process was started as such a supervisor, or as its exec helper,
// MaybeRunSupervisor does that work and exits; otherwise it returns at
// once. A program that never calls it gets direct starts, where a server's
// children can outlive a host that was killed (Options.NoSupervisor asks
// for direct starts explicitly).
//
// The supervisor is the program's, not a Host's: the first supervised
// start launches it, every Host of the process shares it, and it stays
// (idle, with a few goroutines of the program's watching it) after
// Host.Close, until the program exits.
func MaybeRunSupervisor() { proc.MaybeRunSupervisor() }
