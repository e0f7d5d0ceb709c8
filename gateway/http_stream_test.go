package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// streamGET opens session sid's standalone stream at url: its status, and
// its body when 200 (the caller closes it).
func streamGET(t *testing.T, ctx context.Context, url, sid string) (int, http.Header, io.ReadCloser) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header, nil
	}
	return resp.StatusCode, resp.Header, resp.Body
}

// readUntil reads lines of an SSE body until one contains want; the line,
// or the error that ended the body first.
func readUntil(r *bufio.Reader, want string) (string, error) {
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, want) {
			return line, nil
		}
		if err != nil {
			return "", err
		}
	}
}

// A session's standalone stream (its GET) behaves the same whether the
// gateway serves it on a connection of its own or the SDK serves it on
// net/http's: the same status and headers, the prime comment, a second
// stream refused while the first is held, list_changed delivered on it,
// a new stream once the client dropped the first, and the end of the
// stream when the session ends. On the default endpoint the stream is
// served on its own connection (counted), and the gateway's shutdown
// ends it.
func TestStandaloneStreamSameAsSDK(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	g := servedGateway(t, "alpha", nil)
	type outcome struct {
		status, second, again, deleted int
		contentType, cacheControl      string
		prime, changed                 string
		refused                        string // a GET the SDK refuses: status and body
		ended                          bool
		open                           []int
	}
	run := func(t *testing.T, opts *gateway.HTTPOptions) outcome {
		srv := httptest.NewServer(g.Endpoint(opts))
		defer srv.Close()
		url := srv.URL
		var o outcome
		code, sid := postMCP(t, ctx, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d %q", code, sid)
		}
		h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
		if code, _ := postMCP(t, ctx, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); code != http.StatusAccepted {
			t.Fatalf("initialized: %d", code)
		}
		// One the SDK refuses once it has it (a protocol version it does
		// not speak): on the way of the stream's own connection, its
		// answer is written whole.
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "1999-01-01")
		if resp, err := http.DefaultClient.Do(req); err != nil {
			t.Fatalf("GET: %v", err)
		} else {
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			o.refused = fmt.Sprintf("%d %s %q %v", resp.StatusCode, resp.Header.Get("Content-Type"), b, err)
		}
		status, header, body := streamGET(t, ctx, url, sid)
		o.status, o.contentType, o.cacheControl = status, header.Get("Content-Type"), header.Get("Cache-Control")
		if body == nil {
			t.Fatalf("GET: %d", status)
		}
		o.open = append(o.open, gateway.OpenStreams(g))
		br := bufio.NewReader(body)
		o.prime, _ = br.ReadString('\n')
		o.second, _, _ = streamGET(t, ctx, url, sid)

		// A tool appears upstream: the session's stream says so.
		add := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha__add_tool","arguments":{"name":"fresh` + strings.ReplaceAll(t.Name(), "/", "_") + `"}}}`
		if code, _ := postMCP(t, ctx, url, add, h); code != http.StatusOK {
			t.Fatalf("add_tool: %d", code)
		}
		line, err := readUntil(br, "list_changed")
		if err != nil {
			t.Fatalf("no list_changed on the stream: %v", err)
		}
		o.changed = strings.TrimSpace(line)

		// The client drops its stream and opens another: it gets one
		// (net/http's server notices the drop in the background; give
		// it the moment it takes).
		body.Close()
		var again io.ReadCloser
		for deadline := time.Now().Add(10 * time.Second); ; {
			o.again, _, again = streamGET(t, ctx, url, sid)
			if again != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if again == nil {
			t.Fatalf("no new stream after the client dropped its first: %d", o.again)
		}
		defer again.Close()
		ar := bufio.NewReader(again)
		ar.ReadString('\n')
		o.open = append(o.open, gateway.OpenStreams(g))

		// The session ends: so does its stream, cleanly.
		req, _ = http.NewRequestWithContext(ctx, "DELETE", url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		o.deleted = resp.StatusCode
		_, err = io.ReadAll(ar)
		o.ended = err == nil
		for deadline := time.Now().Add(5 * time.Second); gateway.OpenStreams(g) > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		o.open = append(o.open, gateway.OpenStreams(g))
		return o
	}
	var own, sdk outcome
	t.Run("own", func(t *testing.T) { own = run(t, nil) })
	t.Run("sdk", func(t *testing.T) { sdk = run(t, &gateway.HTTPOptions{SDKOnly: true}) })
	if t.Failed() {
		return
	}
	t.Logf("own connection: %+v", own)
	t.Logf("SDK's: %+v", sdk)
	want := outcome{status: 200, second: http.StatusConflict, again: 200, deleted: http.StatusNoContent,
		contentType: "text/event-stream", cacheControl: "no-cache, no-transform", prime: ": ok\n", ended: true}
	check := func(name string, o outcome, open []int) {
		t.Helper()
		if o.status != want.status || o.second != want.second || o.again != want.again || o.deleted != want.deleted ||
			o.contentType != want.contentType || o.cacheControl != want.cacheControl || o.prime != want.prime || !o.ended {
			t.Errorf("%s: %+v; want %+v", name, o, want)
		}
		if !strings.Contains(o.changed, `"method":"notifications/tools/list_changed"`) || !strings.HasPrefix(o.changed, "data: ") {
			t.Errorf("%s: list_changed line %q", name, o.changed)
		}
		if len(o.open) != 3 || o.open[0] != open[0] || o.open[1] != open[1] || o.open[2] != open[2] {
			t.Errorf("%s: streams on connections of their own %v, want %v", name, o.open, open)
		}
	}
	if gateway.StreamsOnOwnConnections {
		check("own connection", own, []int{1, 1, 0})
	} else {
		check("own connection", own, []int{0, 0, 0}) // the SDK's way here
	}
	check("SDK", sdk, []int{0, 0, 0})
	if own.refused != sdk.refused || !strings.HasPrefix(own.refused, "400 ") {
		t.Errorf("a refused GET differs:\n own %s\n SDK %s", own.refused, sdk.refused)
	}
	if own.changed != sdk.changed {
		t.Errorf("list_changed differs:\n own %s\n SDK %s", own.changed, sdk.changed)
	}

	// The gateway's shutdown ends a stream net/http no longer sees.
	if !gateway.StreamsOnOwnConnections {
		return // net/http's own shutdown ends its streams
	}
	srv := httptest.NewServer(g.Endpoint(nil))
	defer srv.Close()
	_, sid := postMCP(t, ctx, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	postMCP(t, ctx, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid})
	_, _, body := streamGET(t, ctx, srv.URL, sid)
	if body == nil {
		t.Fatal("no stream")
	}
	defer body.Close()
	ended := make(chan error, 1)
	go func() { _, err := io.ReadAll(body); ended <- err }()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g.Shutdown(sctx)
	select {
	case err := <-ended:
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Logf("stream ended by shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway's shutdown left a standalone stream open")
	}
	// The stream's goroutine forgets it just after closing its connection.
	for deadline := time.Now().Add(5 * time.Second); gateway.OpenStreams(g) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := gateway.OpenStreams(g); n != 0 {
		t.Errorf("%d streams still counted after shutdown", n)
	}
}

// A Go SDK client's own standalone stream, on a connection of its own,
// brings list_changed.
func TestStandaloneStreamListChanged(t *testing.T) {
	ctx := ctxFor(t, 60*time.Second)
	g := servedGateway(t, "alpha", nil)
	srv := httptest.NewServer(g.Endpoint(nil))
	defer srv.Close()
	changed := make(chan struct{}, 8)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stream", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for deadline := time.Now().Add(10 * time.Second); gateway.StreamsOnOwnConnections && gateway.OpenStreams(g) != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("the client's stream is not on a connection of its own: %d", gateway.OpenStreams(g))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add_tool", Arguments: map[string]any{"name": "late"}}); err != nil || res.IsError {
		t.Fatalf("add_tool: %v %v", err, res)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no list_changed reached the client")
	}
	if !has(toolNames(t, ctx, cs), "alpha__late") {
		t.Error("the new tool is not listed")
	}
}

// At the session cap, a session whose client holds its stream is busy and
// is not ended for a newcomer (503); once that client has left its stream
// (without DELETE) its session makes room, as on net/http, where the
// SDK's GET ends when the connection does.
func TestStandaloneStreamLeftSessionMakesRoom(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	g := servedGateway(t, "alpha", nil)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	run := func(t *testing.T, opts gateway.HTTPOptions) (held, left int, evicted string) {
		opts.MaxSessions = 2
		srv := httptest.NewServer(g.Endpoint(&opts))
		defer srv.Close()
		var sids []string
		var bodies []io.ReadCloser
		for range 2 {
			code, sid := postMCP(t, ctx, srv.URL, initialize, nil)
			if code != http.StatusOK {
				t.Fatalf("initialize: %d", code)
			}
			postMCP(t, ctx, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
			_, _, body := streamGET(t, ctx, srv.URL, sid)
			if body == nil {
				t.Fatal("no stream")
			}
			bufio.NewReader(body).ReadString('\n')
			sids, bodies = append(sids, sid), append(bodies, body)
		}
		defer bodies[1].Close()
		held, _ = postMCP(t, ctx, srv.URL, initialize, nil)
		bodies[0].Close() // the first client leaves without DELETE
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if left, _ = postMCP(t, ctx, srv.URL, initialize, nil); left == http.StatusOK || time.Now().After(deadline) {
				break
			}
		}
		for i, sid := range sids {
			code, _ := postMCP(t, ctx, srv.URL, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
			evicted += fmt.Sprintf("%d:%d ", i, code)
		}
		return held, left, evicted
	}
	for name, opts := range map[string]gateway.HTTPOptions{"own": {}, "sdk": {SDKOnly: true}} {
		t.Run(name, func(t *testing.T) {
			held, left, evicted := run(t, opts)
			if held != http.StatusServiceUnavailable || left != http.StatusOK || evicted != "0:404 1:200 " {
				t.Errorf("with both streams held: %d (want 503); after the first client left its stream: %d (want 200); pings %q (want the left session ended)", held, left, evicted)
			}
		})
	}
}
