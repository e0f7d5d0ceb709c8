package proc

import (
	"os/exec"
	"syscall"
)

// macOS has no parent-death signal: the supervisor polls getppid instead.
func setPdeathsig(*syscall.SysProcAttr, bool) {}

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

func (p *Process) spawn() error { return startCmd(p.cmd) }

// inKernel is Linux's (/proc); on macOS a server that outlasts its
// SIGKILL is taken for a wedged supervisor's.
func (p *Process) inKernel() (byte, bool) { return 0, false }

func (p *Process) waitOS() error {
	if p.supervised {
		return p.waitSupervised()
	}
	// No waitid(WNOWAIT) here: the pid is reaped before afterExit signals
	// the group. The group only survives the leader if members remain, and
	// then its id cannot be reused.
	err := p.cmd.Wait()
	p.mu.Lock()
	p.afterExit()
	p.mu.Unlock()
	return err
}

// killTagged has nothing to do on macOS: there is no /proc to find what a
// dead supervisor's servers left, and no subreaper had kept it anyway.
func killTagged(string) {}
