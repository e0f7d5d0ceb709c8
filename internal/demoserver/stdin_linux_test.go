package demoserver_test

import (
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/demoserver"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
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
	nb, err := testserver.StdinNonblocking(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !nb {
		t.Errorf("the demo's stdin is in blocking mode: its reads block in read(2)")
	}
}
