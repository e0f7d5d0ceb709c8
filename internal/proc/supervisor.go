package proc

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// SupervisorArg is the hidden first argument that makes MaybeRunSupervisor
// run the supervisor.
const SupervisorArg = "__switchboard-supervise"

// ExecHelperArg is the hidden first argument that makes MaybeRunSupervisor
// run the exec helper: the supervisor starts a server whose program or
// directory is on a filesystem that can hang through it (see mayHang).
const ExecHelperArg = "__switchboard-exec"

// hooked records that this program calls MaybeRunSupervisor, so re-executing
// it as a supervisor is safe.
var hooked atomic.Bool

// SupervisorCommand says how to start the supervisor: a program whose main
// calls MaybeRunSupervisor, and the arguments that make its os.Args[1] equal
// SupervisorArg (the host's pid and the base of the servers' tags are
// appended after them). ok=false,
// or a nil SupervisorCommand, means "no supervisor": servers are started
// directly. The default re-executes this program (on Linux the very file
// it runs from, through /proc/self/exe; elsewhere os.Executable) and is
// available only once MaybeRunSupervisor has been called in this process, so
// an embedder who never calls it gets the direct start rather than a second
// copy of their program. Set it before the first Start; it is read without
// locking.
var SupervisorCommand func() (path string, args []string, ok bool) = selfSupervisor

func selfSupervisor() (string, []string, bool) {
	if !hooked.Load() {
		return "", nil, false
	}
	exe := selfProgram()
	if exe == "" {
		return "", nil, false
	}
	return exe, []string{SupervisorArg}, true
}

// selfExeLink is the kernel's link to the running program (Linux).
const selfExeLink = "/proc/self/exe"

// selfProgram names this very program for an exec: its path while that
// is still the file it runs from (ps and pkill then show its name), else,
// once the file was replaced (an upgrade under a running gateway) or
// removed, the kernel's link to it, which a copy of another version could
// not be (it would not speak this host's frames). "" if neither works.
func selfProgram() string {
	exe, err := os.Executable()
	link, lerr := os.Stat(selfExeLink)
	switch {
	case lerr != nil: // no /proc: macOS
		if err != nil {
			return ""
		}
		return exe
	case err != nil:
		return selfExeLink
	}
	if fi, err := os.Stat(exe); err == nil && os.SameFile(fi, link) {
		return exe
	}
	return selfExeLink
}

// MaybeRunSupervisor must be called first thing in main (and in TestMain of
// tests that start supervised servers). If os.Args[1] is SupervisorArg, it
// runs the supervisor, which serves its host until the host is gone, and
// exits the process; if it is ExecHelperArg, it runs the exec helper, which
// becomes a server; if npm runs it as its script shell (NpmScriptShell), it
// becomes that shell; otherwise it returns at once.
func MaybeRunSupervisor() {
	hooked.Store(true)
	maybeRunScriptShell()
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case SupervisorArg:
		os.Exit(runSupervisor(os.Args[2:]))
	case ExecHelperArg:
		os.Exit(runExecHelper(os.Args[2:]))
	case SandboxHelperArg:
		os.Exit(runSandboxHelper(os.Args[2:]))
	}
}

func supervisorFor(want bool) (string, []string, bool) {
	if !want || !canSupervise || SupervisorCommand == nil {
		return "", nil, false
	}
	return SupervisorCommand()
}

// The host and its supervisor (see runSupervisor, startSupervised) talk
// over a Unix stream socket in these frames. Servers are named by the ID
// of their spawn, never by pid: a pid is free for reuse once the server is
// reaped, while its leftovers may still be swept.
const (
	frameSpawn = 'S' // spawnReq, with stdin, stdout and stderr attached
	frameKill  = 'K' // killReq: the server got SIGKILL, sweep its leftovers at once
	maxFrame   = 16 << 20
)

// spawnReq is a server to start. Path, arguments, environment and
// directory are bytes, not strings: JSON would replace bytes that are not
// UTF-8, and exec passes them through unchanged.
type spawnReq struct {
	ID   uint64   `json:"id"`
	Path []byte   `json:"path"`
	Argv [][]byte `json:"argv"`
	Env  [][]byte `json:"env"`
	Dir  []byte   `json:"dir,omitempty"`
	// Indirect: start it through the exec helper (see mayHang).
	Indirect bool `json:"indirect,omitempty"`
	// Sandbox is the plan of a sandboxed server (JSON; Linux), which
	// the sandbox helper starts (see Sandbox).
	Sandbox string `json:"sandbox,omitempty"`
}

type killReq struct {
	ID uint64 `json:"id"`
}

// event is one line from the supervisor about spawn ID: its outcome (Pid
// or Err), then its reaping (Reaped, with the wait status), then the end
// of the sweep of what it left (Done).
type event struct {
	ID     uint64 `json:"id"`
	Pid    int    `json:"pid,omitempty"`
	Err    string `json:"err,omitempty"`
	Reaped bool   `json:"reaped,omitempty"`
	Status uint32 `json:"status,omitempty"`
	Done   bool   `json:"done,omitempty"`

	lost bool // not on the wire: the supervisor died before answering
}

// forceIndirect makes every supervised spawn go through the exec helper;
// set by tests only.
var forceIndirect bool

// supervisedSpawn is the request for the server path (argv[0] name, then
// args) of spec, which the supervisor is to start as exec.Cmd would from
// the host: the supervisor runs in "/", so an empty or relative Dir is
// made the host's (its physical working directory joined without cleaning,
// so that ".." is the kernel's to resolve), and the environment loses
// repeated keys but the last, as exec.Cmd's does. A relative path with a
// slash stays relative: exec resolves it in Dir.
func supervisedSpawn(path, name string, args []string, spec Spec) (spawnReq, error) {
	env, err := dedupEnv(spec.Env)
	if err != nil {
		return spawnReq{}, err
	}
	dir := spec.Dir
	if !filepath.IsAbs(dir) {
		wd, err := syscall.Getwd()
		if err != nil {
			return spawnReq{}, fmt.Errorf("its working directory would be the host's, which is gone (%w): give the server a directory of its own", err)
		}
		if dir != "" {
			wd += string(filepath.Separator) + dir
		}
		dir = wd
	}
	prog := path
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	return spawnReq{
		Path:     []byte(path),
		Argv:     toBytes(append([]string{name}, args...)),
		Env:      toBytes(env),
		Dir:      []byte(dir),
		Indirect: forceIndirect || mayHang(prog) || mayHang(dir),
	}, nil
}

// dedupEnv keeps the last value of each key, drops empty entries and
// refuses NUL, as exec.Cmd does with an environment on Unix.
func dedupEnv(env []string) ([]string, error) {
	out := make([]string, 0, len(env))
	saw := make(map[string]bool, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		kv := env[i]
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, errors.New("environment variable contains NUL")
		}
		k, _, ok := strings.Cut(kv[min(1, len(kv)):], "=") // a leading "=" is part of the key
		if len(kv) > 0 {
			k = kv[:1] + k
		}
		switch {
		case kv == "":
		case !ok:
			out = append(out, kv)
		case !saw[k]:
			saw[k] = true
			out = append(out, kv)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// newTagBase is the start of every tag one supervisor gives: random, so
// that no two supervisors share one, even across pid namespaces (where a
// supervisor's pid could be another's) or after a pid is reused.
func newTagBase() string {
	return rand.Text()[:16] + "."
}

// validTagBase checks a tag base from the command line: what newTagBase
// makes, nothing that could spill into another variable.
func validTagBase(s string) bool {
	body, ok := strings.CutSuffix(s, ".")
	if !ok || len(body) < 8 || len(body) > 64 {
		return false
	}
	for _, c := range body {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func toStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}
