package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// extClient speaks protocol 2026-07-28 to a gateway as its wire format
// says: every request carries the protocol version, the client's identity
// and its capabilities in _meta; a task-capable one declares the tasks
// extension there (the Go SDK's client knows no tasks).
type extClient struct {
	t     *testing.T
	plain bool // declares no tasks extension
	send  func(id int, method string, body []byte) (result, rpcErr map[string]any)
	id    int
}

func (c *extClient) call(method string, params map[string]any) (result, rpcErr map[string]any) {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	if !c.plain {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientInfo:         map[string]any{"name": "ext", "version": "1"},
		mcp.MetaKeyClientCapabilities: caps,
	}
	c.id++
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	return c.send(c.id, method, body)
}

// memExtClient connects to g over the SDK's in-memory transport, through
// its Connection.
func memExtClient(t *testing.T, g *gateway.Gateway, plain bool) *extClient {
	t.Helper()
	ctx := ctxFor(t, 2*time.Minute)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(ctx, g.Transport(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &extClient{t: t, plain: plain, send: func(id int, _ string, body []byte) (map[string]any, map[string]any) {
		t.Helper()
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, msg); err != nil {
			t.Fatal(err)
		}
		for {
			in, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			if r, ok := in.(*jsonrpc.Response); ok && r.ID.Raw() == int64(id) {
				return decodeResponse(t, r)
			}
		}
	}}
}

// httpExtClient posts to the gateway's Streamable HTTP endpoint at url
// with token as its credentials (2026-07-28 over HTTP has no sessions).
func httpExtClient(t *testing.T, url, token string, plain bool) *extClient {
	return &extClient{t: t, plain: plain, send: func(id int, method string, body []byte) (map[string]any, map[string]any) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctxFor(t, time.Minute), http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		req.Header.Set("Authorization", "Bearer "+token)
		var p struct {
			Params struct {
				Name   string `json:"name"`
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &p)
		if name := p.Params.Name + p.Params.TaskID; name != "" {
			req.Header.Set("Mcp-Name", name) // the spec's routing header
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// An error may come as a JSON-RPC error with an HTTP error status.
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				line = data
			}
			msg, err := jsonrpc.DecodeMessage(line)
			if err != nil {
				continue // SSE framing
			}
			if r, ok := msg.(*jsonrpc.Response); ok && r.ID.Raw() == int64(id) {
				return decodeResponse(t, r)
			}
		}
		t.Fatalf("%s: HTTP %d and no response: %v", method, resp.StatusCode, sc.Err())
		return nil, nil
	}}
}

func decodeResponse(t *testing.T, r *jsonrpc.Response) (result, rpcErr map[string]any) {
	t.Helper()
	if r.Error != nil {
		b, _ := json.Marshal(r.Error)
		_ = json.Unmarshal(b, &rpcErr)
		return nil, rpcErr
	}
	if err := json.Unmarshal(r.Result, &result); err != nil {
		t.Fatalf("%s: %v", r.Result, err)
	}
	return result, nil
}

// start calls name as a task and returns its id.
func (c *extClient) start(name string, args map[string]any) string {
	c.t.Helper()
	res, e := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	id, _ := res["taskId"].(string)
	if e != nil || res["resultType"] != "task" || id == "" || res["status"] != "working" || res["ttlMs"] == nil || res["pollIntervalMs"] == nil {
		c.t.Fatalf("%s as a task: %v, %v", name, res, e)
	}
	return id
}

// until polls tasks/get until the task's status is one of want.
func (c *extClient) until(id string, want ...string) map[string]any {
	c.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, e := c.call("tasks/get", map[string]any{"taskId": id})
		if e != nil {
			c.t.Fatalf("tasks/get %s: %v", id, e)
		}
		for _, w := range want {
			if res["status"] == w {
				if res["resultType"] != "complete" {
					c.t.Errorf("tasks/get's resultType: %v", res)
				}
				return res
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s never became %v: %v", id, want, res)
		}
	}
}

func resultText(res map[string]any) string {
	r, _ := res["result"].(map[string]any)
	return fmt.Sprint(r["content"])
}

// Issue 35: a client of 2026-07-28 that declares the tasks extension gets
// the gateway's tasks for the tools that run as tasks upstream — created
// on tools/call, followed with tasks/get (the result inline), answered
// with tasks/update when the call asks, cancelled with tasks/cancel —
// decided and audited once per call, its tasks its own; over the SDK's
// in-memory transport and over loopback HTTP (to a gateway with sessions
// for older clients, and to a stateless one, as serve --http's), where
// the protocol has no sessions and a task is its credentials'.
func TestExtensionTasks(t *testing.T) {
	// serveHTTP serves f's gateway over loopback HTTP as serve --http
	// serves a 2026-07-28 request: each on its own (the SDK serves that
	// protocol only so).
	serveHTTP := func(t *testing.T, f *fixture) string {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.g.Server() }, &mcp.StreamableHTTPOptions{Stateless: true})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w, r, release := f.g.BindHTTP(w, r)
			defer release()
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, tc := range []struct {
		name      string
		stateless bool // the gateway's Options.Stateless, as serve --http sets it
		clients   func(t *testing.T, f *fixture) (owner, other, plain *extClient)
	}{
		{"in-memory", false, func(t *testing.T, f *fixture) (_, _, _ *extClient) {
			return memExtClient(t, f.g, false), memExtClient(t, f.g, false), memExtClient(t, f.g, true)
		}},
		{"http", false, func(t *testing.T, f *fixture) (_, _, _ *extClient) {
			url := serveHTTP(t, f)
			return httpExtClient(t, url, "alice", false), httpExtClient(t, url, "mallory", false), httpExtClient(t, url, "alice", true)
		}},
		{"http-stateless", true, func(t *testing.T, f *fixture) (_, _, _ *extClient) {
			url := serveHTTP(t, f)
			return httpExtClient(t, url, "alice", false), httpExtClient(t, url, "mallory", false), httpExtClient(t, url, "alice", true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, log, path := tasksGateway(t, []string{"mcp__t__work", "mcp__t__never", "mcp__t__ask"}, []string{"mcp__t__maybe"}, []string{"mcp__t__fail"},
				func(o *gateway.Options) { o.Stateless = tc.stateless })
			if err := f.g.WaitSynced(ctxFor(t, 30*time.Second)); err != nil {
				t.Fatal(err)
			}
			a, b, plain := tc.clients(t, f)
			testExtensionTasks(t, log, path, a, b, plain)
			waitRelayIdle(t, f.g)
		})
	}
}

func testExtensionTasks(t *testing.T, log, path string, a, b, plain *extClient) {
	res, e := a.call("server/discover", nil)
	if caps, _ := res["capabilities"].(map[string]any); e != nil || fmt.Sprint(caps["extensions"]) != "map[io.modelcontextprotocol/tasks:map[]]" {
		t.Fatalf("server/discover: %v, %v", res, e)
	}
	// Task tools are shown as such to it, not to a plain client.
	execution := func(c *extClient) any {
		res, e := c.call("tools/list", nil)
		tools, _ := res["tools"].([]any)
		for _, tl := range tools {
			if tl := tl.(map[string]any); tl["name"] == "t__work" {
				return tl["execution"]
			}
		}
		t.Fatalf("no t__work listed: %v, %v", res, e)
		return nil
	}
	if ex := execution(a); fmt.Sprint(ex) != "map[taskSupport:optional]" {
		t.Errorf("t__work's execution: %v", ex)
	}
	if ex := execution(plain); ex != nil {
		t.Errorf("a plain client sees execution %v", ex)
	}

	// Created, followed, completed with the call's result inline.
	work := a.start("t__work", map[string]any{"text": "as a task"})
	if done := a.until(work, "completed", "failed", "cancelled"); done["status"] != "completed" || !strings.Contains(resultText(done), "worked: as a task") {
		t.Fatalf("work's end: %v", done)
	}
	// A client that declares no extension gets the plain result.
	if res, e := plain.call("tools/call", map[string]any{"name": "t__work", "arguments": map[string]any{"text": "plain"}}); e != nil || res["resultType"] == "task" || !strings.Contains(fmt.Sprint(res["content"]), "worked: plain") {
		t.Errorf("a plain client's call: %v, %v", res, e)
	}

	// Denied: a completed task whose result is the denial; the server
	// never saw the call.
	denied := a.start("t__fail", map[string]any{})
	if done := a.until(denied, "completed", "failed", "cancelled"); done["status"] != "completed" || !strings.Contains(resultText(done), "denied") {
		t.Errorf("a denied call's task: %v", done)
	}
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "call fail") {
		t.Errorf("the denied call reached the server:\n%s", b)
	}

	// Asked: the permission question is the task's input request; the
	// answer goes in tasks/update.
	asked := a.start("t__maybe", map[string]any{})
	waiting := a.until(asked, "input_required")
	reqs, _ := waiting["inputRequests"].(map[string]any)
	if len(reqs) != 1 || reqs["switchboard_permission"] == nil {
		t.Fatalf("input requests %v", waiting)
	}
	if res, e := a.call("tasks/update", map[string]any{"taskId": asked, "inputResponses": map[string]any{
		"switchboard_permission": map[string]any{"action": "accept", "content": map[string]any{"decision": "once"}},
	}}); e != nil || res["resultType"] != "complete" {
		t.Fatalf("tasks/update: %v, %v", res, e)
	}
	if done := a.until(asked, "completed", "failed", "cancelled"); done["status"] != "completed" || strings.Contains(fmt.Sprint(done["result"]), "isError:true") {
		t.Errorf("the asked call's task: %v", done)
	}

	// The server's own question (upstream input_required) is the task's
	// too, under the server's name.
	colour := a.start("t__ask", map[string]any{})
	waiting = a.until(colour, "input_required")
	reqs, _ = waiting["inputRequests"].(map[string]any)
	var key string
	for k, v := range reqs {
		key = k
		if !strings.Contains(fmt.Sprint(v), "[t] Which colour?") {
			t.Errorf("the server's question: %v", v)
		}
	}
	if len(reqs) != 1 {
		t.Fatalf("input requests %v", waiting)
	}
	if _, e := a.call("tasks/update", map[string]any{"taskId": colour, "inputResponses": map[string]any{
		key: map[string]any{"action": "accept", "content": map[string]any{"colour": "teal"}},
	}}); e != nil {
		t.Fatalf("tasks/update: %v", e)
	}
	if done := a.until(colour, "completed", "failed", "cancelled"); !strings.Contains(resultText(done), "colour: teal") {
		t.Errorf("the answered task: %v", done)
	}

	// Another client: not found for the task's methods; no tasks/list or
	// tasks/result in this revision.
	never := a.start("t__never", map[string]any{})
	waitLog(t, log, "polled never")
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if _, e := b.call(m, map[string]any{"taskId": never, "inputResponses": map[string]any{}}); !strings.Contains(fmt.Sprint(e["message"]), "not found") {
			t.Errorf("another client's %s: %v", m, e)
		}
	}
	for _, m := range []string{"tasks/list", "tasks/result"} {
		if _, e := a.call(m, map[string]any{"taskId": never}); e == nil || e["code"] != float64(jsonrpc.CodeMethodNotFound) {
			t.Errorf("%s on 2026-07-28: %v", m, e)
		}
	}
	if res, e := a.call("tasks/cancel", map[string]any{"taskId": never}); e != nil || res["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %v, %v", res, e)
	}
	a.until(never, "cancelled")
	waitLog(t, log, "cancel ") // upstream too

	// One audit line per call, with its final decision; the cancelled
	// call's comes when its task ends.
	var lines []gateway.AuditEntry
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if lines = readAudit(t, path); len(lines) >= 6 || time.Now().After(deadline) {
			break
		}
	}
	got := map[string][]string{}
	for _, l := range lines {
		got[l.Tool] = append(got[l.Tool], l.Decision)
	}
	want := map[string]string{"mcp__t__work": "[allow allow]", "mcp__t__fail": "[deny]", "mcp__t__maybe": "[ask]", "mcp__t__ask": "[allow]", "mcp__t__never": "[allow]"}
	for tool, d := range want {
		if fmt.Sprint(got[tool]) != d {
			t.Errorf("%s's audit lines: %v, want %s (all: %+v)", tool, got[tool], d, lines)
		}
	}
	if len(lines) != 6 {
		t.Errorf("%d audit lines for 6 calls: %+v", len(lines), lines)
	}
}

// A 2026-07-28 task whose question goes unanswered ends when the
// gateway's elicitation timeout passes, its upstream call cancelled.
func TestExtensionTaskQuestionUnanswered(t *testing.T) {
	f, log, _ := tasksGateway(t, []string{"mcp__t__ask"}, nil, nil, func(o *gateway.Options) { o.ElicitationTimeout = 300 * time.Millisecond })
	if err := f.g.WaitSynced(ctxFor(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	a := memExtClient(t, f.g, false)
	id := a.start("t__ask", map[string]any{})
	a.until(id, "input_required")
	if done := a.until(id, "completed", "failed", "cancelled"); !strings.Contains(resultText(done), "went unanswered") {
		t.Errorf("the unanswered task: %v", done)
	}
	waitLog(t, log, "cancel ")
	waitRelayIdle(t, f.g)
}
