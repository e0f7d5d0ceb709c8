package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTakeTaskField(t *testing.T) {
	for _, c := range []struct {
		in      string
		changed bool
		asked   bool
		ttl     time.Duration
	}{
		{`{"name":"a","arguments":{"x":1}}`, false, false, 0},
		{`{"name":"a","arguments":{"task":"not the field"}}`, false, false, 0},
		{`{"name":"a","task":{"ttl":60000}}`, true, true, time.Minute},
		{`{"name":"a","task":{},"_meta":{"progressToken":7}}`, true, true, 0},
		{`{"name":"a","task":{"ttl":"soon"}}`, true, true, 0},
		// A client writing the gateway's key itself does not get a task.
		{`{"name":"a","_meta":{"switchboard/task":{"ttl":1}}}`, true, false, 0},
		{`{"name":"a","task":"x"}`, true, false, 0},
	} {
		out, changed := TakeTaskField(json.RawMessage(c.in))
		if changed != c.changed {
			t.Errorf("%s: changed %v", c.in, changed)
		}
		var p mcp.CallToolParamsRaw
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("%s: %s: %v", c.in, out, err)
		}
		var top struct {
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(out, &top); top.Task != nil {
			t.Errorf("%s: the task field is still there: %s", c.in, out)
		}
		ttl, asked := Requested(p.Meta)
		if asked != c.asked || ttl != c.ttl {
			t.Errorf("%s → %s: asked %v, ttl %v", c.in, out, asked, ttl)
		}
		if _, still := p.Meta[RequestKey]; still {
			t.Errorf("%s: Requested left the key", c.in)
		}
	}
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","task":{"ttl":5}}}`
	out, changed := TakeTaskFieldInBody([]byte(body))
	if !changed || !strings.Contains(string(out), `"switchboard/task":{"ttl":5}`) || !strings.Contains(string(out), `"id":3`) {
		t.Errorf("body: %v %s", changed, out)
	}
	other := `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"task":{}}}`
	if out, changed := TakeTaskFieldInBody([]byte(other)); changed || string(out) != other {
		t.Errorf("tools/list body rewritten: %s", out)
	}
}

func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func decode(t *testing.T, res mcp.Result) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return m
}

// TestStore: a task is its owner's alone, runs to its result, can be
// cancelled once, and goes when its ttl passes.
func TestStore(t *testing.T) {
	s := NewStore()
	defer s.Close()
	ctx := context.Background()
	release := make(chan struct{})
	created, err := s.Start("alice", "", time.Minute, func(context.Context) (mcp.Result, error) {
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tk := decode(t, created)["task"].(map[string]any)
	id := tk["taskId"].(string)
	if tk["status"] != "working" || tk["ttl"] != float64(60000) || tk["pollInterval"] == nil || tk["createdAt"] == nil {
		t.Errorf("created %v", tk)
	}
	for name, err := range map[string]error{
		"get":    func() error { _, err := s.Get("bob", id); return err }(),
		"cancel": func() error { _, err := s.Cancel("bob", id); return err }(),
		"result": func() error { _, err := s.Result(ctx, "bob", id); return err }(),
	} {
		if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "not found") {
			t.Errorf("bob's %s of alice's task: %v", name, err)
		}
	}
	if l := decode(t, mustResult(s.List("bob")))["tasks"].([]any); len(l) != 0 {
		t.Errorf("bob lists %v", l)
	}
	if l := decode(t, mustResult(s.List("alice")))["tasks"].([]any); len(l) != 1 {
		t.Errorf("alice lists %v", l)
	}
	close(release)
	res := decode(t, mustResult(s.Result(ctx, "alice", id)))
	if res["content"] == nil || res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any)["taskId"] != id {
		t.Errorf("result %v", res)
	}
	if st := decode(t, mustResult(s.Get("alice", id)))["status"]; st != "completed" {
		t.Errorf("status %v", st)
	}
	if _, err := s.Cancel("alice", id); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("cancel of a completed task: %v", err)
	}

	// Cancelled: the call's context ends, the result is an error.
	ended := make(chan struct{})
	created, _ = s.Start("alice", "", 0, func(ctx context.Context) (mcp.Result, error) {
		<-ctx.Done()
		close(ended)
		return nil, ctx.Err()
	})
	id2 := decode(t, created)["task"].(map[string]any)["taskId"].(string)
	if st := decode(t, mustResult(s.Cancel("alice", id2)))["status"]; st != "cancelled" {
		t.Errorf("cancel: %v", st)
	}
	<-ended
	if _, err := s.Result(ctx, "alice", id2); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("result of a cancelled task: %v", err)
	}

	// A failed call (isError) makes a failed task, its text the message.
	created, _ = s.Start("alice", "", 0, func(context.Context) (mcp.Result, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "denied by rule"}}}, nil
	})
	id3 := decode(t, created)["task"].(map[string]any)["taskId"].(string)
	_, _ = s.Result(ctx, "alice", id3)
	if g := decode(t, mustResult(s.Get("alice", id3))); g["status"] != "failed" || g["statusMessage"] != "denied by rule" {
		t.Errorf("failed task: %v", g)
	}

	// The ttl: the task goes, and its call is cancelled.
	expired := make(chan struct{})
	created, _ = s.Start("alice", "", time.Millisecond, func(ctx context.Context) (mcp.Result, error) {
		<-ctx.Done()
		close(expired)
		return nil, ctx.Err()
	})
	id4 := decode(t, created)["task"].(map[string]any)["taskId"].(string)
	<-expired
	if _, err := s.Get("alice", id4); err == nil {
		// drop removes the task before it cancels the call
		t.Errorf("an expired task is still there")
	}
}

func mustResult(r mcp.Result, err error) mcp.Result {
	if err != nil {
		panic(err)
	}
	return r
}

// TestStoreBounds: one owner cannot hold more than MaxServedPerOwner
// tasks, others still can, and a closed store cancels all and takes none.
func TestStoreBounds(t *testing.T) {
	s := NewStore()
	block := func(ctx context.Context) (mcp.Result, error) { <-ctx.Done(); return nil, ctx.Err() }
	for range MaxServedPerOwner {
		if _, err := s.Start("flood", "", 0, block); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Start("flood", "", 0, block); err == nil || !strings.Contains(err.Error(), "too many tasks") {
		t.Errorf("task %d: %v", MaxServedPerOwner+1, err)
	}
	created, err := s.Start("other", "", 0, block)
	if err != nil {
		t.Fatalf("another owner: %v", err)
	}
	id := decode(t, created)["task"].(map[string]any)["taskId"].(string)
	s.Close()
	if st := decode(t, mustResult(s.Get("other", id)))["status"]; st != "cancelled" {
		t.Errorf("after Close: %v", st)
	}
	if _, err := s.Start("other", "", 0, block); err == nil {
		t.Error("a closed store took a task")
	}
}

// TestStoreBoundsOverOwners: owners with no principal (anonymous
// clients, each session its own owner) cannot fill more than MaxServed
// together; a principal's owners share MaxServedPerPrincipal; and Gone
// cancels an owner's tasks and gives their room back.
func TestStoreBoundsOverOwners(t *testing.T) {
	s := NewStore()
	defer s.Close()
	block := func(ctx context.Context) (mcp.Result, error) { <-ctx.Done(); return nil, ctx.Err() }
	var ids []string
	for n := range MaxServedPerPrincipal {
		res, err := s.Start(fmt.Sprintf("alice/%d", n/MaxServedPerOwner), "alice", 0, block)
		if err != nil {
			t.Fatal(err)
		}
		if n < MaxServedPerOwner {
			ids = append(ids, decode(t, res)["task"].(map[string]any)["taskId"].(string))
		}
	}
	if _, err := s.Start("alice/new", "alice", 0, block); err == nil || !strings.Contains(err.Error(), "alice holds") {
		t.Fatalf("alice's task past her share: %v", err)
	}
	s.Gone("alice/0")
	if _, err := s.Get("alice/0", ids[0]); err == nil {
		t.Error("a gone owner's task is still there")
	}
	if _, err := s.Start("alice/new", "alice", 0, block); err != nil {
		t.Fatalf("alice's task once an owner of hers is gone: %v", err)
	}
	for n := len(s.tasks); n < MaxServed; n++ {
		if _, err := s.Start(fmt.Sprintf("anon/%d", n/MaxServedPerOwner), "", 0, block); err != nil {
			t.Fatalf("task %d: %v", n, err)
		}
	}
	if _, err := s.Start("anon/last", "", 0, block); err == nil || !strings.Contains(err.Error(), "too many tasks") {
		t.Fatalf("task %d: %v", MaxServed+1, err)
	}
}

// BenchmarkTakeTaskFieldPlain is what the gateway's side of tasks costs
// a call that asks for no task: the scan of its params (docs/benchmarks.md).
func BenchmarkTakeTaskFieldPlain(b *testing.B) {
	params := json.RawMessage(`{"name":"everything__echo","arguments":{"message":"` + strings.Repeat("x", 200) + `"},"_meta":{"progressToken":1}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, changed := TakeTaskField(params); changed {
			b.Fatal("changed")
		}
	}
}

// TestStoreExtension: a 2026-07-28 task speaks the extension's wire
// format — resultType "task" on creation and "complete" on tasks/get,
// ttlMs and pollIntervalMs, the result inline (an isError result is a
// completed task, a JSON-RPC error a failed one with the error), its call's
// input requests until tasks/update answers them (answers to other keys
// ignored), and a cancellation acknowledged with an empty result.
func TestStoreExtension(t *testing.T) {
	s := NewStore()
	defer s.Close()
	idOf := func(created mcp.Result) string {
		t.Helper()
		c := decode(t, created)
		if c["resultType"] != "task" || c["status"] != "working" || c["ttlMs"] != float64(DefaultServedTTL.Milliseconds()) || c["pollIntervalMs"] == nil || c["task"] != nil {
			t.Fatalf("created %v", c)
		}
		return c["taskId"].(string)
	}
	end := func(id string) map[string]any {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			g := decode(t, mustResult(s.Get("alice", id)))
			if g["resultType"] != "complete" {
				t.Fatalf("tasks/get: %v", g)
			}
			if terminal(g["status"].(string)) {
				return g
			}
			if time.Now().After(deadline) {
				t.Fatalf("never ended: %v", g)
			}
		}
	}

	// Input: the call asks, the task says so, tasks/update answers.
	answered := make(chan mcp.InputResponseMap, 1)
	id := idOf(mustResult(s.StartExtension("alice", "", func(ctx context.Context) (mcp.Result, error) {
		a, err := RunOf(ctx).Ask(ctx, mcp.InputRequestMap{"q1": &mcp.ElicitParams{Message: "Colour?"}})
		if err != nil {
			return nil, err
		}
		answered <- a
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refused"}}}, nil
	})))
	var g map[string]any
	for deadline := time.Now().Add(10 * time.Second); g["status"] != statusInput; time.Sleep(5 * time.Millisecond) {
		if g = decode(t, mustResult(s.Get("alice", id))); time.Now().After(deadline) {
			t.Fatalf("never input_required: %v", g)
		}
	}
	if reqs, _ := g["inputRequests"].(map[string]any); reqs["q1"] == nil || !strings.Contains(fmt.Sprint(reqs["q1"]), "elicitation/create") {
		t.Errorf("input requests: %v", g)
	}
	if _, err := s.Update("bob", id, mcp.InputResponseMap{"q1": &mcp.ElicitResult{Action: "accept"}}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("bob's tasks/update: %v", err)
	}
	if u := decode(t, mustResult(s.Update("alice", id, mcp.InputResponseMap{"other": &mcp.ElicitResult{Action: "decline"}}))); u["resultType"] != "complete" {
		t.Errorf("tasks/update: %v", u)
	}
	if st := decode(t, mustResult(s.Get("alice", id)))["status"]; st != statusInput {
		t.Errorf("after an answer to another key: %v", st)
	}
	mustResult(s.Update("alice", id, mcp.InputResponseMap{"q1": &mcp.ElicitResult{Action: "accept"}, "other": &mcp.ElicitResult{Action: "decline"}}))
	if a := <-answered; len(a) != 1 || a["q1"].(*mcp.ElicitResult).Action != "accept" {
		t.Errorf("the call got %v", a)
	}
	if g := end(id); g["status"] != statusCompleted || !strings.Contains(fmt.Sprint(g["result"]), "refused") || g["error"] != nil {
		t.Errorf("an isError result's task: %v", g)
	}

	// A JSON-RPC error: failed, with the error.
	id = idOf(mustResult(s.StartExtension("alice", "", func(context.Context) (mcp.Result, error) {
		return nil, &jsonrpc.Error{Code: -32000, Message: "the tool broke"}
	})))
	if g := end(id); g["status"] != statusFailed || fmt.Sprint(g["error"]) != "map[code:-32000 message:the tool broke]" {
		t.Errorf("a failed task: %v", g)
	}

	// Cancel: acknowledged, also once ended; the call's context ends.
	stopped := make(chan struct{})
	id = idOf(mustResult(s.StartExtension("alice", "", func(ctx context.Context) (mcp.Result, error) {
		<-ctx.Done()
		close(stopped)
		return nil, ctx.Err()
	})))
	for range 2 {
		if c := decode(t, mustResult(s.Cancel("alice", id))); c["resultType"] != "complete" || len(c) != 1 {
			t.Errorf("tasks/cancel: %v", c)
		}
	}
	<-stopped
	if g := end(id); g["status"] != statusCancelled {
		t.Errorf("the cancelled task: %v", g)
	}
}

// TestResultWaitsBounded: tasks/result requests waiting for running tasks
// are bounded per owner, per principal and in all, as the tasks are (each
// holds a request, an HTTP connection, open until its task ends); past a
// bound one is refused at once, saying to poll, while other clients still
// wait; a wait that ends makes room; every admitted wait gets its result.
func TestResultWaitsBounded(t *testing.T) {
	s := NewStore()
	defer s.Close()
	release := make(chan struct{})
	start := func(owner, principal string) string {
		t.Helper()
		created, err := s.Start(owner, principal, time.Minute, func(context.Context) (mcp.Result, error) {
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, created)["task"].(map[string]any)["taskId"].(string)
	}
	ctx := context.Background()
	results := make(chan error, 4*MaxWaiting)
	admitted := 0
	waitOn := func(ctx context.Context, owner, id string) {
		admitted++
		go func() {
			_, err := s.Result(ctx, owner, id)
			results <- err
		}()
	}
	waiting := func(want int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s.mu.Lock()
			n := s.waits[""]
			s.mu.Unlock()
			if n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d tasks/result requests waiting, want %d", n, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// refused: a request past a bound is answered at once; without the
	// bound it would wait, and its short context end it instead.
	refused := func(owner, id, want string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := s.Result(c, owner, id)
		if rpcCode(err) != jsonrpc.CodeInvalidRequest || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "poll with tasks/get") {
			t.Errorf("%s's tasks/result past the bound: %v; want a refusal saying %q", owner, err, want)
		}
	}

	a := start("alice", "")
	first, endFirst := context.WithCancel(ctx)
	waitOn(first, "alice", a)
	for range MaxWaitingPerOwner - 1 {
		waitOn(ctx, "alice", a)
	}
	waiting(MaxWaitingPerOwner)
	refused("alice", a, fmt.Sprintf("this client has %d", MaxWaitingPerOwner))

	// Another client still waits.
	c := start("carol", "")
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	if _, err := s.Result(short, "carol", c); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("carol's tasks/result beside alice's waits: %v; want it to wait (its context ended it)", err)
	}
	cancel()

	// One principal over its sessions.
	var bobs []string
	for i := range 3 {
		bobs = append(bobs, start(fmt.Sprintf("bob-session-%d", i), "bob"))
	}
	for i := range MaxWaitingPerPrincipal {
		k := i % 2
		waitOn(ctx, fmt.Sprintf("bob-session-%d", k), bobs[k])
	}
	waiting(MaxWaitingPerOwner + MaxWaitingPerPrincipal)
	refused("bob-session-2", bobs[2], fmt.Sprintf("bob has %d over all its sessions", MaxWaitingPerPrincipal))

	// A wait that ends (its request cancelled) makes room.
	endFirst()
	if err := <-results; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled wait: %v", err)
	}
	admitted--
	waiting(MaxWaitingPerOwner - 1 + MaxWaitingPerPrincipal)
	waitOn(ctx, "alice", a)
	waiting(MaxWaitingPerOwner + MaxWaitingPerPrincipal)

	close(release)
	for range admitted {
		if err := <-results; err != nil {
			t.Errorf("an admitted wait: %v", err)
		}
	}
	s.mu.Lock()
	left := len(s.waits)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("waits still counted after every request was answered: %v", s.waits)
	}
}
