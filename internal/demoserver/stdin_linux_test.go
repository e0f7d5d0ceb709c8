package demoserver_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/demoserver"
)

// The demo server reads its stdin through the runtime's poller (the pipe is
// non-blocking while it serves), never in a blocking read(2): under Go 1.26
// a goroutine entering such a read can hold up a garbage collection's
// stop-the-world, and so the demo's answer, for 60 s (see jsonl.Stdin).
func TestCommandReadsStdinThroughPoller(t *testing.T) {
	t.Parallel()
	exe, args, err := demoserver.Command()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	call(t, cs, "add", map[string]any{"a": 1, "b": 1})
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/fdinfo/0")
	if err != nil {
		t.Fatal(err)
	}
	_, v, _ := strings.Cut(string(b), "flags:")
	v, _, _ = strings.Cut(v, "\n")
	fl, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
	if err != nil {
		t.Fatalf("flags in /proc/%d/fdinfo/0 %q: %v", cmd.Process.Pid, v, err)
	}
	if fl&syscall.O_NONBLOCK == 0 {
		t.Errorf("the demo's stdin is in blocking mode (flags %o): its reads block in read(2)", fl)
	}
}
