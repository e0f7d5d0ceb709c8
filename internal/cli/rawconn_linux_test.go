//go:build linux

package cli

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// serve --http's connections are read and written with raw system calls
// and still behave as net/http needs a TCP connection to: bytes both ways
// (one write larger than the socket's buffer too), a passed deadline is a
// timeout (net/http interrupts its background read so), the peer's close
// is io.EOF, a closed connection is net.ErrClosed.
func TestRawListenerConnBehavesAsTCP(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := rawListen(inner)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if _, ok := server.(*rawTCPConn); !ok {
		t.Fatalf("accepted a %T, want the raw connection", server)
	}
	defer server.Close()

	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB: the write waits for the reader
	go func() {
		if _, err := io.WriteString(client, "ping\n"+big); err != nil {
			t.Error(err)
		}
	}()
	got := make([]byte, 5+len(big))
	if _, err := io.ReadFull(server, got); err != nil || string(got[:5]) != "ping\n" || string(got[5:]) != big {
		t.Fatalf("server read %d bytes (%v), want ping and 1 MiB", len(got), err)
	}
	done := make(chan error, 1)
	go func() { _, err := server.Write([]byte(big)); done <- err }()
	back := make([]byte, len(big))
	if _, err := io.ReadFull(client, back); err != nil || string(back) != big {
		t.Fatalf("client read back (%v)", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	server.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var ne net.Error
	if _, err := server.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	server.SetReadDeadline(time.Time{})

	client.Close()
	if _, err := server.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
	server.Close()
	if _, err := server.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v, want net.ErrClosed", err)
	}
	if _, err := server.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write to a closed connection: %v, want net.ErrClosed", err)
	}
}
