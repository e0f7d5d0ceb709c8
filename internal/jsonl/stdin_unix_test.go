//go:build unix

package jsonl_test

import (
	"context"
	"encoding/json"
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

const (
	stdinChildEnv  = "JSONL_TEST_STDIN_CHILD"
	stdoutChildEnv = "JSONL_TEST_STDOUT_CHILD"
)

func TestMain(m *testing.M) {
	if os.Getenv(stdinChildEnv) == "1" {
		os.Exit(stdinChild())
	}
	if os.Getenv(stdoutChildEnv) == "1" {
		os.Exit(stdoutChild())
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
	reportFd(os.Stdout, 0)
	return 0
}

// reportFd says whether fd is still open and blocking again, for the test
// that started this child.
func reportFd(w io.Writer, fd int) {
	var st syscall.Stat_t
	fmt.Fprintf(w, "fd %d open: %v\n", fd, syscall.Fstat(fd, &st) == nil)
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	fmt.Fprintf(w, "fd %d blocking: %v\n", fd, err == nil && fl&unix.O_NONBLOCK == 0)
}

// child is this test binary run as the child named by env (TestMain).
func child(t *testing.T, env string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run", "^$")
	cmd.Env = append(os.Environ(), env+"=1")
	return cmd
}

// TestStdinPipe: a serve-like process whose stdin is a pipe reads it
// through the poller (Close interrupts a Read without waiting for the
// peer), keeps fd 0 open after the connection closes (no later file can
// take the number), and leaves the pipe blocking again.
func TestStdinPipe(t *testing.T) {
	cmd := child(t, stdinChildEnv)
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

// bigText is larger than a pipe's buffer (64 KiB on Linux), so writing it
// to a reader that waits fills the pipe and the write must wait too.
var bigText = strings.Repeat("0123456789abcdef", 20<<10)

// stdoutChild writes two messages to its standard output through
// jsonl.Stdout, the first larger than the pipe, restores, and reports on
// stderr whether the duplicate was pollable and fd 1 is blocking again.
func stdoutChild() int {
	f, restore := jsonl.Stdout()
	fmt.Fprintln(os.Stderr, "pollable:", f != os.Stdout)
	conn, err := (&jsonl.Transport{Reader: io.NopCloser(strings.NewReader("")), Writer: f}).Connect(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		return 1
	}
	for i, text := range []string{bigText, "small"} {
		params := fmt.Sprintf(`{"level":"info","data":%q}`, text)
		msg := &jsonrpc.Request{Method: "notifications/message", Params: []byte(params)}
		if err := conn.Write(context.Background(), msg); err != nil {
			fmt.Fprintf(os.Stderr, "write %d: %v\n", i, err)
			return 1
		}
	}
	conn.Close()
	restore()
	reportFd(os.Stderr, 1)
	return 0
}

// TestStdoutPipe: a serve-like process whose stdout is a pipe writes it
// through the poller without losing or reordering a byte, also when a
// message is larger than the pipe and the reader is slow to start, and
// leaves fd 1 open and blocking again.
func TestStdoutPipe(t *testing.T) {
	cmd := child(t, stdoutChildEnv)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let the child fill the pipe and wait
	data, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := within(t, 20*time.Second, "the child", func() error { return cmd.Wait() }); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines (%d bytes), want 2; child said:\n%s", len(lines), len(data), stderr.String())
	}
	for i, want := range []string{bigText, "small"} {
		m, err := jsonl.Decode([]byte(lines[i]))
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		var p struct{ Data string }
		if err := json.Unmarshal(m.(*jsonrpc.Request).Params, &p); err != nil || p.Data != want {
			t.Fatalf("line %d: data of %d bytes (err %v), want %d bytes", i, len(p.Data), err, len(want))
		}
	}
	for _, want := range []string{"pollable: true", "fd 1 open: true", "fd 1 blocking: true"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("child said:\n%s\nwant %q", stderr.String(), want)
		}
	}
}
