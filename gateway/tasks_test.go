package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/jsonl"
	"github.com/switchboard-mcp/switchboard/policy"
)

// A tool that runs as a task upstream (issue 35) is one call through the
// gateway: a plain client gets its result, the audit log one line with
// the call's final status, and a client that goes away mid-task has the
// task cancelled upstream (tasks/cancel).
func TestTaskToolThroughGateway(t *testing.T) {
	f, log, path := tasksGateway(t, []string{"mcp__t"}, nil, nil)

	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "t__work", Arguments: map[string]any{"text": "via the gateway"}})
	if res.IsError || !strings.Contains(got, "worked: via the gateway") {
		t.Fatalf("t__work: %q", got)
	}
	got, res = callText(t, f.session, &mcp.CallToolParams{Name: "t__fail", Arguments: map[string]any{}})
	if !res.IsError || !strings.Contains(got, "the tool broke") {
		t.Fatalf("t__fail: %q (isError %v)", got, res.IsError)
	}
	waitRelayIdle(t, f.g)
	lines := readAudit(t, path)
	if len(lines) != 2 {
		t.Fatalf("%d audit lines for two calls: %+v", len(lines), lines)
	}
	if e := lines[0]; e.Tool != "mcp__t__work" || e.Decision != "allow" || e.IsError || e.Error != "" || e.ResultBytes == 0 {
		t.Errorf("work's audit line: %+v", e)
	}
	if e := lines[1]; e.Tool != "mcp__t__fail" || e.Decision != "allow" || !e.IsError || e.Error == "" {
		t.Errorf("fail's audit line: %+v, want the task's failure", e)
	}

	// A second client starts a task that never ends, and goes away (its
	// pipe ends close, as when its process dies).
	ctx := ctxFor(t, 30*time.Second)
	cs, cr, cw := goingClient(t, ctx, f, nil)
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "t__never", Arguments: map[string]any{}})
	waitLog(t, log, "polled never") // the gateway follows the task
	cw.Close()
	cr.Close()
	waitLog(t, log, "cancel ")
	waitRelayIdle(t, f.g)
}

// tasksGateway serves the Go tasks test server ("t", its log at log)
// under the rules given, asking the calling client for the asked ones
// (and the server's questions), with an audit log at path; adjust, if
// given, changes the gateway's options.
func tasksGateway(t *testing.T, allow, ask, deny []string, adjust ...func(*gateway.Options)) (f *fixture, log, path string) {
	t.Helper()
	dir := t.TempDir()
	log, path = filepath.Join(dir, "tasks.log"), filepath.Join(dir, "audit.jsonl")
	audit, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	p := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, allow, ask, deny)...)
	permit := gateway.NewPermit(p, nil, &host.PermitOptions{Asker: &gateway.Asker{}})
	o := &gateway.Options{Audit: audit}
	for _, a := range adjust {
		a(o)
	}
	f = startWith(t, fixtureOpts{permit: permit, prompter: gateway.Prompter{}}, o, stdio("t", "tasks", "-log", log))
	return f, log, path
}

func waitLog(t *testing.T, path, s string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's log never held %q:\n%s", s, b)
		}
	}
}

// lineClient speaks JSON-RPC lines to a gateway session, as a
// task-capable client of 2025-11-25 does (the Go SDK's client cannot send
// the `task` field).
type lineClient struct {
	t  *testing.T
	w  *os.File
	in *bufio.Scanner
	id int
	// asked counts the permission questions answered.
	asked int
	// hold keeps the questions asked unanswered, in held, for answer.
	hold bool
	held []int
}

// answer allows the questions held once.
func (c *lineClient) answer() {
	c.t.Helper()
	for _, id := range c.held {
		fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"result":{"action":"accept","content":{"decision":"once"}}}`+"\n", id)
		c.asked++
	}
	c.held = nil
}

func newLineClient(t *testing.T, g *gateway.Gateway) *lineClient {
	t.Helper()
	sr, sw, cr, cw := clientPipes(t)
	ss, err := g.Server().Connect(ctxFor(t, time.Minute), g.Transport(&jsonl.Transport{Reader: sr, Writer: sw}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := &lineClient{t: t, w: cw, in: bufio.NewScanner(cr)}
	c.in.Buffer(nil, 1<<20)
	return c
}

// call sends method with params and returns its result or error.
func (c *lineClient) call(method string, params any) (result map[string]any, rpcErr map[string]any) {
	c.t.Helper()
	c.id++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	for c.in.Scan() {
		var m struct {
			ID     *int           `json:"id"`
			Method string         `json:"method"`
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		if err := json.Unmarshal(c.in.Bytes(), &m); err != nil {
			c.t.Fatalf("%s: %v", c.in.Bytes(), err)
		}
		if m.ID != nil && m.Method == "" && *m.ID == c.id {
			return m.Result, m.Error
		}
		if m.ID != nil && m.Method == "elicitation/create" && c.hold {
			c.held = append(c.held, *m.ID)
		} else if m.ID != nil && m.Method == "elicitation/create" {
			// A permission question: allowed once.
			fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"result":{"action":"accept","content":{"decision":"once"}}}`+"\n", *m.ID)
			c.asked++
		}
	}
	c.t.Fatalf("%s: the session ended: %v", method, c.in.Err())
	return nil, nil
}

func (c *lineClient) notify(method string) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.w, `{"jsonrpc":"2.0","method":%q}`+"\n", method); err != nil {
		c.t.Fatal(err)
	}
}

func (c *lineClient) initialize() map[string]any {
	c.t.Helper()
	res, e := c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "raw", "version": "1"}})
	if e != nil {
		c.t.Fatalf("initialize: %v", e)
	}
	c.notify("notifications/initialized")
	return res
}

// Issue 35, point 3: a task-capable client runs calls as the gateway's
// tasks: decided and audited once with the final status, followed to the
// result, cancelled upstream on tasks/cancel; another client of the
// gateway cannot reach them.
func TestTaskCapableClient(t *testing.T) {
	f, log, path := tasksGateway(t, []string{"mcp__t__work", "mcp__t__never"}, []string{"mcp__t__maybe"}, []string{"mcp__t__fail"})
	if err := f.g.WaitSynced(ctxFor(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}

	a := newLineClient(t, f.g)
	if caps, _ := a.initialize()["capabilities"].(map[string]any); caps["tasks"] == nil {
		t.Fatalf("no tasks capability: %v", caps)
	}
	// The tools that run as tasks upstream say so (optional: the gateway
	// also takes a plain call of them).
	list, _ := a.call("tools/list", map[string]any{})
	shown := map[string]string{}
	for _, tl := range list["tools"].([]any) {
		tl := tl.(map[string]any)
		shown[fmt.Sprint(tl["name"])] = fmt.Sprint(tl["execution"])
	}
	if shown["t__work"] != "map[taskSupport:optional]" {
		t.Errorf("t__work's execution: %v", shown)
	}
	taskOf := func(c *lineClient, name string, args map[string]any) string {
		t.Helper()
		res, e := c.call("tools/call", map[string]any{"name": name, "arguments": args, "task": map[string]any{"ttl": 60000}})
		tk, _ := res["task"].(map[string]any)
		id, _ := tk["taskId"].(string)
		if e != nil || id == "" || tk["status"] != "working" {
			t.Fatalf("%s as a task: %v, %v", name, res, e)
		}
		return id
	}
	work := taskOf(a, "t__work", map[string]any{"text": "as a task"})
	res, e := a.call("tasks/result", map[string]any{"taskId": work})
	if e != nil || !strings.Contains(fmt.Sprint(res["content"]), "worked: as a task") {
		t.Fatalf("tasks/result: %v, %v", res, e)
	}
	if meta, _ := res["_meta"].(map[string]any); fmt.Sprint(meta["io.modelcontextprotocol/related-task"]) != "map[taskId:"+work+"]" {
		t.Errorf("result _meta: %v", res["_meta"])
	}
	if res, _ := a.call("tasks/get", map[string]any{"taskId": work}); res["status"] != "completed" {
		t.Errorf("tasks/get after the result: %v", res)
	}

	// Denied: the task fails with the denial, and the server never saw it.
	denied := taskOf(a, "t__fail", map[string]any{})
	_, _ = a.call("tasks/result", map[string]any{"taskId": denied})
	if res, _ := a.call("tasks/get", map[string]any{"taskId": denied}); res["status"] != "failed" || !strings.Contains(fmt.Sprint(res["statusMessage"]), "denied") {
		t.Errorf("a denied call's task: %v", res)
	}

	if b, _ := os.ReadFile(log); strings.Contains(string(b), "call fail") {
		t.Errorf("the denied call reached the server:\n%s", b)
	}
	lines := readAudit(t, path)
	if len(lines) != 2 {
		t.Fatalf("%d audit lines for two calls: %+v", len(lines), lines)
	}
	if e := lines[0]; e.Tool != "mcp__t__work" || e.Decision != "allow" || e.IsError || e.ResultBytes == 0 {
		t.Errorf("work's audit line: %+v", e)
	}
	if e := lines[1]; e.Tool != "mcp__t__fail" || e.Decision != "deny" {
		t.Errorf("fail's audit line: %+v", e)
	}

	// Asked: the question goes to the client, which allows it once; the
	// task is input_required while the question is open.
	a.hold = true
	asked := taskOf(a, "t__maybe", map[string]any{})
	for deadline := time.Now().Add(20 * time.Second); len(a.held) == 0; time.Sleep(20 * time.Millisecond) {
		if res, _ := a.call("tasks/get", map[string]any{"taskId": asked}); res["status"] != "working" && res["status"] != "input_required" || time.Now().After(deadline) {
			t.Fatalf("before the question: %v", res)
		}
	}
	if res, _ := a.call("tasks/get", map[string]any{"taskId": asked}); res["status"] != "input_required" {
		t.Errorf("a task whose question is open: %v", res)
	}
	a.hold = false
	a.answer()
	if res, e := a.call("tasks/result", map[string]any{"taskId": asked}); e != nil || res["isError"] == true || a.asked != 1 {
		t.Errorf("an asked call's task: %v, %v, %d questions", res, e, a.asked)
	}
	if res, _ := a.call("tasks/get", map[string]any{"taskId": asked}); res["status"] != "completed" {
		t.Errorf("the answered task: %v", res)
	}

	// Another client: not found, nothing listed, nothing cancelled.
	never := taskOf(a, "t__never", map[string]any{})
	waitLog(t, log, "polled never") // it runs upstream, as a task there too
	b := newLineClient(t, f.g)
	b.initialize()
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if _, e := b.call(m, map[string]any{"taskId": never}); !strings.Contains(fmt.Sprint(e["message"]), "not found") {
			t.Errorf("another client's %s: %v", m, e)
		}
	}
	if res, _ := b.call("tasks/list", map[string]any{}); fmt.Sprint(res["tasks"]) != "[]" {
		t.Errorf("another client lists %v", res)
	}
	if res, _ := a.call("tasks/list", map[string]any{}); len(res["tasks"].([]any)) != 4 {
		t.Errorf("the client's own list: %v", res)
	}
	if res, e := a.call("tasks/list", nil); e != nil || len(res["tasks"].([]any)) != 4 { // no params at all
		t.Errorf("the client's own list, asked without params: %v, %v", res, e)
	}

	if res, e := a.call("tasks/cancel", map[string]any{"taskId": never}); e != nil || res["status"] != "cancelled" {
		t.Fatalf("tasks/cancel: %v, %v", res, e)
	}
	waitLog(t, log, "cancel ") // upstream too
	if _, e := a.call("tasks/result", map[string]any{"taskId": never}); !strings.Contains(fmt.Sprint(e["message"]), "cancelled") {
		t.Errorf("tasks/result of the cancelled task: %v", e)
	}
}
