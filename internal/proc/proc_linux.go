package proc

import (
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Pdeathsig fires when the thread that forked the child exits, not the
// process. All spawns therefore happen on one locked OS thread that lives
// as long as the host, so the signal fires exactly when the host dies.
var (
	spawnOnce   sync.Once
	spawnThread = make(chan func())
)

func startSpawnThread() {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread must never exit
		for f := range spawnThread {
			f()
		}
	}()
}

func setPdeathsig(a *syscall.SysProcAttr, supervised bool) {
	if supervised {
		a.Pdeathsig = syscall.SIGTERM // catchable: the supervisor cleans up
	} else {
		a.Pdeathsig = syscall.SIGKILL // reaches only the server, not its children
	}
}

func (p *Process) spawn() error {
	spawnOnce.Do(startSpawnThread)
	res := make(chan error, 1)
	spawnThread <- func() { res <- p.cmd.Start() }
	return <-res
}

func (p *Process) waitOS() error {
	// Wait for the exit without reaping, so the zombie keeps the pid and
	// pgid reserved while afterExit signals the group.
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, p.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	p.mu.Lock()
	p.afterExit()
	p.mu.Unlock()
	err := p.cmd.Wait()
	p.afterReap(err)
	return err
}
