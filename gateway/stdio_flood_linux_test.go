package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// A stdio client that writes calls without reading an answer (nor waiting
// for one) gets at most gateway.StdioMaxCalls of them read: then the
// gateway reads no more, and the client's writes wait on the full pipe.
// Before, the gateway read every call and held each (a goroutine and an
// upstream call), without bound: 200,000 calls of echo grew it past 45,000
// goroutines and 200 MB in 10 s. The calls here never end by themselves
// (cancel-log's wait), so what was read shows as what upstream started.
func TestStdioClientThatNeverReadsIsBounded(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	file := filepath.Join(t.TempDir(), "calls")
	sb := openSB(t, []config.ResolvedServer{stdio("c", "cancel-log", "-cancel-file", file)}, allowServer("c"))
	g := gateway.New(sb, &gateway.Options{FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// A duplicate of the gateway's end of its stdin, to count what it
	// left unread (the file itself is the gateway's to read).
	rc, err := inR.SyscallConn() // not Fd(): that would make the pipe blocking
	if err != nil {
		t.Fatal(err)
	}
	dup := -1
	if err := rc.Control(func(fd uintptr) { dup, err = unix.Dup(int(fd)) }); err != nil || dup < 0 {
		t.Fatalf("dup: %v", err)
	}
	t.Cleanup(func() { unix.Close(dup) })
	unread := func() int {
		n, err := unix.IoctlGetInt(dup, unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr, restore := gateway.Stdio(inR, outW)
		defer restore()
		g.Run(rctx, tr)
	}()
	t.Cleanup(func() {
		stop()
		inW.Close()
		<-done
		outR.Close()
		inR.Close()
		outW.Close()
	})
	c := &stdioClient{t: t, in: inW, out: bufio.NewReader(outR)}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`, true)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)

	const n = 16 * gateway.StdioMaxCalls // more than the pipe and the read buffer hold
	var written atomic.Int64
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 1; i <= n; i++ {
			if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"c__wait","arguments":{}}}`+"\n", i); err != nil {
				return
			}
			written.Add(1)
		}
	}()
	started := func() int {
		b, _ := os.ReadFile(file)
		return bytes.Count(b, []byte("started\n"))
	}
	// Either the client's writes all went through — the gateway read
	// every call while none was answered — or the gateway stopped
	// reading: its limit of calls started, and the pipe to it holds what
	// it did not read.
	for {
		select {
		case <-wrote:
			t.Fatalf("the gateway read all %d calls of a client that reads no answer (%d started upstream); want at most %d read", written.Load(), started(), gateway.StdioMaxCalls)
		case <-ctx.Done():
			t.Fatalf("waiting: %d calls written, %d started, %d bytes unread", written.Load(), started(), unread())
		case <-time.After(10 * time.Millisecond):
		}
		if started() >= gateway.StdioMaxCalls && unread() >= 32<<10 {
			break
		}
	}
	if s := started(); s != gateway.StdioMaxCalls {
		t.Errorf("%d calls started upstream, want %d", s, gateway.StdioMaxCalls)
	}
}

// A client that leaves (closes its end) while the gateway holds its
// StdioMaxCalls unanswered calls and reads no more is seen to have left
// at once: the session ends and its calls are cancelled. Waiting for room
// without looking, the gateway saw the end only once a call was answered:
// calls that never end by themselves held it until their timeout (120 s).
func TestStdioClientThatLeavesWhileFullEndsItsSession(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	file := filepath.Join(t.TempDir(), "calls")
	sb := openSB(t, []config.ResolvedServer{stdio("c", "cancel-log", "-cancel-file", file)}, allowServer("c"))
	g := gateway.New(sb, &gateway.Options{FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr, restore := gateway.Stdio(inR, outW)
		defer restore()
		g.Run(rctx, tr)
	}()
	t.Cleanup(func() {
		stop()
		inW.Close()
		<-done
		outR.Close()
		inR.Close()
		outW.Close()
	})
	c := &stdioClient{t: t, in: inW, out: bufio.NewReader(outR)}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"leaver","version":"1"}}}`, true)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	go io.Copy(io.Discard, outR) // this client reads; its calls just never end
	started := func() int {
		b, _ := os.ReadFile(file)
		return bytes.Count(b, []byte("started\n"))
	}
	for i := 1; i <= gateway.StdioMaxCalls+8; i++ {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"c__wait","arguments":{}}}`+"\n", i)
	}
	for started() < gateway.StdioMaxCalls {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for the calls to start: %d", started())
		case <-time.After(10 * time.Millisecond):
		}
	}
	inW.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("the client closed its end with %d calls unanswered, and its session did not end", gateway.StdioMaxCalls)
	}
}
