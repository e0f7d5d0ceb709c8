package testserver

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// StdinNonblocking reports whether process pid's standard input is in
// non-blocking mode, read from /proc/<pid>/fdinfo/0 ("flags:" in octal).
// A server that reads a pipe through the runtime's poller (jsonl.Stdin)
// has it so while it serves: the mode belongs to the pipe.
func StdinNonblocking(pid int) (bool, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/0")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			fl, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				return false, fmt.Errorf("flags %q in /proc/%d/fdinfo/0: %w", v, pid, err)
			}
			return fl&syscall.O_NONBLOCK != 0, nil
		}
	}
	return false, fmt.Errorf("no flags in /proc/%d/fdinfo/0", pid)
}
