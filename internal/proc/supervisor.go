package proc

import (
	"os"
	"sync/atomic"
)

// SupervisorArg is the hidden first argument that makes MaybeRunSupervisor
// run the supervisor.
const SupervisorArg = "__switchboard-supervise"

// hooked records that this program calls MaybeRunSupervisor, so re-executing
// it as a supervisor is safe.
var hooked atomic.Bool

// SupervisorCommand says how to start the supervisor: a program whose main
// calls MaybeRunSupervisor, and the arguments that make its os.Args[1] equal
// SupervisorArg (the host's pid is appended after them). ok=false,
// or a nil SupervisorCommand, means "no supervisor": servers are started
// directly. The default re-executes this program (os.Executable) and is
// available only once MaybeRunSupervisor has been called in this process, so
// an embedder who never calls it gets the direct start rather than a second
// copy of their program. Set it before the first Start; it is read without
// locking.
var SupervisorCommand func() (path string, args []string, ok bool) = selfSupervisor

func selfSupervisor() (string, []string, bool) {
	if !hooked.Load() {
		return "", nil, false
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil, false
	}
	return exe, []string{SupervisorArg}, true
}

// MaybeRunSupervisor must be called first thing in main (and in TestMain of
// tests that start supervised servers). If os.Args[1] is SupervisorArg, it
// runs the supervisor, which serves its host until the host is gone, and
// exits the process; otherwise it returns at once.
func MaybeRunSupervisor() {
	hooked.Store(true)
	if len(os.Args) < 2 || os.Args[1] != SupervisorArg {
		return
	}
	os.Exit(runSupervisor(os.Args[2:]))
}

func supervisorFor(want bool) (string, []string, bool) {
	if !want || !canSupervise || SupervisorCommand == nil {
		return "", nil, false
	}
	return SupervisorCommand()
}

// The host and its supervisor (see runSupervisor, startSupervised) talk
// over a Unix stream socket in these frames.
const (
	frameSpawn = 'S' // spawnReq, with stdin, stdout and stderr attached
	frameKill  = 'K' // killReq: the server got SIGKILL, sweep its leftovers at once
	maxFrame   = 16 << 20
)

type spawnReq struct {
	ID   uint64   `json:"id"`
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir,omitempty"`
}

type killReq struct {
	Pid int `json:"pid"`
}
