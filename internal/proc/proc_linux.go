package proc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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

func setPdeathsig(a *syscall.SysProcAttr, supervisor bool) {
	if supervisor {
		a.Pdeathsig = syscall.SIGTERM // catchable: the supervisor cleans up
	} else {
		a.Pdeathsig = syscall.SIGKILL // reaches only the server, not its children
	}
}

// startCmd starts cmd on the spawn thread.
func startCmd(cmd *exec.Cmd) error {
	spawnOnce.Do(startSpawnThread)
	res := make(chan error, 1)
	spawnThread <- func() { res <- cmd.Start() }
	return <-res
}

func (p *Process) spawn() error { return startCmd(p.cmd) }

// inKernel reports whether the server, SIGKILLed and still not reaped, is
// its parent's child with a thread still alive: the kernel holds that
// thread (an uninterruptible wait, as on a FUSE or NFS mount whose server
// is gone), not its parent. The held thread is often not the main one (a
// Node or Python worker reading a file), whose task is then a zombie while
// the process cannot end. The state is /proc's letter for the live
// thread, usually D.
func (p *Process) inKernel() (byte, bool) {
	parent := os.Getpid()
	if p.supervised {
		parent = p.sys.sup.cmd.Process.Pid
	}
	pid := p.Pid()
	st, ok := readStat(pid)
	if !ok || st.ppid != parent {
		return 0, false
	}
	alive := func(s byte) bool { return s != 'Z' && s != 'X' }
	if alive(st.state) {
		return st.state, true
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return 0, false
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil || tid == pid {
			continue
		}
		if ts, ok := readStat(tid); ok && alive(ts.state) {
			return ts.state, true
		}
	}
	return 0, false
}

func (p *Process) waitOS() error {
	if p.supervised {
		return p.waitSupervised()
	}
	// Wait for the exit without reaping, so the zombie keeps the pid and
	// pgid reserved while afterExit signals the group.
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, p.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	p.mu.Lock()
	p.afterExit()
	p.mu.Unlock()
	return p.cmd.Wait()
}

// killTagged SIGKILLs every process whose environment carries a TagEnv
// value starting with prefix: what a dead supervisor's servers left, now
// out of anyone's tree. A pass reads every process's environment, so it
// runs only when a supervisor has died; it repeats until a pass finds
// nothing new for sweepQuiet (what forked during the last one is found by
// the next; one that cannot be killed, in uninterruptible sleep, is not
// waited for), for sweepLimit at most. Not one empty pass: a process that
// forks a successor and exits every few ms is missed by a pass now and
// then, the more so on a loaded machine, and a hunt that stopped there let
// it live on.
func killTagged(prefix string) {
	killed := map[int]bool{}
	ownGroup := syscall.Getpgrp()
	lastFound := time.Now()
	for giveUp := time.Now().Add(sweepLimit); time.Now().Before(giveUp); time.Sleep(10 * time.Millisecond) {
		pids := allPids()
		found := pids == nil // out of descriptors, say: look again
		// Newest first: a process that forks a successor and exits lives
		// a few hundred µs; read at once after the listing, it is still
		// there, and its group is then known.
		slices.Sort(pids) // /proc lists them as names: "10" before "9"
		slices.Reverse(pids)
		groups := map[int]bool{} // of tagged processes; true: no member seen untagged
		var tagged []int
		for _, pid := range pids {
			if pid == os.Getpid() {
				continue
			}
			tag, err := processTag(pid)
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				found = true
				continue
			}
			if !strings.HasPrefix(tag, prefix) {
				continue
			}
			tagged = append(tagged, pid)
			if g := groupOf(pid); g > 1 && g != ownGroup {
				groups[g] = true
			}
		}
		// Such a group is killed as a whole, unless it has a member that is
		// not tagged: a tag is only a variable, and a daemon that copied a
		// tagged caller's environment into its child keeps its group.
		if len(groups) > 0 {
			for _, pid := range allPids() {
				if g := groupOf(pid); groups[g] {
					if tag, err := processTag(pid); err == nil && !strings.HasPrefix(tag, prefix) {
						groups[g] = false
					}
				}
			}
			for g, all := range groups {
				if all {
					killGroup(g, syscall.SIGKILL)
				}
			}
		}
		for _, pid := range tagged {
			syscall.Kill(pid, syscall.SIGKILL)
			found = found || !killed[pid]
			killed[pid] = true
		}
		if found {
			lastFound = time.Now()
		} else if time.Since(lastFound) >= sweepQuiet {
			return
		}
	}
}

// sweepQuiet is how long killTagged looks on after its last find.
const sweepQuiet = 300 * time.Millisecond

// groupOf is the process group of pid (0 if it cannot be read).
func groupOf(pid int) int {
	st, _ := readStat(pid)
	return st.pgrp
}
