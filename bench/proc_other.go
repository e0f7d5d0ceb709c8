//go:build !linux

package main

import (
	"os/exec"
	"time"
)

func vmRSS(int) int64 { return 0 }

func rssAnon(int) int64 { return 0 }

func maybeRunMeasured() {}

// measure runs cmd to its end (killing it after limit). Outside Linux the
// CPU time is the process's and its children's together (own = -1).
func measure(cmd *exec.Cmd, limit time.Duration) (measured, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measured{}, err
	}
	t := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	defer t.Stop()
	err := cmd.Wait()
	m := measured{wall: time.Since(start), own: -1, children: -1}
	if cmd.ProcessState != nil {
		m.children = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return m, err
}

func procCPU(int) time.Duration { return 0 }

func descendants(int) []int { return nil }

func procsCPU([]int) time.Duration { return 0 }
