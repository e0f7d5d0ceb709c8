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
