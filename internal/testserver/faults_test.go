//go:build unix

package testserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// raw is a test server process driven by hand, without the SDK client.
type raw struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *syncBuffer
	done   chan error
}

func startRaw(t *testing.T, name string, args ...string) *raw {
	t.Helper()
	exe, argv := testserver.Command(name, args...)
	r := &raw{cmd: exec.Command(exe, argv...), stderr: &syncBuffer{}, done: make(chan error, 1)}
	r.cmd.Stderr = r.stderr
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.stdout = bufio.NewReader(out)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() { _ = r.cmd.Process.Kill() })
	return r
}

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}` + "\n"

func (r *raw) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, line); err != nil {
		t.Fatalf("writing to server: %v", err)
	}
}

// exited waits up to d for the process to exit and returns its error.
func (r *raw) exited(d time.Duration) (error, bool) {
	select {
	case err := <-r.done:
		r.done <- err
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// exitStatus waits for the process (which a failed Connect has already
// waited for) and returns its exit status.
func (c *child) exitStatus() int {
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Wait()
	}
	return c.cmd.ProcessState.ExitCode()
}

func TestHangInit(t *testing.T) {
	t.Parallel()
	t.Run("connect times out", func(t *testing.T) {
		t.Parallel()
		c := newChild(t, "hang-init")
		_, err := c.connect(connectOpts{timeout: 300 * time.Millisecond})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Connect to hang-init: %v, want its context's deadline", err)
		}
	})
	t.Run("no answer, exits on EOF", func(t *testing.T) {
		t.Parallel()
		r := startRaw(t, "hang-init")
		r.send(t, initializeLine)
		got := make(chan string, 1)
		go func() { line, _ := r.stdout.ReadString('\n'); got <- line }()
		select {
		case line := <-got:
			t.Fatalf("hang-init answered: %q", line)
		case <-time.After(300 * time.Millisecond):
		}
		r.stdin.Close()
		if err, ok := r.exited(5 * time.Second); !ok || err != nil {
			t.Errorf("after stdin EOF: exited=%v err=%v", ok, err)
		}
	})
	t.Run("-ignore-eof keeps hanging", func(t *testing.T) {
		t.Parallel()
		r := startRaw(t, "hang-init", "-ignore-eof")
		r.stdin.Close()
		if _, ok := r.exited(300 * time.Millisecond); ok {
			t.Fatal("hang-init -ignore-eof exited on stdin EOF")
		}
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		if _, ok := r.exited(5 * time.Second); !ok {
			t.Error("no exit after SIGTERM")
		}
	})
}

func TestHangCall(t *testing.T) {
	t.Parallel()
	cs, c := connect(t, "hang-call")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hang"}); err == nil {
		t.Fatal("hang returned")
	}
	// The server still answers other calls...
	if got := textOf(call(t, cs, "echo", map[string]any{"text": "x"})); got != "x" {
		t.Errorf("echo = %q", got)
	}
	// ...but the stuck handler keeps it alive after stdin closes: Close has
	// to escalate to SIGTERM (TerminateDuration is 300ms in these tests).
	start := time.Now()
	err := cs.Close()
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("Close took %v: the process exited on stdin EOF (err %v)", d, err)
	}
	if !strings.Contains(c.stderr.String(), "blocking forever") {
		t.Errorf("stderr = %q", c.stderr.String())
	}
}

func TestCrashMidCall(t *testing.T) {
	t.Parallel()
	cs, c := connect(t, "crash-mid-call")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash"})
	if err == nil {
		t.Fatal("crash returned a result")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("crashed call failed by its 10 s deadline, not by the crash: %v", err)
	}
	werr := cs.Close()
	if code := exitCode(werr); code != 3 {
		t.Errorf("exit status = %d (%v), want 3", code, werr)
	}
	if !strings.Contains(c.stderr.String(), "crash-mid-call: panic: tool crash called") {
		t.Errorf("stderr = %q", c.stderr.String())
	}
}

func TestGarbage(t *testing.T) {
	t.Parallel()
	t.Run("raw", func(t *testing.T) {
		t.Parallel()
		r := startRaw(t, "garbage")
		r.send(t, initializeLine)
		if line, err := r.stdout.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
			t.Fatalf("initialize answer = %q, %v", line, err)
		}
		r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		r.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
		if line, _ := r.stdout.ReadString('\n'); !strings.Contains(line, `"tools"`) {
			t.Fatalf("tools/list answer = %q", line)
		}
		r.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`+"\n")
		line, _ := r.stdout.ReadString('\n')
		if !strings.Contains(line, "not json") {
			t.Fatalf("first line after tools/call = %q, want garbage", line)
		}
		if line, _ := r.stdout.ReadString('\n'); !strings.Contains(line, `"id":3`) {
			t.Errorf("answer after garbage = %q", line)
		}
	})
	t.Run("sdk client", func(t *testing.T) {
		t.Parallel()
		cs, _ := connect(t, "garbage")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil {
			t.Error("call answered after garbage succeeded; want a broken connection")
		}
	})
}

func TestFloodStderr(t *testing.T) {
	t.Parallel()
	cs, c := connect(t, "flood-stderr", "-interval", "0", "-total", "4000000")
	for i := range 20 {
		want := fmt.Sprint(i)
		if got := textOf(call(t, cs, "echo", map[string]any{"text": want})); got != want {
			t.Fatalf("echo = %q", got)
		}
	}
	waitFor(t, "4 MB of stderr", 10*time.Second, func() bool { return c.stderr.Len() >= 4000000 })
	if !strings.Contains(c.stderr.String(), "flood-stderr: handling tools/call") {
		t.Error("no per-request stderr line")
	}
}

func TestExitInit(t *testing.T) {
	t.Parallel()
	c := newChild(t, "exit-init")
	if _, err := c.connect(connectOpts{}); err == nil {
		t.Fatal("Connect to exit-init succeeded")
	}
	if code := c.exitStatus(); code != 1 {
		t.Errorf("exit status = %d, want 1", code)
	}
	if got := c.stderr.String(); got != "fatal: cannot open database\n" {
		t.Errorf("stderr = %q", got)
	}
}

func TestExitInitCountsStarts(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "starts")
	for range 2 {
		c := newChild(t, "exit-init", "-state", state)
		if _, err := c.connect(connectOpts{}); err == nil {
			t.Fatal("Connect to exit-init succeeded")
		}
	}
	if b, err := os.ReadFile(state); err != nil || string(b) != "2\n" {
		t.Errorf("starts file = %q, %v; want 2", b, err)
	}
}

func TestFlap(t *testing.T) {
	t.Parallel()
	t.Run("calls", func(t *testing.T) {
		t.Parallel()
		cs, c := connect(t, "flap", "-calls", "2")
		for i := range 2 {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			if err != nil || textOf(res) != "x" {
				time.Sleep(100 * time.Millisecond)
				t.Fatalf("call %d = %v, %v (stderr %q)", i+1, res, err, c.stderr.String())
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil {
			t.Error("third call succeeded")
		}
		if code := exitCode(cs.Close()); code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
		if !strings.Contains(c.stderr.String(), "flap: life 1: exiting after 2 tool calls") {
			t.Errorf("stderr = %q", c.stderr.String())
		}
	})
	t.Run("after", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		r := startRaw(t, "flap", "-after", "300ms", "-code", "7")
		err, ok := r.exited(10 * time.Second)
		if !ok {
			t.Fatal("flap -after 300ms still running after 10s")
		}
		if code := exitCode(err); code != 7 {
			t.Errorf("exit status %d (%v), want 7", code, err)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("exited after %v", d)
		}
		if !strings.Contains(r.stderr.String(), "flap: life 1: exiting after 300ms") {
			t.Errorf("stderr = %q", r.stderr.String())
		}
	})
	t.Run("comes back", func(t *testing.T) {
		t.Parallel()
		state := filepath.Join(t.TempDir(), "lives")
		args := []string{"-calls", "1", "-state", state, "-times", "1"}
		cs, _ := connect(t, "flap", args...)
		call(t, cs, "echo", map[string]any{"text": "x"})
		if code := exitCode(cs.Close()); code != 1 {
			t.Errorf("first life exit status %d, want 1", code)
		}
		// The restarted server serves for good.
		cs2, c2 := connect(t, "flap", args...)
		for range 3 {
			call(t, cs2, "echo", map[string]any{"text": "x"})
		}
		if !strings.Contains(c2.stderr.String(), "life 2: serving for good") {
			t.Errorf("stderr = %q", c2.stderr.String())
		}
	})
}

// TestDiscoverKill shows the go-sdk #1177 failure and its workaround: the
// default Connect probes with server/discover and the server dies; pinned
// to 2025-11-25 the first message is initialize and it serves.
func TestDiscoverKill(t *testing.T) {
	t.Parallel()
	c := newChild(t, "discover-kill")
	if _, err := c.connect(connectOpts{timeout: 5 * time.Second}); err == nil {
		t.Fatal("default Connect succeeded; want the server to die on server/discover")
	}
	if code := c.exitStatus(); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.Contains(c.stderr.String(), `got "server/discover"`) {
		t.Errorf("stderr = %q", c.stderr.String())
	}
	cs, _ := connectWith(t, connectOpts{version: legacy}, "discover-kill")
	if got := textOf(call(t, cs, "echo", map[string]any{"text": "ok"})); got != "ok" {
		t.Errorf("echo = %q", got)
	}
}

func TestSlowStart(t *testing.T) {
	t.Parallel()
	start := time.Now()
	cs, _ := connect(t, "slow-start", "-delay", "400ms")
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("connected after %v, before the delay", d)
	}
	call(t, cs, "echo", map[string]any{"text": "x"})
}

// With -state and -fast, only the starts after the first K are delayed: a
// server quick to start that is slow to come back.
func TestSlowStartFastFirst(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "starts")
	// An hour's delay would time the connect out: the first start is not delayed.
	cs, _ := connect(t, "slow-start", "-delay", "1h", "-state", state, "-fast", "1")
	call(t, cs, "echo", map[string]any{"text": "x"})
	c := newChild(t, "slow-start", "-delay", "1h", "-state", state, "-fast", "1")
	if _, err := c.connect(connectOpts{timeout: 2 * time.Second}); err == nil {
		t.Fatal("the second start was not delayed")
	}
	if !strings.Contains(c.stderr.String(), "starting in 1h0m0s") {
		t.Errorf("stderr = %q", c.stderr.String())
	}
}

// With -slow K, only the first K starts are delayed.
func TestSlowStartSlowFirst(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "starts")
	c := newChild(t, "slow-start", "-delay", "1h", "-state", state, "-slow", "1")
	if _, err := c.connect(connectOpts{timeout: 2 * time.Second}); err == nil {
		t.Fatal("the first start was not delayed")
	}
	cs, _ := connect(t, "slow-start", "-delay", "1h", "-state", state, "-slow", "1")
	call(t, cs, "echo", map[string]any{"text": "x"})
}

// slow-start -until-file serves only once the file exists: a connect
// made before cannot complete, one made after does.
func TestSlowStartUntilFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "go")
	c := newChild(t, "slow-start", "-until-file", file)
	type done struct {
		cs  *mcp.ClientSession
		err error
	}
	got := make(chan done, 1)
	go func() {
		cs, err := c.connect(connectOpts{timeout: 60 * time.Second})
		got <- done{cs, err}
	}()
	waitFor(t, "the waiting line", 10*time.Second, func() bool { return strings.Contains(c.stderr.String(), "starting once") })
	select {
	case d := <-got:
		t.Fatalf("connected before the file existed (err %v)", d.err)
	default:
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.err != nil {
		t.Fatalf("connect after the file was made: %v (stderr %q)", d.err, c.stderr.String())
	}
	defer d.cs.Close()
	call(t, d.cs, "echo", map[string]any{"text": "x"})
}

func TestIgnoreStdinEOF(t *testing.T) {
	t.Parallel()
	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		r := startRaw(t, "ignore-stdin-eof")
		r.stdin.Close()
		waitFor(t, "the EOF line", 5*time.Second, func() bool { return strings.Contains(r.stderr.String(), "stdin closed; still running") })
		if _, ok := r.exited(300 * time.Millisecond); ok {
			t.Fatal("exited on stdin EOF")
		}
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		err, ok := r.exited(5 * time.Second)
		if !ok || err != nil {
			t.Errorf("after SIGTERM: exited=%v err=%v", ok, err)
		}
	})
	t.Run("ignore SIGTERM", func(t *testing.T) {
		t.Parallel()
		r := startRaw(t, "ignore-stdin-eof", "-ignore-sigterm")
		r.stdin.Close()
		waitFor(t, "the EOF line", 5*time.Second, func() bool { return strings.Contains(r.stderr.String(), "still running") })
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		if _, ok := r.exited(300 * time.Millisecond); ok {
			t.Fatal("exited on SIGTERM")
		}
		_ = r.cmd.Process.Kill()
		if _, ok := r.exited(5 * time.Second); !ok {
			t.Error("still running after SIGKILL")
		}
	})
}

func TestManyTools(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, "many-tools", "-n", "1500", "-desc-len", "300")
	names := toolNames(t, cs) // more than one page (the SDK pages at 1000)
	if len(names) != 1500 || names[0] != "tool_0001" || names[1499] != "tool_1500" {
		t.Fatalf("got %d tools, first %q", len(names), names[0])
	}
	if got := textOf(call(t, cs, "tool_0042", map[string]any{"text": "hi"})); got != "tool_0042: hi" {
		t.Errorf("tool_0042 = %q", got)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"no-such-server"}, {"echo", "-no-such-flag"}} {
		exe, argv := testserver.Command(args[0], args[1:]...)
		cmd := exec.Command(exe, argv...)
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != 2 {
			t.Errorf("%v: exit status %d, want 2 (%s)", args, code, out)
		}
	}
}

func TestGrandchild(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	cs, c := connect(t, "grandchild", "-pid-file", pidFile)
	pid, err := strconv.Atoi(textOf(call(t, cs, "grandchild_pid", nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	data, _ := os.ReadFile(pidFile)
	want := fmt.Sprintf("%d\n%d\n", pid, c.cmd.Process.Pid)
	if string(data) != want {
		t.Errorf("pid file = %q, want %q (grandchild, then server)", data, want)
	}
	// The server exits on stdin EOF; the grandchild lives on, holding stderr
	// (WaitDelay, 1s here, is what lets Wait return at all).
	_ = cs.Close()
	if !alive(pid) {
		t.Error("grandchild gone after the server exited")
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the grandchild to die", 5*time.Second, func() bool { return !alive(pid) })
}

// alive reports whether pid is a live process: a zombie (dead, waiting for
// a parent that may never reap it) does not count.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc (macOS): trust kill
	}
	// The state follows the parenthesized command name.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
