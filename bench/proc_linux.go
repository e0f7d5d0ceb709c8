//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// vmRSS returns the resident set size of process pid in KiB, or 0.
func vmRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// childrenPSS sums the proportional set size (KiB) of the direct children
// of pid: for serve, its supervisor processes.
func childrenPSS(pid int) int64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var sum int64
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		roll, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", child))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(roll), "\n") {
			if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				sum += kb
			}
		}
	}
	return sum
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times (100 on every
// Linux this runs on).
const clockTick = 10 * time.Millisecond

// measure runs cmd to its end (killing it after limit) and reports its wall
// time and CPU time: its own (every thread of the process) and that of the
// children it reaped (supervisors and servers). It catches the process as a
// zombie (waitid with WNOWAIT) to read /proc/<pid>/stat before reaping it.
func measure(cmd *exec.Cmd, limit time.Duration) (measured, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measured{}, err
	}
	t := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	defer t.Stop()
	var info [128]byte // siginfo_t
	for {
		const pPID, wEXITED, wNOWAIT = 1, 4, 0x1000000
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(cmd.Process.Pid),
			uintptr(unsafe.Pointer(&info[0])), wEXITED|wNOWAIT, 0, 0)
		if e != syscall.EINTR {
			break
		}
	}
	m := measured{wall: time.Since(start), own: -1, children: -1}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err == nil {
		if i := bytes.LastIndexByte(data, ')'); i >= 0 {
			f := strings.Fields(string(data[i+1:])) // f[0] is field 3, the state
			tick := func(k int) time.Duration {
				n, _ := strconv.ParseInt(f[k], 10, 64)
				return time.Duration(n) * clockTick
			}
			if len(f) > 14 {
				m.own = tick(11) + tick(12)      // utime, stime
				m.children = tick(13) + tick(14) // cutime, cstime
			}
		}
	}
	err := cmd.Wait()
	return m, err
}
