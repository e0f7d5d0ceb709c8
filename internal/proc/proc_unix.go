//go:build linux || darwin

package proc

import (
	"errors"
	"strconv"
	"syscall"
	"time"
)

// sysState is the supervisor a supervised server runs under, and the ID of
// its spawn there.
type sysState struct {
	sup *supervisor
	id  uint64
}

// prepare puts a directly started server in a process group of its own, so
// signals reach whatever it spawns and a terminal's Ctrl-C reaches only the
// host.
func (p *Process) prepare() {
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(p.cmd.SysProcAttr, false)
}

// signal delivers a shutdown step to the server's process group: the host
// signals it itself, supervised or not (no need to trust a wedged
// supervisor), until the server is reaped. A SIGKILL also tells the
// supervisor to kill what the server left at once, without the usual
// grace, also while it sweeps.
func (p *Process) signal(k sigKind) error {
	if p.supervised && k == sigKill {
		// Not under p.mu: the host's event reader takes it (dispatch), and
		// must never wait on a write to the supervisor, which may itself be
		// waiting for the host to read its events.
		p.sys.sup.send(frameKill, killReq{ID: p.sys.id})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return nil
	}
	if k == sigTerm {
		return killGroup(p.pid, syscall.SIGTERM)
	}
	return killGroup(p.pid, syscall.SIGKILL)
}

// killSupervisor is Close's last resort under a supervisor that has not
// reported the server's end: it kills that supervisor, and with it every
// server it holds (see supervisor.kill).
func (p *Process) killSupervisor() {
	if p.supervised {
		p.sys.sup.kill()
	}
}

// killDirect is the last resort: SIGKILL the server's group again.
func (p *Process) killDirect() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exited {
		killGroup(p.pid, syscall.SIGKILL)
	}
}

// afterExit runs under p.mu once the server has exited.
func (p *Process) afterExit() {
	p.exited = true
	if !p.supervised {
		// The server is gone; what it left in its group are orphans we
		// promised to reap. (On Linux its zombie still holds the pgid.)
		killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// waitSupervised waits for the supervisor's report of the server's exit,
// sent once it has also swept what the server left.
func (p *Process) waitSupervised() error {
	err := <-p.exitCh
	p.mu.Lock()
	p.afterExit()
	p.mu.Unlock()
	if errors.Is(err, errSupervisorGone) {
		// Killed with its supervisor (Pdeathsig); now reparented, it is
		// reaped elsewhere. Done waits, boundedly, until the group is gone.
		waitGroupGone(p.pid, killWait)
	}
	return err
}

// ExitError is a supervised server's exit status, as the supervisor reaped
// it. (A server started directly reports an *exec.ExitError.)
type ExitError struct {
	Status syscall.WaitStatus
}

func exitError(ws syscall.WaitStatus) error {
	if ws.Exited() && ws.ExitStatus() == 0 {
		return nil
	}
	return &ExitError{ws}
}

// Error reads as os.ProcessState's does: "exit status 1", "signal: killed".
func (e *ExitError) Error() string {
	switch ws := e.Status; {
	case ws.Exited():
		return "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		s := "signal: " + ws.Signal().String()
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return s
	}
	return "wait status " + strconv.Itoa(int(e.Status))
}

// ExitCode is the exit code, or -1 if the server was killed by a signal.
func (e *ExitError) ExitCode() int { return e.Status.ExitStatus() }

// Signal is the signal that killed the server, or 0 if it exited.
func (e *ExitError) Signal() syscall.Signal {
	if e.Status.Signaled() {
		return e.Status.Signal()
	}
	return 0
}

// killGroup signals process group pgid. It refuses pgid <= 1: kill(0) and
// kill(-1) would hit the host's own group or every process we may signal.
func killGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return nil
	}
	return ignoreGone(syscall.Kill(-pgid, sig))
}

func ignoreGone(err error) error {
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// waitGroupGone polls until process group pgid has no member, or d passed.
func waitGroupGone(pgid int, d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if syscall.Kill(-pgid, 0) == syscall.ESRCH {
			return
		}
	}
}

// groupGone reports that process group pgid, whose leader has been reaped,
// is no more: it has no member, or its id names a process again, which can
// only be a new one (a group's id is not reused while it has members). Its
// id must not be signalled after that.
func groupGone(pgid int) bool {
	return syscall.Kill(-pgid, 0) == syscall.ESRCH || syscall.Kill(pgid, 0) != syscall.ESRCH
}
