package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_CHILD_SUBREAPER: %w", err)
	}
	return nil
}

func serverAttr() *syscall.SysProcAttr {
	// Should the supervisor itself be SIGKILLed, the server goes too.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitServer blocks until the server has exited, reaping orphans reparented
// to us meanwhile. The server's zombie is left for the returned func to reap,
// so its pgid stays reserved until then.
func waitServer(pid int) func() syscall.WaitStatus {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		who := siginfoPid(&info)
		if err != nil || who == pid {
			break
		}
		var ws syscall.WaitStatus
		syscall.Wait4(who, &ws, syscall.WNOHANG, nil)
	}
	return func() syscall.WaitStatus {
		var ws syscall.WaitStatus
		for {
			_, err := syscall.Wait4(pid, &ws, 0, nil)
			if err != syscall.EINTR {
				return ws
			}
		}
	}
}

// siginfoPid reads si_pid, which x/sys/unix does not expose: it follows
// three ints, aligned to the pointer size (the union holds pointers).
func siginfoPid(info *unix.Siginfo) int {
	const ptr = unsafe.Sizeof(uintptr(0))
	const off = (12 + ptr - 1) &^ (ptr - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), off)))
}

// haveChildren reports whether this process has a child, live or not yet
// reaped.
func haveChildren() bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WSTOPPED|unix.WCONTINUED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		return err != unix.ECHILD
	}
}

func reapChildren() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}

// leftovers lists the live members of group pgid and every live descendant
// of this process, from one scan of /proc. The common case, a server that
// left nothing behind, is told by two system calls instead: no process is
// in the group and we have no child (every descendant left is a child of
// ours or of one, as orphans are reparented to us, the subreaper). Reading
// every process's stat file cost each supervisor milliseconds of CPU at
// exit, and a host starts one per server.
func leftovers(pgid int) []int {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH && !haveChildren() {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		state, ppid, pgrp, ok := parseStat(b)
		if !ok || state == 'Z' {
			continue
		}
		children[ppid] = append(children[ppid], pid)
		if pgrp == pgid {
			out = append(out, pid)
		}
	}
	queue := children[os.Getpid()]
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], children[pid]...)
		out = append(out, pid)
	}
	return out
}

// parseStat reads state, ppid and pgrp from /proc/PID/stat. The command
// name may hold spaces and parentheses, so fields start after the last ')'.
func parseStat(b []byte) (state byte, ppid, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	return f[0][0], ppid, pgrp, err1 == nil && err2 == nil
}
