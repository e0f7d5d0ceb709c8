//go:build linux

package jsonl

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
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
