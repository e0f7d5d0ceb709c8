//go:build linux || darwin

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

type sysState struct{}

// prepare puts the direct child in a process group of its own, so signals
// reach whatever it spawns and a terminal's Ctrl-C reaches only the host.
func (p *Process) prepare() {
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(p.cmd.SysProcAttr, p.supervised)
}

// signal delivers a shutdown step. Plain: to the server's group. Supervised:
// SIGTERM goes to the supervisor, which forwards it to the server's group;
// SIGKILL goes straight to the server's group (no need to trust a wedged
// supervisor) and SIGUSR1 tells the supervisor to kill its leftovers now.
func (p *Process) signal(k sigKind) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return nil
	}
	child := p.cmd.Process.Pid
	switch {
	case !p.supervised && k == sigTerm:
		return killGroup(child, syscall.SIGTERM)
	case !p.supervised:
		return killGroup(child, syscall.SIGKILL)
	case k == sigTerm:
		return ignoreGone(syscall.Kill(child, syscall.SIGTERM))
	default:
		return errors.Join(killGroup(p.pid, syscall.SIGKILL), ignoreGone(syscall.Kill(child, syscall.SIGUSR1)))
	}
}

// killDirect is the last resort: SIGKILL the direct child's group and the
// server's group, supervisor or not.
func (p *Process) killDirect() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return
	}
	killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	killGroup(p.pid, syscall.SIGKILL)
}

// afterExit runs under p.mu once the direct child has exited.
func (p *Process) afterExit() {
	p.exited = true
	if !p.supervised {
		// The server is gone; what it left in its group are orphans we
		// promised to reap. (On Linux its zombie still holds the pgid.)
		killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// afterReap runs once the direct child has been reaped.
func (p *Process) afterReap(err error) {
	var ee *exec.ExitError
	if p.supervised && errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			// The supervisor was killed (OOM killer, or our last resort)
			// and may not have cleaned up; the server has Pdeathsig, its
			// group may not.
			p.mu.Lock()
			killGroup(p.pid, syscall.SIGKILL)
			p.mu.Unlock()
		}
	}
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
