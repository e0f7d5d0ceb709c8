package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
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
