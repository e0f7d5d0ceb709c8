package main

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command that leaves a busy orphan behind: measure waits for the orphan,
// counts its CPU among the command's children, and leaves nothing running.
func TestMeasureCountsWhatOutlivesTheCommand(t *testing.T) {
	pidFile := t.TempDir() + "/orphan"
	busy := "echo $$ > " + pidFile + "; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"
	cmd := exec.Command("/bin/sh", "-c", "sh -c '"+busy+"' & exit 3")
	m, err := measure(cmd, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("measure returned %v, want the command's exit status 3", err)
	}
	if m.own < 0 || m.children < 20*time.Millisecond {
		t.Errorf("own %v, children %v: the orphan's CPU (a 300,000-step shell loop) is missing", m.own, m.children)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("orphan %d still exists after measure", pid)
	}
}

// procCPU reads a running process's CPU time from the scheduler's account,
// in step with the kernel's tick count of the same process (which it
// replaces for its precision), and never going back.
func TestProcCPUReadsTheSchedulersAccount(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	deadline := time.Now().Add(30 * time.Second)
	var last time.Duration
	for procStatCPU(pid) < 200*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("the busy loop got %v of CPU in 30 s", procStatCPU(pid))
		}
		now := procCPU(pid)
		if now < last {
			t.Fatalf("procCPU went back: %v after %v", now, last)
		}
		last = now
		time.Sleep(20 * time.Millisecond)
	}
	ticks := procStatCPU(pid)
	exact := procCPU(pid)
	if exact < ticks-50*time.Millisecond || exact > ticks+200*time.Millisecond {
		t.Errorf("procCPU %v; the tick count read just before says %v", exact, ticks)
	}
	if exact%(10*time.Millisecond) == 0 {
		t.Errorf("procCPU %v is a whole number of ticks: read from /proc/PID/stat, not the scheduler", exact)
	}
}

// descendants finds a process's children and theirs, one in a session of
// its own too (as switchboard's supervisor and a setsid'd server are), and
// procsCPU counts their CPU: here a busy grandchild's.
func TestDescendantsAndTheirCPU(t *testing.T) {
	dir := t.TempDir()
	busy := "echo $$ > " + dir + "/busy; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo done > " + dir + "/done; sleep 60"
	cmd := exec.Command("/bin/sh", "-c", "setsid sh -c '"+busy+"' & sleep 60; wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var kids []int
	deadline := time.Now().Add(30 * time.Second)
	for {
		kids = descendants(cmd.Process.Pid)
		if _, err := os.Stat(dir + "/done"); err == nil && len(kids) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("descendants %v after 30 s, want the setsid'd shell, its sleep and the outer sleep", kids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer func() {
		for _, k := range kids {
			syscall.Kill(k, syscall.SIGKILL)
		}
	}()
	b, _ := os.ReadFile(dir + "/busy")
	busyPid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !slices.Contains(kids, busyPid) {
		t.Errorf("descendants %v lack the setsid'd shell %d", kids, busyPid)
	}
	if len(kids) != 3 {
		t.Errorf("descendants %v, want exactly 3", kids)
	}
	if cpu := procsCPU(kids); cpu < 20*time.Millisecond {
		t.Errorf("procsCPU %v: the busy shell's 200,000-step loop is missing", cpu)
	}
	if cpu := procsCPU([]int{cmd.Process.Pid}); cpu > 20*time.Millisecond {
		t.Errorf("the idle parent's CPU %v counts its children's", cpu)
	}
}
