//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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

// rssAnon returns the anonymous resident memory of process pid in KiB
// (RssAnon: its heap, stacks and runtime, not the pages of its binary,
// which VmRSS counts and other processes of the same binary share), or 0.
func rssAnon(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times (100 on every
// Linux this runs on).
const clockTick = 10 * time.Millisecond

// measureArg re-executes this program as the subreaper measure runs each
// command under (runMeasured): then the CPU of every process the command
// started is counted, also of those that end after it. switchboard's
// supervisor, which reaps the servers, exits just after the host.
const measureArg = "__bench-measure" // then the limit, the command's path and its args

// measure runs cmd to its end (killing it after limit) and reports its wall
// time and CPU time: its own (every thread of the process) and that of
// everything it started (supervisor and servers), whether the command
// reaped it or left it to end after itself.
func measure(cmd *exec.Cmd, limit time.Duration) (measured, error) {
	self, err := os.Executable()
	if err != nil {
		return measured{}, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return measured{}, err
	}
	defer r.Close()
	wrapped := exec.Command(self, append([]string{measureArg, limit.String(), cmd.Path}, cmd.Args[1:]...)...)
	wrapped.Dir, wrapped.Env = cmd.Dir, cmd.Env
	wrapped.Stdin, wrapped.Stdout, wrapped.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
	wrapped.ExtraFiles = []*os.File{w}
	runErr := wrapped.Run()
	w.Close()
	var rep measureReport
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return measured{}, fmt.Errorf("measuring %s: %v (%v)", cmd.Path, runErr, err)
	}
	m := measured{wall: rep.Wall, own: rep.Own, children: rep.Children}
	if rep.Err != "" {
		return m, errors.New(rep.Err)
	}
	return m, nil
}

// measureReport is what runMeasured writes on fd 3.
type measureReport struct {
	Wall, Own, Children time.Duration
	Err                 string // the command's failure, if it failed
}

// maybeRunMeasured runs runMeasured and exits when this process was
// started as measure's subreaper; otherwise it returns at once.
func maybeRunMeasured() {
	if len(os.Args) < 4 || os.Args[1] != measureArg {
		return
	}
	rep := runMeasured(os.Args[2], os.Args[3], os.Args[4:])
	out := os.NewFile(3, "report")
	json.NewEncoder(out).Encode(rep)
	out.Close()
	os.Exit(0)
}

// runMeasured runs the command as a child subreaper: whatever the command
// leaves behind is reparented here and reaped, so RUSAGE_CHILDREN at the
// end holds the CPU of the whole tree. The wall time ends when the command
// itself exits; its own CPU is read from /proc/<pid>/stat while it is a
// zombie (waitid with WNOWAIT), before it is reaped.
func runMeasured(limitArg, path string, args []string) measureReport {
	limit, err := time.ParseDuration(limitArg)
	if err != nil {
		return measureReport{Err: err.Error()}
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return measureReport{Err: fmt.Sprintf("PR_SET_CHILD_SUBREAPER: %v", err)}
	}
	cmd := exec.Command(path, args...)
	cmd.Args[0] = filepath.Base(path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measureReport{Err: err.Error()}
	}
	t := time.AfterFunc(limit, killChildren)
	defer t.Stop()
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	rep := measureReport{Wall: time.Since(start), Own: -1, Children: -1}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err == nil {
		if i := bytes.LastIndexByte(data, ')'); i >= 0 {
			if f := strings.Fields(string(data[i+1:])); len(f) > 12 { // f[0] is field 3, the state
				u, _ := strconv.ParseInt(f[11], 10, 64)
				s, _ := strconv.ParseInt(f[12], 10, 64)
				rep.Own = time.Duration(u+s) * clockTick
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		rep.Err = err.Error()
	}
	// What it left: bounded, as the command was.
	t.Reset(max(limit-time.Since(start), 10*time.Second))
	for {
		_, err := unix.Wait4(-1, nil, 0, nil)
		if err == unix.ECHILD {
			break
		}
	}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_CHILDREN, &ru) == nil && rep.Own >= 0 {
		total := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		rep.Children = max(total-rep.Own, 0)
	}
	return rep
}

// killChildren SIGKILLs every child of this process.
func killChildren() {
	for _, pid := range children(os.Getpid()) {
		unix.Kill(pid, unix.SIGKILL)
	}
}

// children are process pid's children now, read from each of its
// threads' /proc children list.
func children(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				out = append(out, k)
			}
		}
	}
	return out
}

// descendants are the processes below pid now (children, theirs, …).
func descendants(pid int) []int {
	var out []int
	for _, k := range children(pid) {
		out = append(append(out, k), descendants(k)...)
	}
	return out
}

// procsCPU is the sum of procCPU over pids.
func procsCPU(pids []int) time.Duration {
	var d time.Duration
	for _, p := range pids {
		d += procCPU(p)
	}
	return d
}

// procCPU returns the CPU time process pid has used so far, its children
// not counted, or 0: the scheduler's own account in nanoseconds (the
// process's CPU-time clock, every thread of it, ended ones too), where
// /proc/<pid>/stat has utime and stime in 10 ms ticks, each tick charged
// to whichever task it found running — over the bench's half-second runs
// a ±5 % noise between gateways that run in bursts of microseconds.
func procCPU(pid int) time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(processCPUClock(pid), &ts) == nil {
		return time.Duration(ts.Nano())
	}
	return procStatCPU(pid)
}

// processCPUClock is the clock ID of process pid's CPU-time clock, as
// clock_getcpuclockid(3) makes it on Linux: the process-wide (not
// thread) clock of the scheduler's runtime account.
func processCPUClock(pid int) int32 {
	const cpuClockSched = 2
	return int32(^pid<<3 | cpuClockSched)
}

// procStatCPU is utime and stime of /proc/<pid>/stat, or 0.
func procStatCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command, which is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	// utime and stime, fields 14 and 15 of stat (11 and 12 after the
	// state), in clock ticks of USER_HZ, 100 on Linux.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
