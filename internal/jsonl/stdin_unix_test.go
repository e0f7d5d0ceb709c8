//go:build unix

package jsonl_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

const stdinChildEnv = "JSONL_TEST_STDIN_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(stdinChildEnv) == "1" {
		os.Exit(stdinChild())
	}
	os.Exit(m.Run())
}

// stdinChild reads one message from its standard input through
// jsonl.Stdin, closes the connection while a second Read waits, restores,
// and reports on stdout what a test checks: the message, that Close ended
// the waiting Read, that fd 0 is still open and blocking again.
func stdinChild() int {
	f, restore := jsonl.Stdin()
	conn, err := (&jsonl.Transport{Reader: f, Writer: nopWriteCloser{os.Stdout}}).Connect(context.Background())
	if err != nil {
		fmt.Println("connect:", err)
		return 1
	}
	m, err := conn.Read(context.Background())
	if req, ok := m.(*jsonrpc.Request); ok && err == nil {
		fmt.Println("method:", req.Method)
	} else {
		fmt.Println("read:", err)
	}
	fmt.Println("pollable:", f != os.Stdin)
	done := make(chan error, 1)
	go func() { _, err := conn.Read(context.Background()); done <- err }()
	time.Sleep(50 * time.Millisecond)
	conn.Close()
	select {
	case <-done:
		fmt.Println("close ended read: true")
	case <-time.After(5 * time.Second):
		fmt.Println("close ended read: false")
	}
	restore()
	var st syscall.Stat_t
	fmt.Println("fd 0 open:", syscall.Fstat(0, &st) == nil)
	fl, err := unix.FcntlInt(0, unix.F_GETFL, 0)
	fmt.Println("fd 0 blocking:", err == nil && fl&unix.O_NONBLOCK == 0)
	return 0
}

// TestStdinPipe: a serve-like process whose stdin is a pipe reads it
// through the poller (Close interrupts a Read without waiting for the
// peer), keeps fd 0 open after the connection closes (no later file can
// take the number), and leaves the pipe blocking again.
func TestStdinPipe(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run", "^$")
	cmd.Env = append(os.Environ(), stdinChildEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	// The pipe stays open: only Close can end the child's second Read.
	err = within(t, 20*time.Second, "the child", func() error { return cmd.Wait() })
	in.Close()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	for _, want := range []string{"method: ping", "pollable: true", "close ended read: true", "fd 0 open: true", "fd 0 blocking: true"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("child said:\n%s\nwant %q", out.String(), want)
		}
	}
}
