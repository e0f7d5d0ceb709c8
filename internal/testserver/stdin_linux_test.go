package testserver_test

import (
	"strconv"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// A test server started by Command reads its stdin through the runtime's
// poller (the pipe is non-blocking while it serves), never in a blocking
// read(2): under Go 1.26 a goroutine entering such a read can hold up a
// garbage collection's stop-the-world, and so the server's answer, for 60 s
// (see jsonl.Stdin).
func TestServerReadsStdinThroughPoller(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, "echo")
	pid, err := strconv.Atoi(textOf(call(t, cs, "pid", nil)))
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	nb, err := testserver.StdinNonblocking(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !nb {
		t.Errorf("the server's stdin is in blocking mode: its reads block in read(2)")
	}
}
