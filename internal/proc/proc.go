package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Spec describes a server process to start.
type Spec struct {
	// Command and Args are run directly, without a shell. A bare Command is
	// looked up in the host's PATH, as exec.Command does.
	Command string
	Args    []string
	// Env is the complete environment of the server. Nil means an empty one.
	Env []string
	// Dir is the working directory; "" means the host's.
	Dir string
	// StderrLimit is how many bytes of stderr are kept. If <= 0, 64 KiB.
	StderrLimit int
	// Supervise runs the server under the supervisor (see package doc) when
	// SupervisorCommand provides one and the OS has a use for it (Linux,
	// macOS); otherwise the server is started directly.
	Supervise bool
	// Sandbox, if set, confines the server (see Sandbox); Start fails,
	// wrapping ErrSandboxUnavailable, where it cannot.
	Sandbox *Sandbox
}

const (
	defaultStderrLimit = 64 << 10
	// drainDelay is how long stdout and stderr stay readable after the
	// process is reaped. Normally every writer is dead by then and the
	// reader meets EOF at once; the delay only ends reads blocked by a
	// process outside our reach that still holds a pipe.
	drainDelay = time.Second
	// killWait bounds each wait after a SIGKILL.
	killWait = 2 * time.Second
)

// supervisorStartTimeout bounds the wait for the supervisor's report that
// the server runs (a variable for the tests).
var supervisorStartTimeout = 10 * time.Second

// Process is a running server. Its methods are safe for concurrent use.
type Process struct {
	cmd        *exec.Cmd // the server, when started directly; nil under the supervisor
	supervised bool
	exitCh     chan error // under the supervisor: the server's exit, as it reported it
	stdin      *os.File
	stdout     *os.File
	stderr     *os.File // read end, drained into ring
	ring       *ring
	copyDone   chan struct{}

	mu     sync.Mutex
	pid    int  // the server's pid, which is also its process group id
	exited bool // set before the server is reaped (or once the supervisor reports it); no signal may follow it
	// reapedErr is the exit status the supervisor reported at the reaping.
	reapedErr error
	sys       sysState

	done    chan struct{}
	exitErr error

	closeOnce sync.Once
	closeErr  error
	pipesOnce sync.Once
}

// Start spawns the server described by spec. Its stderr is captured from
// the moment of spawn; stdin and stdout are the caller's through Stdin and
// Stdout. The caller should always call Close, even after the process has
// exited: it is what waits for the stderr reader and closes the pipes at once.
func Start(spec Spec) (*Process, error) {
	if spec.Command == "" {
		return nil, errors.New("proc: empty command")
	}
	if spec.Dir != "" {
		// Checked here: a failed chdir in the child reads as a missing program.
		if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("proc: starting %s: working directory %s is not a directory", spec.Command, spec.Dir)
		}
	}
	name, args := ResolveCommand(spec.Command, spec.Args)
	limit := spec.StderrLimit
	if limit <= 0 {
		limit = defaultStderrLimit
	}
	p := &Process{
		ring:     newRing(limit),
		copyDone: make(chan struct{}),
		done:     make(chan struct{}),
	}

	supPath, supArgs, supervised := supervisorFor(spec.Supervise)
	p.supervised = supervised
	if spec.Sandbox != nil {
		var err error
		if name, args, err = sandboxCommand(spec.Sandbox, name, args, supervised); err != nil {
			return nil, fmt.Errorf("proc: starting %s: %w", spec.Command, err)
		}
	}
	var req spawnReq
	if supervised {
		path := name
		if filepath.Base(name) == name {
			lp, err := exec.LookPath(name)
			if err != nil {
				return nil, fmt.Errorf("proc: starting %s: %w", spec.Command, err)
			}
			path = lp
		}
		var err error
		if req, err = supervisedSpawn(path, name, args, spec); err != nil {
			return nil, fmt.Errorf("proc: starting %s: %w", spec.Command, err)
		}
		if spec.Sandbox != nil {
			if err := sandboxRequest(spec.Sandbox, &req); err != nil {
				return nil, fmt.Errorf("proc: starting %s: %w", spec.Command, err)
			}
		}
		p.exitCh = make(chan error, 1)
	} else {
		p.cmd = exec.Command(name, args...)
		p.cmd.Env = spec.Env
		if p.cmd.Env == nil {
			p.cmd.Env = []string{}
		}
		p.cmd.Dir = spec.Dir
	}

	if supervised {
		for retried := false; ; retried = true {
			parentEnds, childEnds, err := pipes()
			if err != nil {
				return nil, err
			}
			p.stdin, p.stdout, p.stderr = parentEnds[0], parentEnds[1], parentEnds[2]
			pid, err, retry := startSupervised(p, supPath, supArgs, req, childEnds)
			if err != nil {
				closeAll(parentEnds)
				if retry && !retried {
					continue // the supervisor died with the request: a new one, once
				}
				return nil, fmt.Errorf("proc: starting %s: %w", spec.Command, err)
			}
			p.mu.Lock()
			p.pid = pid
			p.mu.Unlock()
			go p.copyStderr()
			go p.wait()
			return p, nil
		}
	}

	parentEnds, childEnds, err := pipes()
	if err != nil {
		return nil, err
	}
	p.stdin, p.stdout, p.stderr = parentEnds[0], parentEnds[1], parentEnds[2]
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = childEnds[0], childEnds[1], childEnds[2]
	p.prepare()
	err = p.spawn()
	closeAll(childEnds)
	if err != nil {
		closeAll(parentEnds)
		return nil, fmt.Errorf("proc: starting %s: %w", spec.Command, err)
	}
	go p.copyStderr()
	go p.wait()
	p.mu.Lock()
	p.pid = p.cmd.Process.Pid
	p.mu.Unlock()
	return p, nil
}

// pipes makes the server's stdin, stdout and stderr: our own pipes rather
// than exec's, so that exec starts no copying goroutines (Wait cannot hang
// on a grandchild holding a pipe) and stdout stays readable after the exit
// until drained. parentEnds are ours, childEnds the server's.
func pipes() (parentEnds, childEnds []*os.File, err error) {
	for i := range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(parentEnds)
			closeAll(childEnds)
			return nil, nil, fmt.Errorf("proc: %w", err)
		}
		if i == 0 { // stdin: the child reads
			r, w = w, r
		}
		parentEnds, childEnds = append(parentEnds, r), append(childEnds, w)
	}
	return parentEnds, childEnds, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

func (p *Process) copyStderr() {
	defer close(p.copyDone)
	p.ring.drain(p.stderr, 32<<10)
}

func (p *Process) wait() {
	p.exitErr = p.waitOS()
	close(p.done)
	time.AfterFunc(drainDelay, p.closePipes)
}

func (p *Process) closePipes() {
	p.pipesOnce.Do(func() {
		p.stdin.Close()
		p.stdout.Close()
		p.stderr.Close()
	})
}

// Stdin is the server's standard input. Closing it is the first step of a
// graceful shutdown; Close does it too.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the server's standard output. It reports EOF once every process
// holding the pipe has exited. Close closes it; so does the process's exit,
// after a short delay to drain it (stdin too).
func (p *Process) Stdout() io.ReadCloser { return p.stdout }

// StderrTail returns the last maxLines lines of the server's stderr (all
// kept lines if maxLines <= 0), from the last StderrLimit bytes.
func (p *Process) StderrTail(maxLines int) []string { return p.ring.tail(maxLines) }

// Pid is the server's process id, which is also its process group id on
// Unix. Under the supervisor it is the server's, not the supervisor's.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// Done is closed once the server has exited and been reaped; under the
// supervisor, once the supervisor has also reaped what the server left.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitErr is the exit error (nil for a zero exit status) once Done is
// closed, and nil before.
func (p *Process) ExitErr() error {
	select {
	case <-p.done:
		return p.exitErr
	default:
		return nil
	}
}

// Close stops the server in the order the MCP spec asks: close stdin, wait
// up to grace for it to exit, send SIGTERM to its process group, wait up to
// grace again, then SIGKILL the group. It then releases the pipes. Close is
// idempotent and safe to call concurrently; every call returns once the
// first one has finished, in about 2*grace at most (grace <= 0 kills at
// once). It returns an error only if the process could not be reaped.
func (p *Process) Close(grace time.Duration) error {
	p.closeOnce.Do(func() { p.closeErr = p.shutdown(grace) })
	return p.closeErr
}

func (p *Process) shutdown(grace time.Duration) error {
	defer p.release()
	p.stdin.Close()
	if p.waitDone(grace) {
		return nil
	}
	p.signal(sigTerm)
	if p.waitDone(grace) {
		return nil
	}
	p.signal(sigKill)
	if p.waitDone(killWait) {
		return nil
	}
	p.killDirect()
	if p.waitDone(killWait) {
		return nil
	}
	if state, ok := p.inKernel(); ok {
		// Not the supervisor's fault, and killing it would not free the
		// server: it ends when the kernel lets it (the mount answers), and
		// its end is then reported as any other.
		return fmt.Errorf("proc: process %d did not exit after SIGKILL: it is waiting in the kernel (state %c), as on a mount that stopped answering", p.Pid(), state)
	}
	p.killSupervisor()
	if p.waitDone(killWait) {
		return nil
	}
	return fmt.Errorf("proc: process %d did not exit after SIGKILL", p.Pid())
}

// WaitStderr waits up to d for everything the server wrote to stderr to be
// read into the tail (the pipe reached EOF). It reports whether it was. Use
// it after Done and before StderrTail: a server's last line (often the one
// that says why it died) may still be in the pipe when its exit is reaped.
// A grandchild holding stderr open makes it wait the whole d.
func (p *Process) WaitStderr(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.copyDone:
		return true
	case <-t.C:
		return false
	}
}

// release closes the pipes and waits (boundedly) for the stderr reader.
func (p *Process) release() {
	p.closePipes()
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-p.copyDone:
	case <-t.C:
	}
}

func (p *Process) waitDone(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// Terminate stops a server that is not serving yet (still starting, or
// stopped while it started): SIGTERM to its process group at once, up to
// grace for it to exit, then Kill. A program that cleans up on SIGTERM
// gets to: npx holds a lock in its cache while it resolves the package and
// removes it on SIGTERM; SIGKILLed, it leaves the lock, and every start of
// that package waits about a minute for it to go stale. It returns without
// waiting after Kill; Done closes when the server is gone.
func (p *Process) Terminate(grace time.Duration) error {
	if err := p.signal(sigTerm); err != nil {
		return p.Kill()
	}
	if p.waitDone(grace) {
		return nil
	}
	return p.Kill()
}

// Kill sends SIGKILL to the server's whole process group at once (under the
// supervisor, also everything the server left behind) and returns without
// waiting; Done closes when it is gone. Kill is idempotent.
func (p *Process) Kill() error {
	err := p.signal(sigKill)
	if p.supervised {
		time.AfterFunc(killWait, func() {
			if !p.waitDone(0) {
				p.killDirect()
			}
		})
	}
	return err
}

type sigKind int

const (
	sigTerm sigKind = iota
	sigKill
)
