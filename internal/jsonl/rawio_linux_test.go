//go:build linux

package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func rawPipes(t *testing.T) (r, w *os.File, rr io.Reader, rw io.Writer) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	if !inPoller(r, false) || !inPoller(w, true) {
		t.Fatal("os.Pipe's files should be in the poller")
	}
	rr, rw = rawRead(r), rawWrite(w)
	if rr == nil || rw == nil {
		t.Fatal("os.Pipe's files should take the raw path")
	}
	return r, w, rr, rw
}

func within(t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

// The raw path moves bytes, reports EOF, and fails a blocked read or write
// as os.File would: os.ErrClosed when the file is closed under it,
// os.ErrDeadlineExceeded when its deadline passes.
func TestRawPipe(t *testing.T) {
	t.Run("bytes and EOF", func(t *testing.T) {
		_, w, rr, rw := rawPipes(t)
		msg := bytes.Repeat([]byte("0123456789"), 20000) // larger than the pipe
		done := make(chan error, 1)
		go func() {
			_, err := rw.Write(msg)
			w.Close()
			done <- err
		}()
		got, err := io.ReadAll(rr)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("read %d bytes (err %v), want the %d written", len(got), err, len(msg))
		}
		if err := within(t, "the write", done); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("read closed under it", func(t *testing.T) {
		r, _, rr, _ := rawPipes(t)
		done := make(chan error, 1)
		go func() { _, err := rr.Read(make([]byte, 10)); done <- err }()
		time.Sleep(50 * time.Millisecond)
		r.Close()
		if err := within(t, "the read", done); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("read after Close: %v, want os.ErrClosed", err)
		}
	})
	t.Run("write closed under it", func(t *testing.T) {
		_, w, _, rw := rawPipes(t)
		done := make(chan error, 1)
		go func() { _, err := rw.Write(make([]byte, 1<<20)); done <- err }() // fills the pipe, then waits
		time.Sleep(50 * time.Millisecond)
		w.Close()
		if err := within(t, "the write", done); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("write after Close: %v, want os.ErrClosed", err)
		}
	})
	t.Run("read deadline", func(t *testing.T) {
		r, _, rr, _ := rawPipes(t)
		r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		done := make(chan error, 1)
		go func() { _, err := rr.Read(make([]byte, 10)); done <- err }()
		if err := within(t, "the read", done); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read past its deadline: %v, want os.ErrDeadlineExceeded", err)
		}
	})
	t.Run("broken pipe", func(t *testing.T) {
		r, _, _, rw := rawPipes(t)
		r.Close()
		if _, err := rw.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("write with no reader: %v, want EPIPE", err)
		}
	})
}

// The answer to a call that asked for progress is not written while the
// client has not read the progress notification written before it: a
// client kept off the CPU past the gap would read the two in one chunk, and
// the TypeScript SDK's client then drops that last step (typescript-sdk
// #2580). Once the client reads, the answer follows. The client's end is a
// pipe, or a Unix socket as Node (libuv) gives a child for its stdio.
func TestProgressAnswerWaitsForTheNotificationToBeRead(t *testing.T) {
	t.Run("pipe", func(t *testing.T) { progressAnswerWaits(t, os.Pipe) })
	t.Run("socketpair", func(t *testing.T) { progressAnswerWaits(t, socketPair) })
}

// socketPair returns the two ends of a Unix stream socket pair, as libuv
// creates a child process's "pipe" stdio.
func socketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "client end"), os.NewFile(uintptr(fds[1]), "server end"), nil
}

func progressAnswerWaits(t *testing.T, out func() (*os.File, *os.File, error)) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	outR, outW, err := out()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	defer outW.Close()
	c, err := (&Transport{Reader: inR, Writer: outW, ProgressGap: 5 * time.Millisecond}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	note := &jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":1,"progress":3,"total":3}`)}
	if err := c.Write(context.Background(), note); err != nil {
		t.Fatal(err)
	}
	id, _ := jsonrpc.MakeID(float64(7))
	written := make(chan error, 1)
	go func() {
		written <- c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[]}`)})
	}()
	// The client is "off the CPU" for 100 ms, twenty times the gap.
	select {
	case err := <-written:
		t.Fatalf("the answer was written (%v) while the progress notification was unread", err)
	case <-time.After(100 * time.Millisecond):
	}
	buf := make([]byte, 4096)
	n, err := outR.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(buf[:n]); !strings.Contains(got, "notifications/progress") || strings.Contains(got, `"result"`) {
		t.Fatalf("first read %q, want the notification alone", got)
	}
	if err := within(t, "the answer's Write", written); err != nil {
		t.Fatal(err)
	}
	n, err = outR.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), `"result"`) {
		t.Fatalf("second read %q (%v), want the answer", buf[:n], err)
	}
}
