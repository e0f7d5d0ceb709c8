package proc

import "syscall"

// macOS has no parent-death signal: the supervisor polls getppid instead.
func setPdeathsig(*syscall.SysProcAttr, bool) {}

func (p *Process) spawn() error { return p.cmd.Start() }

func (p *Process) waitOS() error {
	// No waitid(WNOWAIT) here: the pid is reaped before afterExit signals
	// the group. The group only survives the leader if members remain, and
	// then its id cannot be reused.
	err := p.cmd.Wait()
	p.mu.Lock()
	p.afterExit()
	p.mu.Unlock()
	p.afterReap(err)
	return err
}
