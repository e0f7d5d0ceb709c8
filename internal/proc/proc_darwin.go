package proc

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// macOS has no parent-death signal: the supervisor polls getppid instead.
func setPdeathsig(*syscall.SysProcAttr, bool) {}

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

func (p *Process) spawn() error { return startCmd(p.cmd) }

// inKernel reports whether the server, SIGKILLed seconds ago and still
// not reaped, is its parent's child and not a zombie: on macOS a process
// turns zombie once its last thread has ended, so one that is not is held
// by the kernel (a thread waiting on a mount that stopped answering), not
// by a wedged parent. The state given is 'D', Linux's letter for it.
func (p *Process) inKernel() (byte, bool) {
	parent := os.Getpid()
	if p.supervised {
		parent = p.sys.sup.cmd.Process.Pid
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", p.Pid())
	if err != nil || kp.Proc.P_pid != int32(p.Pid()) || int(kp.Eproc.Ppid) != parent || kp.Proc.P_stat == sZomb {
		return 0, false
	}
	return 'D', true
}

// sZomb is p_stat's value for a zombie (<sys/proc.h>: SZOMB).
const sZomb = 5

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
