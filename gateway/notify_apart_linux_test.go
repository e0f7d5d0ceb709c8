package gateway_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// A client that opens its session's standalone stream and never reads it
// holds up nobody's list_changed but its own. The SDK writes a change to
// each session in turn; once this stream's socket is full, its write waits
// (here, for longer than the test), and before, every session after it waited
// too. The other session must get each change while the stuck stream's
// write is still under way.
func TestStuckStreamHoldsUpNoOtherSession(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	g := servedGateway(t, "alpha", nil)
	// Small socket buffers on both ends, so that a few changes fill them.
	small := func(opt int) func(_, _ string, c syscall.RawConn) error {
		return func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, 4096) })
		}
	}
	lc := net.ListenConfig{Control: small(syscall.SO_SNDBUF)}
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(g.Endpoint(&gateway.HTTPOptions{WriteTimeout: 10 * time.Minute}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	open := func() map[string]string {
		code, sid := postMCP(t, ctx, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d %q", code, sid)
		}
		h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
		if code, _ := postMCP(t, ctx, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); code != http.StatusAccepted {
			t.Fatalf("initialized: %d", code)
		}
		return h
	}

	// The stuck one first: the SDK notifies sessions in the order they
	// began.
	stuck := open()
	d := net.Dialer{Control: small(syscall.SO_RCVBUF)}
	conn, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n",
		strings.TrimPrefix(srv.URL, "http://"), stuck["Mcp-Session-Id"])

	other := open()
	_, _, body := streamGET(t, ctx, srv.URL, other["Mcp-Session-Id"])
	if body == nil {
		t.Fatal("the other session's stream was refused")
	}
	defer body.Close()
	changed := make(chan struct{}, 16)
	go func() {
		br := bufio.NewReader(body)
		for {
			if _, err := readUntil(br, "notifications/tools/list_changed"); err != nil {
				return
			}
			changed <- struct{}{}
		}
	}()

	whileStuck := 0
	for i := 0; whileStuck < 3; i++ {
		if i == 250 {
			t.Fatalf("the stream that is not read did not fill in %d changes", i)
		}
		stuckBefore := gateway.StreamWriting(g, stuck["Mcp-Session-Id"])
		add := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"alpha__add_tool","arguments":{"name":"t%d"}}}`, i+10, i)
		if code, _ := postMCP(t, ctx, srv.URL, add, other); code != http.StatusOK {
			t.Fatalf("add_tool: %d", code)
		}
		select {
		case <-changed:
		case <-time.After(20 * time.Second):
			t.Fatalf("change %d: the other session got no list_changed within 20 s; the stuck stream's write under way: %v",
				i, gateway.StreamWriting(g, stuck["Mcp-Session-Id"]))
		}
		if stuckBefore && gateway.StreamWriting(g, stuck["Mcp-Session-Id"]) {
			whileStuck++
		}
	}
}
