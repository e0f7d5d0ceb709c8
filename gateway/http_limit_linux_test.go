package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// smallServer serves h on loopback with a small send buffer on every
// connection, so that an answer a client does not read fills it soon.
func smallServer(t *testing.T, ctx context.Context, h http.Handler) *httptest.Server {
	t.Helper()
	lc := net.ListenConfig{Control: smallBuf(syscall.SO_SNDBUF)}
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func smallBuf(opt int) func(_, _ string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, 4096) })
	}
}

func initSession(t *testing.T, ctx context.Context, url string) (int, map[string]string) {
	t.Helper()
	code, sid := postMCP(t, ctx, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	if code != http.StatusOK {
		return code, nil
	}
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	if code, _ := postMCP(t, ctx, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); code != http.StatusAccepted {
		t.Fatalf("initialized: %d", code)
	}
	return http.StatusOK, h
}

// A client that calls a tool and never reads the answer does not hold
// its session busy (nor a goroutine and a connection) for ever: the
// answer's write fails at the write timeout, and the session, idle again,
// gives way to a new one at the cap.
func TestAnswerNobodyReadsLetsGo(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	g := servedGateway(t, "alpha", nil)
	for _, sdkOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("SDKOnly=%v", sdkOnly), func(t *testing.T) {
			srv := smallServer(t, ctx, g.Endpoint(&gateway.HTTPOptions{MaxSessions: 1, WriteTimeout: 200 * time.Millisecond, SDKOnly: sdkOnly}))
			code, h := initSession(t, ctx, srv.URL)
			if code != http.StatusOK {
				t.Fatalf("initialize: %d", code)
			}
			d := net.Dialer{Control: smallBuf(syscall.SO_RCVBUF)}
			conn, err := d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"` + strings.Repeat("x", 60000) + `"}}}`
			fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s",
				srv.Listener.Addr(), h["Mcp-Session-Id"], len(body), body)
			// The cap holds one session: a new one is refused while the
			// call's answer is being written, and ends the unread one's
			// session once that write gave up.
			for i := 0; ; i++ {
				code, _ := initSession(t, ctx, srv.URL)
				if code == http.StatusOK {
					break
				}
				if i == 200 {
					t.Fatalf("the session whose answer nobody reads is still busy after %d tries: %d", i, code)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// Calls in flight are capped: past MaxCalls a POST is answered 429 with
// Retry-After and a JSON-RPC error, on the fast path as on the SDK's;
// once a call is answered there is room again.
func TestCallsInFlightCapped(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	g := servedGateway(t, "alpha", nil)
	for _, sdkOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("SDKOnly=%v", sdkOnly), func(t *testing.T) {
			srv := httptest.NewServer(g.Endpoint(&gateway.HTTPOptions{MaxCalls: 2, SDKOnly: sdkOnly}))
			defer srv.Close()
			code, h := initSession(t, ctx, srv.URL)
			if code != http.StatusOK {
				t.Fatalf("initialize: %d", code)
			}
			// Two calls that last until the test ends them, each sent
			// again while the cap refuses it (the probes below take room
			// too).
			slowCtx, stop := context.WithCancel(ctx)
			defer stop()
			done := make(chan struct{}, 2)
			for i := range 2 {
				go func() {
					defer func() { done <- struct{}{} }()
					body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"alpha__slow","arguments":{"ms":600000}}}`, 10+i)
					for slowCtx.Err() == nil {
						req, _ := http.NewRequestWithContext(slowCtx, "POST", srv.URL, strings.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Accept", "application/json, text/event-stream")
						for k, v := range h {
							req.Header.Set(k, v)
						}
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusTooManyRequests {
							return
						}
					}
				}()
			}
			echo := func() (int, http.Header, []byte) {
				req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"hi"}}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for k, v := range h {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, resp.Header, b
			}
			for i := 0; ; i++ {
				code, hdr, b := echo()
				if code == http.StatusTooManyRequests {
					var m struct {
						Error struct {
							Code    int
							Message string
						}
					}
					if err := json.Unmarshal(b, &m); err != nil || m.Error.Code != -32000 || !strings.Contains(m.Error.Message, "--max-calls") || hdr.Get("Retry-After") == "" {
						t.Fatalf("refusal: %s %v (Retry-After %q)", b, err, hdr.Get("Retry-After"))
					}
					// An answer or a notification is let through: a
					// cancellation, here, of a call that holds the room.
					req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}`))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					for k, v := range h {
						req.Header.Set(k, v)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusAccepted {
						t.Fatalf("a notification at the cap was answered %d", resp.StatusCode)
					}
					break
				}
				if i == 200 {
					t.Fatalf("3 calls in flight with MaxCalls 2, and the 3rd was answered %d", code)
				}
				time.Sleep(50 * time.Millisecond)
			}
			stop()
			for range 2 {
				<-done
			}
			for i := 0; ; i++ {
				if code, _, _ := echo(); code == http.StatusOK {
					break
				} else if i == 200 {
					t.Fatalf("no room once the calls ended: %d", code)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// A team member's calls in flight are capped at its share: alice, with
// two slow calls under way, is refused a third (429), while bob, under
// the same gateway cap, is answered.
func TestCallsInFlightShare(t *testing.T) {
	ak, aid, _ := gateway.NewKey()
	bk, bid, _ := gateway.NewKey()
	auth := gateway.NewAuth(&gateway.AuthOptions{File: writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice": {Keys: []gateway.AuthKey{{ID: aid, SHA256: gateway.KeyHash(ak)}}},
		"bob":   {Keys: []gateway.AuthKey{{ID: bid, SHA256: gateway.KeyHash(bk)}}},
	}})})
	g := servedGateway(t, "alpha", auth)
	srv := guardedServer(t, g, auth, &gateway.HTTPOptions{MaxCalls: 5, MaxCallsPerPrincipal: 2})
	ctx := ctxFor(t, 60*time.Second)
	do := func(ctx context.Context, key, sid, body string) (int, string, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(sessionRequest(ctx, "POST", srv.URL+"/mcp", key, sid, strings.NewReader(body)))
		if err != nil {
			return 0, err.Error(), ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
	}
	open := func(key string) string {
		code, body, sid := do(ctx, key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		if code, body, _ := do(ctx, key, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
			t.Fatalf("initialized: %d %s", code, body)
		}
		return sid
	}
	asid, bsid := open(ak), open(bk)
	slowCtx, stop := context.WithCancel(ctx)
	defer stop()
	for i := range 2 {
		go func() {
			for slowCtx.Err() == nil {
				if code, _, _ := do(slowCtx, ak, asid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"alpha__slow","arguments":{"ms":600000}}}`, 10+i)); code != http.StatusTooManyRequests {
					return
				}
			}
		}()
	}
	echo := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"hi"}}}`
	for i := 0; ; i++ {
		code, body, _ := do(ctx, ak, asid, echo)
		if code == http.StatusTooManyRequests {
			if !strings.Contains(body, "alice has 2, its share") {
				t.Fatalf("alice's refusal: %s", body)
			}
			break
		}
		if i == 200 {
			t.Fatalf("alice has 3 calls in flight with a share of 2: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body, _ := do(ctx, bk, bsid, echo); code != http.StatusOK {
		t.Fatalf("bob, within the gateway's cap, was answered %d %s", code, body)
	}
}

// The write deadline the endpoint sets for an answer does not outlive the
// request: a keep-alive connection's next request, to another path, is
// answered after the deadline has passed. (net/http lifts a write
// deadline once it has finished an answer, since Go 1.20; the endpoint
// relies on it.)
func TestWriteDeadlineEndsWithItsRequest(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	g := servedGateway(t, "alpha", nil)
	srv := httptest.NewServer(g.Handler(&gateway.HTTPOptions{WriteTimeout: 100 * time.Millisecond}))
	defer srv.Close()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", srv.Listener.Addr(), len(body), body)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	time.Sleep(300 * time.Millisecond) // past the answer's write deadline
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", srv.Listener.Addr())
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("/healthz on the same connection: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
}
