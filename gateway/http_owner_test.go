package gateway_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// A session belongs to the principal that opened it: bob, who learned
// alice's session ID, is refused (403) when he ends her session or
// cancels her call with it — and her call in flight is not cancelled by
// his refused request either. Her own DELETE still cancels it.
func TestAnotherPrincipalCannotCancelASessionsCalls(t *testing.T) {
	ak, aid, _ := gateway.NewKey()
	bk, bid, _ := gateway.NewKey()
	auth := gateway.NewAuth(&gateway.AuthOptions{File: writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice": {Keys: []gateway.AuthKey{{ID: aid, SHA256: gateway.KeyHash(ak)}}},
		"bob":   {Keys: []gateway.AuthKey{{ID: bid, SHA256: gateway.KeyHash(bk)}}},
	}})})
	g := servedGateway(t, "alpha", auth)
	srv := guardedServer(t, g, auth, nil)
	ctx := ctxFor(t, 60*time.Second)

	do := func(method, key, sid, body string) (int, string, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(sessionRequest(ctx, method, srv.URL+"/mcp", key, sid, strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
	}
	code, _, sid := do("POST", ak, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"alice","version":"1"}}}`)
	if code != http.StatusOK || sid == "" {
		t.Fatalf("alice's initialize: %d, session %q", code, sid)
	}
	if code, body, _ := do("POST", ak, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", code, body)
	}

	// slow runs alice's call of alpha__slow (1.5 s) with request id id,
	// and, once it is under way, sends what interfere sends.
	slow := func(id string, interfere func()) string {
		t.Helper()
		done := make(chan string, 1)
		go func() {
			_, body, _ := do("POST", ak, sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"alpha__slow","arguments":{"ms":1500}}}`)
			done <- body
		}()
		time.Sleep(400 * time.Millisecond)
		interfere()
		select {
		case body := <-done:
			return body
		case <-ctx.Done():
			t.Fatal("alice's call did not end")
			return ""
		}
	}
	got := slow("7", func() {
		if code, body, _ := do("POST", bk, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`); code != http.StatusForbidden {
			t.Errorf("bob's notifications/cancelled in alice's session: %d %s, want 403", code, body)
		}
	})
	if !strings.Contains(got, "slept 1500 ms") {
		t.Errorf("alice's call, after bob's notifications/cancelled in her session: %s\nwant it answered", got)
	}
	got = slow("8", func() {
		if code, body, _ := do("DELETE", bk, sid, ""); code != http.StatusForbidden {
			t.Errorf("bob's DELETE of alice's session: %d %s, want 403", code, body)
		}
	})
	if !strings.Contains(got, "slept 1500 ms") {
		t.Errorf("alice's call, after bob's DELETE of her session: %s\nwant it answered", got)
	}
	// Her session is still hers; her own DELETE ends it and its call.
	got = slow("9", func() {
		if code, body, _ := do("DELETE", ak, sid, ""); code != http.StatusNoContent {
			t.Errorf("alice's DELETE of her session: %d %s, want 204", code, body)
		}
	})
	if !strings.Contains(got, "ended the MCP session") {
		t.Errorf("alice's call, after her own DELETE: %s\nwant it cancelled", got)
	}
}

// At the session cap, a principal that opens sessions in a loop ends its
// own idle ones, not another principal's: alice's one idle session stays
// while mallory opens many more than the cap. A new principal at the cap
// still gets a session (ending mallory's idle longest).
func TestSessionCapEndsTheOpenersOwnSessionsFirst(t *testing.T) {
	keys := map[string]string{}
	principals := map[string]*gateway.AuthEntry{}
	for _, name := range []string{"alice", "mallory", "carol"} {
		k, id, _ := gateway.NewKey()
		keys[name] = k
		principals[name] = &gateway.AuthEntry{Keys: []gateway.AuthKey{{ID: id, SHA256: gateway.KeyHash(k)}}}
	}
	auth := gateway.NewAuth(&gateway.AuthOptions{File: writeAuth(t, &gateway.AuthFile{Principals: principals})})
	g := servedGateway(t, "alpha", auth)
	srv := guardedServer(t, g, auth, &gateway.HTTPOptions{MaxSessions: 3})
	ctx := ctxFor(t, 60*time.Second)

	open := func(who string) string {
		t.Helper()
		code, sid := postMCP(t, ctx, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+who+`","version":"1"}}}`,
			map[string]string{"Authorization": "Bearer " + keys[who]})
		if code != http.StatusOK || sid == "" {
			t.Fatalf("%s's initialize: %d, session %q", who, code, sid)
		}
		return sid
	}
	alive := func(who, sid string) bool {
		t.Helper()
		code, _ := postMCP(t, ctx, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			map[string]string{"Authorization": "Bearer " + keys[who], "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
		return code == http.StatusOK
	}
	alice := open("alice")
	var mallory []string
	for range 8 {
		mallory = append(mallory, open("mallory"))
		time.Sleep(5 * time.Millisecond) // each later than the last
	}
	if !alive("alice", alice) {
		t.Error("alice's idle session was ended to make room for mallory's")
	}
	if !alive("mallory", mallory[len(mallory)-1]) || alive("mallory", mallory[0]) {
		t.Error("mallory's newest session should be live and her oldest ended")
	}
	carol := open("carol")
	if !alive("carol", carol) || !alive("alice", alice) {
		t.Error("carol's new session, or alice's, is not live")
	}
}

// A team member holds at most its share of the session cap (by default
// half): mallory, whose sessions all hold their stream open (busy), is
// refused a third of four with 503 naming her share, and alice still gets
// the rest. Without keys (the shared token alone) one caller may hold
// them all, as before.
func TestSessionCapSharePerPrincipal(t *testing.T) {
	ctx := ctxFor(t, 60*time.Second)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	serve := func(t *testing.T, auth *gateway.Auth) string {
		g := servedGateway(t, "alpha", auth)
		return guardedServer(t, g, auth, &gateway.HTTPOptions{MaxSessions: 4}).URL + "/mcp"
	}
	// open initializes a session with key and holds its standalone
	// stream open (busy, as a client listening for list_changed); code
	// and body of the initialize.
	open := func(t *testing.T, url, key string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(initialize))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			return resp.StatusCode, string(b)
		}
		h := map[string]string{"Authorization": "Bearer " + key, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
		postMCP(t, ctx, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
		get, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		get.Header.Set("Accept", "text/event-stream")
		for k, v := range h {
			get.Header.Set(k, v)
		}
		stream, err := http.DefaultClient.Do(get)
		if err != nil || stream.StatusCode != http.StatusOK {
			t.Fatalf("the stream of a new session: %v %v", err, stream)
		}
		t.Cleanup(func() { stream.Body.Close() })
		bufio.NewReader(stream.Body).ReadString('\n')
		return resp.StatusCode, string(b)
	}

	t.Run("members", func(t *testing.T) {
		keys := map[string]string{}
		principals := map[string]*gateway.AuthEntry{}
		for _, name := range []string{"alice", "mallory"} {
			k, id, _ := gateway.NewKey()
			keys[name] = k
			principals[name] = &gateway.AuthEntry{Keys: []gateway.AuthKey{{ID: id, SHA256: gateway.KeyHash(k)}}}
		}
		url := serve(t, gateway.NewAuth(&gateway.AuthOptions{File: writeAuth(t, &gateway.AuthFile{Principals: principals})}))
		for i := range 2 {
			if code, body := open(t, url, keys["mallory"]); code != http.StatusOK {
				t.Fatalf("mallory's session %d: %d %s", i+1, code, body)
			}
		}
		code, body := open(t, url, keys["mallory"])
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "mallory holds 2, its share") {
			t.Errorf("mallory's third session, with her two busy: %d %s\nwant 503 naming her share", code, body)
		}
		for i := range 2 {
			if code, body := open(t, url, keys["alice"]); code != http.StatusOK {
				t.Errorf("alice's session %d, with mallory's two busy: %d %s", i+1, code, body)
			}
		}
	})
	t.Run("shared token", func(t *testing.T) {
		url := serve(t, gateway.NewAuth(&gateway.AuthOptions{SharedToken: "the-one-token"}))
		for i := range 4 {
			if code, body := open(t, url, "the-one-token"); code != http.StatusOK {
				t.Fatalf("the token holder's session %d of 4: %d %s", i+1, code, body)
			}
		}
		if code, body := open(t, url, "the-one-token"); code != http.StatusServiceUnavailable || !strings.Contains(body, "every one is busy") {
			t.Errorf("a fifth session, with four busy: %d %s", code, body)
		}
	})
}

// guardedServer serves gateway g behind auth's guard on a loopback
// httptest server, the MCP endpoint's options opts (nil: none) with that
// Guard, until the test ends.
func guardedServer(t *testing.T, g *gateway.Gateway, auth *gateway.Auth, opts *gateway.HTTPOptions) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	if opts == nil {
		opts = &gateway.HTTPOptions{}
	}
	opts.Guard = gateway.NewHTTPGuard(auth, addr, addr, nil, nil)
	srv.Config.Handler = g.Handler(opts)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}
