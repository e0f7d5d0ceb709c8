package testserver_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A test server started by Command reads its stdin through the runtime's
// poller (the pipe is non-blocking while it serves), never in a blocking
// read(2): under Go 1.26 a goroutine entering such a read can hold up a
// garbage collection's stop-the-world, and so the server's answer, for 60 s
// (see jsonl.Stdin). The mode belongs to the pipe, so /proc shows it on the
// server's fd 0.
func TestServerReadsStdinThroughPoller(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, "echo")
	pid, err := strconv.Atoi(textOf(call(t, cs, "pid", nil)))
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	if !stdinNonblocking(t, pid) {
		t.Errorf("the server's stdin is in blocking mode: its reads block in read(2)")
	}
}

// stdinNonblocking reports whether process pid's fd 0 has O_NONBLOCK, from
// /proc/<pid>/fdinfo/0 ("flags:" in octal).
func stdinNonblocking(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/0")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			fl, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatalf("fdinfo flags %q: %v", v, err)
			}
			return fl&syscall.O_NONBLOCK != 0
		}
	}
	t.Fatalf("no flags in /proc/%d/fdinfo/0:\n%s", pid, b)
	return false
}
