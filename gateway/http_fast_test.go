package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// rawAnswer is what an HTTP client receives, less what differs by nature
// between two answers (Date).
type rawAnswer struct {
	status int
	header string // the headers that say how the body is framed
	body   string
}

// rawPost sends body to url as a client of session sid would, and reads
// the answer whole.
func rawPost(t *testing.T, ctx context.Context, url, sid, body string, header map[string]string) rawAnswer {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var h []string
	// Not Content-Length nor Transfer-Encoding: the fast path writes its
	// answer in one piece with its length, where the SDK flushes it,
	// then ends a chunked body.
	for _, k := range []string{"Content-Type", "Cache-Control", "Connection", "Mcp-Session-Id"} {
		h = append(h, k+": "+resp.Header.Get(k))
	}
	return rawAnswer{status: resp.StatusCode, header: strings.Join(h, "\n"), body: string(b)}
}

// rawSession initializes a session at url with capabilities caps (JSON)
// on protocol 2025-11-25, and returns its ID.
func rawSession(t *testing.T, ctx context.Context, url, caps string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	if a := rawPost(t, ctx, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); a.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", a.status, a.body)
	}
	return sid
}

// fastAndSDK serves one gateway at two endpoints, the default one (with
// the fast path) and one with SDKOnly, and returns their URLs.
func fastAndSDK(t *testing.T, g *gateway.Gateway, opts gateway.HTTPOptions) (fast, sdk string) {
	t.Helper()
	f := httptest.NewServer(g.Handler(&opts))
	t.Cleanup(f.Close)
	opts.SDKOnly = true
	s := httptest.NewServer(g.Handler(&opts))
	t.Cleanup(s.Close)
	return f.URL + "/mcp", s.URL + "/mcp"
}

// A session's plain tools/call answered by the fast path reaches the
// client in the very bytes the SDK's handler sends for it — status,
// headers and body, but the body's length, which it sends with it rather
// than chunked — whatever the result (text with characters
// JSON may escape, an error result, a tool the rules deny, a result cut
// to the output limit, no arguments, string and number IDs, a progress
// token and a client's own keys in _meta); and what the fast path does not
// take (an unknown tool, other _meta, a batch, the MCP standard headers)
// goes to the SDK, answered as before.
func TestFastPathSameBytesAsSDK(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	sb := openSB(t, []config.ResolvedServer{stdio("echo", "echo")}, benchHost)
	g := gateway.New(sb, &gateway.Options{Stateless: true, FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	fastURL, sdkURL := fastAndSDK(t, g, gateway.HTTPOptions{})
	fastSID := rawSession(t, ctx, fastURL, `{}`)
	sdkSID := rawSession(t, ctx, sdkURL, `{}`)

	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
	}
	big := strings.Repeat("0123456789", 20000) // past the default output limit
	cases := []struct {
		name, body string
		header     map[string]string
		fast       bool
	}{
		{"text", call("1", `{"name":"echo__echo","arguments":{"text":"hello switchboard"}}`), nil, true},
		{"escapes", call("2", `{"name":"echo__echo","arguments":{"text":"<b>&amp;</b> \"quoted\" \u2028 é 😀 \\ tab\t"}}`), nil, true},
		{"string id", call(`"a<b>&c"`, `{"name":"echo__add","arguments":{"a":2,"b":40}}`), nil, true},
		{"large id", call("9007199254740993", `{"name":"echo__echo","arguments":{"text":"x"}}`), nil, true},
		{"no arguments", call("3", `{"name":"echo__echo"}`), nil, true},
		{"error result", call("4", `{"name":"echo__side_effect","arguments":{"note":"n"}}`), nil, true},
		{"denied by a rule", call("5", `{"name":"echo__destructive","arguments":{"target":"t"}}`), nil, true},
		{"cut to the output limit", call("6", `{"name":"echo__echo","arguments":{"text":"`+big+`"}}`), nil, true},
		{"unknown tool", call("7", `{"name":"nope__nope","arguments":{}}`), nil, false},
		{"progress token", call("8", `{"name":"echo__slow","arguments":{"ms":50,"steps":2},"_meta":{"progressToken":"p"}}`), nil, true},
		{"a client's own _meta", call("12", `{"name":"echo__echo","arguments":{"text":"m"},"_meta":{"vscode.conversationId":"c","vscode.requestId":"r","progressToken":7}}`), nil, true},
		{"progress token not a string or number", call("13", `{"name":"echo__echo","arguments":{"text":"m"},"_meta":{"progressToken":true}}`), nil, false},
		{"a key of the protocol's in _meta", call("14", `{"name":"echo__echo","arguments":{"text":"m"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`), nil, false},
		{"a task request in _meta", call("15", `{"name":"echo__echo","arguments":{"text":"m"},"_meta":{"switchboard/task":{}}}`), nil, false},
		{"batch", `[` + call("9", `{"name":"echo__echo","arguments":{"text":"b"}}`) + `]`, nil, false},
		{"standard headers", call("10", `{"name":"echo__echo","arguments":{"text":"h"}}`), map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo__echo"}, false},
		{"not JSON", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":`, nil, false},
		// Deeper than the SDK's decoder takes (1,000), not than
		// encoding/json's (10,000): the SDK refuses it (400), and, sent
		// on, it ended the upstream server for every client.
		{"nested too deep", call("16", `{"name":"echo__echo","arguments":{"text":"d","n":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`}}`), nil, false},
		{"nested as deep as the SDK takes", call("17", `{"name":"echo__echo","arguments":{"text":"d","n":`+strings.Repeat("[", 997)+strings.Repeat("]", 997)+`}}`), nil, true},
	}
	for _, c := range cases {
		sameAnswer(t, g, c.name, c.fast, func(fast bool) rawAnswer {
			if fast {
				return rawPost(t, ctx, fastURL, fastSID, c.body, c.header)
			}
			return rawPost(t, ctx, sdkURL, sdkSID, c.body, c.header)
		})
	}

	// A client that can be asked takes the fast path too, for a call
	// that asks nothing (one that asks is handed over to the SDK at its
	// first question: TestFastPathHandsOverQuestions).
	fastAsk, sdkAsk := rawSession(t, ctx, fastURL, `{"elicitation":{}}`), rawSession(t, ctx, sdkURL, `{"elicitation":{}}`)
	sameAnswer(t, g, "client that declared elicitation", true, func(fast bool) rawAnswer {
		if fast {
			return rawPost(t, ctx, fastURL, fastAsk, call("1", `{"name":"echo__echo","arguments":{"text":"x"}}`), nil)
		}
		return rawPost(t, ctx, sdkURL, sdkAsk, call("1", `{"name":"echo__echo","arguments":{"text":"x"}}`), nil)
	})
	// Another session's ID, or none that lives, is the SDK's to refuse.
	if a := rawPost(t, ctx, fastURL, "no-such-session", call("1", `{"name":"echo__echo","arguments":{"text":"x"}}`), nil); a.status != http.StatusNotFound {
		t.Errorf("unknown session: %d %s", a.status, a.body)
	}
}

// A call on the fast path ends as one on the SDK's does when its client
// cancels it (notifications/cancelled in a POST of its own) or ends its
// session (DELETE): the upstream server is told (notifications/cancelled),
// and a cancelled call's answer is the same bytes on both endpoints: a
// JSON-RPC error, code -32000, that says who ended it (before: code 0,
// "context canceled").
func TestFastPathCallsCancel(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	dir := t.TempDir()
	file := filepath.Join(dir, "cancels")
	sb := openSB(t, []config.ResolvedServer{stdio("c", "cancel-log", "-cancel-file", file)}, allowServer("c"))
	g := gateway.New(sb, &gateway.Options{Stateless: true, FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	fastURL, sdkURL := fastAndSDK(t, g, gateway.HTTPOptions{})
	cancels := func() int {
		b, _ := os.ReadFile(file)
		return bytes.Count(b, []byte("cancelled"))
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("waiting for %s", what)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	// wait starts a call of c__wait with request id in session sid, and
	// returns once it runs: its answer comes on the channel.
	wait := func(url, sid, id string) <-chan rawAnswer {
		started := gateway.CallsInFlight(g)
		done := make(chan rawAnswer, 1)
		go func() {
			done <- rawPost(t, ctx, url, sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"c__wait","arguments":{}}}`, nil)
		}()
		waitFor("the call to start", func() bool { return gateway.CallsInFlight(g) > started })
		return done
	}
	cancelled := func(url string) rawAnswer {
		sid := rawSession(t, ctx, url, `{}`)
		n := cancels()
		done := wait(url, sid, "7")
		if a := rawPost(t, ctx, url, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}`, nil); a.status != http.StatusAccepted {
			t.Fatalf("cancel: %d %s", a.status, a.body)
		}
		a := <-done
		waitFor("the server to be told", func() bool { return cancels() > n })
		return a
	}
	before := gateway.FastCalls(g)
	got := cancelled(fastURL)
	if gateway.FastCalls(g) != before+1 {
		t.Fatal("the call did not take the fast path")
	}
	if want := cancelled(sdkURL); got != want {
		t.Errorf("cancelled call: the fast endpoint answered\n%d %s\n%s\nthe SDK's\n%d %s\n%s", got.status, got.header, got.body, want.status, want.header, want.body)
	}
	if !strings.Contains(got.body, `"code":-32000,"message":"the call was cancelled by its client`) {
		t.Errorf("cancelled call: %s", got.body)
	}

	// DELETE of the session ends its fast call too, answered as
	// cancelled because the session ended. (On the SDK's endpoint the
	// SDK's session.Close ends the call's stream before its answer.)
	sid := rawSession(t, ctx, fastURL, `{}`)
	n := cancels()
	before = gateway.FastCalls(g)
	done := wait(fastURL, sid, "8")
	req, _ := http.NewRequestWithContext(ctx, "DELETE", fastURL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if a := <-done; !strings.Contains(a.body, `"code":-32000,"message":"the call was cancelled because its client ended the MCP session`) {
		t.Errorf("call of a session ended by DELETE: %d %s", a.status, a.body)
	}
	if gateway.FastCalls(g) != before+1 {
		t.Error("the call did not take the fast path")
	}
	waitFor("the server to be told", func() bool { return cancels() > n })
	if a := rawPost(t, ctx, fastURL, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"c__echo","arguments":{"text":"x"}}}`, nil); a.status != http.StatusNotFound {
		t.Errorf("a call of the deleted session: %d %s", a.status, a.body)
	}
}

// allowServer is a host hook whose rules allow every tool of server.
func allowServer(server string) func(*host.Options) {
	return func(ho *host.Options) {
		ho.CloseGrace = 500 * time.Millisecond
		ho.Permit = host.PolicyPermit(policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser},
			[]string{"mcp__" + server}, nil, nil)...), nil)
	}
}

// The session idle timeout ends a session no request has come in for
// (the SDK's timer no longer sees the fast path's calls, so the
// gateway keeps it), and never one whose call is still running.
func TestSessionIdleTimeoutWithFastCalls(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	sb := openSB(t, []config.ResolvedServer{stdio("echo", "echo")}, benchHost)
	g := gateway.New(sb, &gateway.Options{Stateless: true, FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	fastURL, _ := fastAndSDK(t, g, gateway.HTTPOptions{SessionIdleTimeout: 300 * time.Millisecond})
	sid := rawSession(t, ctx, fastURL, `{}`)
	before := gateway.FastCalls(g)
	// A call four times as long as the timeout: the session outlives it.
	if a := rawPost(t, ctx, fastURL, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo__slow","arguments":{"ms":1200,"steps":1}}}`, nil); a.status != http.StatusOK || !strings.Contains(a.body, "slept 1200 ms") {
		t.Fatalf("slow call: %d %s", a.status, a.body)
	}
	if gateway.FastCalls(g) != before+1 {
		t.Fatal("the call did not take the fast path")
	}
	if a := rawPost(t, ctx, fastURL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"still here"}}}`, nil); a.status != http.StatusOK {
		t.Fatalf("the call right after a long one: %d %s", a.status, a.body)
	}
	// Then idle: the session ends.
	for {
		a := rawPost(t, ctx, fastURL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		if a.status == http.StatusNotFound {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("an idle session was never ended")
		case <-time.After(400 * time.Millisecond):
		}
	}
}

// The same for a 2026-07-28 request, which has no session: a plain call
// answered by the fast path is the SDK's bytes — a complete result with
// the server's info in its _meta, a permission question as an
// input_required result (its requestState is a fresh token each time),
// an error with the HTTP status the protocol gives it, a call with a
// progress token (with progress: handed over to the SDK) — and what the
// fast path leaves alone (a log level, an answer, headers that do not
// match the body, an unknown tool, a request the SDK refuses) is the
// SDK's.
func TestFastPathSameBytesAsSDK2026(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	sb := openSB(t, []config.ResolvedServer{stdio("echo", "echo")}, func(ho *host.Options) {
		ho.CloseGrace = 500 * time.Millisecond
		ho.Permit = host.PolicyPermit(policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser},
			[]string{"mcp__echo"}, []string{"mcp__echo__add"}, []string{"mcp__echo__destructive"})...),
			&host.PermitOptions{Asker: &gateway.Asker{}})
	})
	g := gateway.New(sb, &gateway.Options{Stateless: true, FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	fastURL, sdkURL := fastAndSDK(t, g, gateway.HTTPOptions{})
	const triple = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}`
	call := func(id, name, args, meta string) string {
		if meta == "" {
			meta = `{` + triple + `,"io.modelcontextprotocol/clientCapabilities":{}}`
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,"_meta":` + meta + `}}`
	}
	std := func(name string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	}
	askable := `{` + triple + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	big := strings.Repeat("0123456789", 20000)
	state := regexp.MustCompile(`"requestState":"[^"]*"`)
	cases := []struct {
		name, body string
		header     map[string]string
		fast       bool
	}{
		{"text", call("1", "echo__echo", `{"text":"hello switchboard"}`, ""), std("echo__echo"), true},
		{"escapes", call(`"s<1>"`, "echo__echo", `{"text":"<b>&amp;</b> \"q\" \u2028 é 😀"}`, ""), std("echo__echo"), true},
		{"a client that can be asked", call("2", "echo__echo", `{"text":"x"}`, askable), std("echo__echo"), true},
		{"permission question", call("3", "echo__add", `{"a":1,"b":2}`, askable), std("echo__add"), true},
		{"no one to ask", call("4", "echo__add", `{"a":1,"b":2}`, ""), std("echo__add"), true},
		{"error result", call("5", "echo__side_effect", `{"note":"n"}`, ""), std("echo__side_effect"), true},
		{"denied by a rule", call("6", "echo__destructive", `{}`, ""), std("echo__destructive"), true},
		{"cut to the output limit", call("7", "echo__echo", `{"text":"`+big+`"}`, ""), std("echo__echo"), true},
		{"progress token", call("8", "echo__echo", `{"text":"p"}`, `{`+triple+`,"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}`), std("echo__echo"), true},
		{"progress token, with progress", call("15", "echo__slow", `{"ms":50,"steps":2}`, `{`+triple+`,"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p2","claudecode/callMark":"m"}`), std("echo__slow"), true},
		{"progress token, with progress, a client that can be asked", call("16", "echo__slow", `{"ms":50,"steps":2}`, strings.Replace(askable, `"io.modelcontextprotocol/clientCapabilities"`, `"progressToken":7,"io.modelcontextprotocol/clientCapabilities"`, 1)), std("echo__slow"), true},
		{"log level", call("9", "echo__echo", `{"text":"l"}`, `{`+triple+`,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}`), std("echo__echo"), false},
		{"no client capabilities", call("10", "echo__echo", `{"text":"c"}`, `{`+triple+`}`), std("echo__echo"), false},
		{"Mcp-Name not the tool", call("11", "echo__echo", `{"text":"n"}`, ""), std("echo__add"), false},
		{"no Mcp-Method", call("12", "echo__echo", `{"text":"m"}`, ""), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Name": "echo__echo"}, false},
		{"unknown tool", call("13", "nope__nope", `{}`, ""), std("nope__nope"), false},
		{"nested too deep", call("17", "echo__echo", `{"text":"d","n":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`}`, ""), std("echo__echo"), false},
		{"an answer", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"echo__add","arguments":{"a":1,"b":2},"requestState":"nope","inputResponses":{},"_meta":{` + triple + `,"io.modelcontextprotocol/clientCapabilities":{}}}}`, std("echo__add"), false},
	}
	for _, c := range cases {
		got := sameAnswer(t, g, c.name, c.fast, func(fast bool) rawAnswer {
			url := sdkURL
			if fast {
				url = fastURL
			}
			a := rawPost(t, ctx, url, "", c.body, c.header)
			a.body = state.ReplaceAllString(a.body, `"requestState":"…"`)
			return a
		})
		if c.name == "permission question" && !strings.Contains(got.body, `"resultType":"input_required"`) {
			t.Errorf("permission question: no input_required result: %.400s", got.body)
		}
	}
}

// sameAnswer sends one request the fast way (send(true)) and the SDK's
// (send(false)), and fails the test if the answers differ or if the fast
// path was taken (or not) against fast; it returns the fast answer.
func sameAnswer(t *testing.T, g *gateway.Gateway, name string, fast bool, send func(fast bool) rawAnswer) rawAnswer {
	t.Helper()
	before := gateway.FastCalls(g)
	got := send(true)
	taken := gateway.FastCalls(g) - before
	want := send(false)
	if got != want {
		t.Errorf("%s: the fast way answered\n%d\n%s\n%.600s\nthe SDK's\n%d\n%s\n%.600s", name, got.status, got.header, got.body, want.status, want.header, want.body)
	}
	if (taken == 1) != fast {
		t.Errorf("%s: fast path taken %d times, want taken: %v", name, taken, fast)
	}
	return got
}
