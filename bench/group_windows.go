package main

import (
	"os"
	"os/exec"
)

// ownGroup: Windows has no process groups to signal; the bench kills the
// process itself.
func ownGroup(*exec.Cmd) {}

// killGroup kills process pg (the bench's gateways run on Linux).
func killGroup(pg int, _ bool) {
	if p, err := os.FindProcess(pg); err == nil {
		_ = p.Kill()
	}
}
