//go:build linux || darwin

package proc

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

const (
	canSupervise = true
	// hostGoneGrace is how long the server has between SIGTERM and SIGKILL
	// once the host has died.
	hostGoneGrace = 2 * time.Second
	// leftoverGrace is the same for what the server leaves behind when it exits.
	leftoverGrace = 500 * time.Millisecond
	// sweepLimit bounds the hunt for stragglers after SIGKILL.
	sweepLimit = 3 * time.Second
	// parentPoll is how often the host's liveness is checked: the only
	// signal of its death on macOS, a backstop on Linux.
	parentPoll = 500 * time.Millisecond
)

// runSupervisor implements the supervisor mode. args are
// HOSTPID PATH -- ARGV0 ARGS...; fd 3 is the control pipe to the host.
func runSupervisor(args []string) int {
	// The server's Pdeathsig belongs to the thread that forks it: this one,
	// locked until the process exits.
	runtime.LockOSThread()
	hostPid := 0
	if len(args) >= 4 && args[2] == "--" {
		hostPid, _ = strconv.Atoi(args[0])
	}
	if hostPid <= 0 {
		fmt.Fprintln(os.Stderr, "switchboard supervisor: bad arguments")
		return 2
	}
	syscall.CloseOnExec(3) // the control pipe is not the server's
	ctl := os.NewFile(3, "control")
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "switchboard supervisor: %v\n", err)
	}
	if os.Getppid() != hostPid {
		fmt.Fprintln(ctl, "err host exited before the server started")
		return 1
	}
	pid, err := syscall.ForkExec(args[1], args[3:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2}, // the host's pipes, passed straight through
		Sys:   serverAttr(),
	})
	if err != nil {
		fmt.Fprintf(ctl, "err fork/exec %s: %v\n", args[1], err)
		return 127
	}
	fmt.Fprintf(ctl, "pid %d\n", pid)
	ctl.Close()
	// The server alone must hold the host's stdin and stdout pipes: then its
	// death is EOF to the host at once, and a request written after it died
	// fails (EPIPE) instead of vanishing into a pipe nobody reads. That is
	// what lets the host retry a request that never reached the server.
	releaseStdio()

	exited := make(chan func() syscall.WaitStatus, 1)
	go func() { exited <- waitServer(pid) }()
	tick := time.NewTicker(parentPoll)
	defer tick.Stop()
	var killTimer <-chan time.Time
	grace := leftoverGrace
	hostGone := false
	for {
		select {
		case reap := <-exited:
			ws := reap()
			sweep(pid, grace)
			return exitStatus(ws)
		case s := <-sigs:
			switch {
			case s == syscall.SIGUSR1: // the host's Kill: everything, now
				grace = 0
				killGroup(pid, syscall.SIGKILL)
			case os.Getppid() != hostPid: // Pdeathsig
				hostGone = true
			default:
				killGroup(pid, s.(syscall.Signal))
			}
		case <-tick.C:
			hostGone = hostGone || os.Getppid() != hostPid
		case <-killTimer:
			killGroup(pid, syscall.SIGKILL)
		}
		if hostGone && killTimer == nil {
			killGroup(pid, syscall.SIGTERM)
			killTimer = time.After(hostGoneGrace)
		}
	}
}

// sweep kills what the server left: its group, and on Linux every
// descendant of ours (orphans are reparented to us, the subreaper). Each
// gets SIGTERM once, then SIGKILL after grace; sweep gives up after
// sweepLimit more.
func sweep(pgid int, grace time.Duration) {
	termBy := time.Now().Add(grace)
	giveUp := termBy.Add(sweepLimit)
	termed := map[int]bool{}
	for {
		reapChildren()
		left := leftovers(pgid)
		now := time.Now()
		if len(left) == 0 || now.After(giveUp) {
			return
		}
		for _, pid := range left {
			switch {
			case now.After(termBy):
				syscall.Kill(pid, syscall.SIGKILL)
			case !termed[pid]:
				termed[pid] = true
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exitStatus mirrors the server's status: its exit code, or death by the
// same signal, so the host's ExitErr reads as if there were no supervisor.
func exitStatus(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	switch s := ws.Signal(); s {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGKILL:
		signal.Reset(s)
		syscall.Kill(os.Getpid(), s)
		time.Sleep(time.Second) // the signal is on its way
	}
	return 128 + int(ws.Signal())
}

// releaseStdio points fds 0 and 1 at /dev/null, dropping the supervisor's
// references to the host's pipes (stderr stays for its own diagnostics).
func releaseStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	for _, fd := range []int{0, 1} {
		_ = dup2(int(null.Fd()), fd)
	}
}
