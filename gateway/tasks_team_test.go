package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/tasks"
	"github.com/switchboard-mcp/switchboard/policy"
)

// teamSession is a 2025-11-25 session of one principal on a team
// gateway's loopback HTTP endpoint, speaking JSON-RPC as a task-capable
// client does (the Go SDK's client cannot send the `task` field).
type teamSession struct {
	t        *testing.T
	url, key string
	sid      string
	id       int
}

// sessionRequest is an HTTP request of a 2025-11-25 client with bearer
// key, in session sid once it has one ("": its initialize).
func sessionRequest(ctx context.Context, method, url, key, sid string, body io.Reader) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, method, url, body)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return req
}

func (s *teamSession) post(method string, params any) (result, rpcErr map[string]any) {
	s.t.Helper()
	s.id++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	req := sessionRequest(ctxFor(s.t, 30*time.Second), http.MethodPost, s.url, s.key, s.sid, bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if s.sid == "" {
		s.sid = resp.Header.Get("Mcp-Session-Id")
	}
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		var m struct {
			ID     *int           `json:"id"`
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil && *m.ID == s.id {
			return m.Result, m.Error
		}
	}
	s.t.Fatalf("%s: no answer (%d): %s", method, resp.StatusCode, b)
	return nil, nil
}

func openTeamSession(t *testing.T, url, key string) *teamSession {
	t.Helper()
	s := &teamSession{t: t, url: url, key: key}
	if _, e := s.post("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "team", "version": "1"}}); e != nil || s.sid == "" {
		t.Fatalf("initialize: %v (session %q)", e, s.sid)
	}
	s.id++
	req := sessionRequest(context.Background(), http.MethodPost, url, key, s.sid, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return s
}

// startTask calls never as a task; it returns the task's id, or the
// refusal's message.
func (s *teamSession) startTask() (id, refused string) {
	s.t.Helper()
	res, e := s.post("tools/call", map[string]any{"name": "t__never", "arguments": map[string]any{}, "task": map[string]any{}})
	if e != nil {
		return "", fmt.Sprint(e["message"])
	}
	task, _ := res["task"].(map[string]any)
	id, _ = task["taskId"].(string)
	if id == "" {
		s.t.Fatalf("tools/call with a task field: not a task: %v", res)
	}
	return id, ""
}

func (s *teamSession) end() {
	s.t.Helper()
	req := sessionRequest(context.Background(), http.MethodDelete, s.url, s.key, s.sid, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		s.t.Fatalf("DELETE of the session: %s", resp.Status)
	}
}

// A team member cannot hold more than its share of the gateway's tasks
// by opening session after session: past MaxServedPerPrincipal over all
// its sessions a new task is refused, while another member's still
// starts; and a session's tasks, which no one can reach once it ended,
// are cancelled (upstream too) and no longer count when it ends.
func TestTeamMemberTasksBounded(t *testing.T) {
	ak, aid, _ := gateway.NewKey()
	bk, bid, _ := gateway.NewKey()
	auth := gateway.NewAuth(&gateway.AuthOptions{File: writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice": {Keys: []gateway.AuthKey{{ID: aid, SHA256: gateway.KeyHash(ak)}}},
		"bob":   {Keys: []gateway.AuthKey{{ID: bid, SHA256: gateway.KeyHash(bk)}}},
	}})})
	log := filepath.Join(t.TempDir(), "tasks.log")
	p := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, []string{"mcp__t__never"}, nil, nil)...)
	permit := gateway.NewPermit(p, nil, &host.PermitOptions{Asker: &gateway.Asker{}})
	// A long poll: the upstream tasks are many, and only their ends count.
	f := startWith(t, fixtureOpts{permit: permit}, &gateway.Options{Stateless: true, Auth: auth},
		stdio("t", "tasks", "-log", log, "-poll", "30s"))
	if err := f.g.WaitSynced(ctxFor(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	srv := guardedServer(t, f.g, auth, nil)
	url := srv.URL + "/mcp"

	var first *teamSession
	var firstIDs []string
	for n := 0; n < tasks.MaxServedPerPrincipal/tasks.MaxServedPerOwner; n++ {
		s := openTeamSession(t, url, ak)
		for range tasks.MaxServedPerOwner {
			id, refused := s.startTask()
			if refused != "" {
				t.Fatalf("alice's task %d of session %d refused: %s", len(firstIDs), n, refused)
			}
			if first == nil || first == s {
				first = s
				firstIDs = append(firstIDs, id)
			}
		}
	}
	more := openTeamSession(t, url, ak)
	if _, refused := more.startTask(); !strings.Contains(refused, "too many tasks") || !strings.Contains(refused, "alice") {
		t.Fatalf("alice's task past her share in a new session: %q, want a refusal that names her", refused)
	}
	bob := openTeamSession(t, url, bk)
	if _, refused := bob.startTask(); refused != "" {
		t.Fatalf("bob's task refused: %s", refused)
	}
	// Bob, who learned the id of a task of alice's, and alice in another
	// session, are told it is not there, whatever they ask; its list
	// shows neither of them the task.
	for _, s := range []*teamSession{bob, more} {
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			if _, e := s.post(m, map[string]any{"taskId": firstIDs[0]}); !strings.Contains(fmt.Sprint(e["message"]), "not found") {
				t.Errorf("%s of alice's task in session %s: %v", m, s.sid, e)
			}
		}
		list, _ := s.post("tasks/list", map[string]any{})
		if b, _ := json.Marshal(list); strings.Contains(string(b), firstIDs[0]) {
			t.Errorf("tasks/list shows another session's task: %s", b)
		}
	}

	// Every task under way upstream, before the first session ends.
	started := tasks.MaxServedPerPrincipal + 1
	for deadline := time.Now().Add(20 * time.Second); strings.Count(logOf(t, log), "call never") < started; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d task calls reached the server, want %d", strings.Count(logOf(t, log), "call never"), started)
		}
	}
	first.end()
	for deadline := time.Now().Add(20 * time.Second); strings.Count(logOf(t, log), "cancel ") < len(firstIDs); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the tasks of alice's ended session were not cancelled upstream: %d cancels of %d", strings.Count(logOf(t, log), "cancel "), len(firstIDs))
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, refused := more.startTask()
		if refused == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's task once a session of hers ended: still %q", refused)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func logOf(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}

// A task belongs to the principal and its session, not to the credential
// that started it: after the client's credential changes (an OAuth access
// token refreshed while the task runs; here another of alice's keys), the
// same session still gets the task's status and cancels it; another
// principal, in a session of its own, is told the task is not there.
func TestTaskSurvivesANewCredential(t *testing.T) {
	ak1, aid1, _ := gateway.NewKey()
	ak2, aid2, _ := gateway.NewKey()
	bk, bid, _ := gateway.NewKey()
	auth := gateway.NewAuth(&gateway.AuthOptions{File: writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice": {Keys: []gateway.AuthKey{{ID: aid1, SHA256: gateway.KeyHash(ak1)}, {ID: aid2, SHA256: gateway.KeyHash(ak2)}}},
		"bob":   {Keys: []gateway.AuthKey{{ID: bid, SHA256: gateway.KeyHash(bk)}}},
	}})})
	p := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, []string{"mcp__t__never"}, nil, nil)...)
	permit := gateway.NewPermit(p, nil, &host.PermitOptions{Asker: &gateway.Asker{}})
	f := startWith(t, fixtureOpts{permit: permit}, &gateway.Options{Auth: auth}, stdio("t", "tasks", "-poll", "30s"))
	if err := f.g.WaitSynced(ctxFor(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	srv := guardedServer(t, f.g, auth, nil)
	url := srv.URL + "/mcp"

	alice := openTeamSession(t, url, ak1)
	id, refused := alice.startTask()
	if refused != "" {
		t.Fatalf("alice's task refused: %s", refused)
	}
	alice.key = ak2 // the credential changes; the session does not
	if res, e := alice.post("tasks/get", map[string]any{"taskId": id}); e != nil || res["taskId"] != id {
		t.Fatalf("tasks/get of alice's task with her other credential: %v %v", res, e)
	}
	bob := openTeamSession(t, url, bk)
	if _, e := bob.post("tasks/get", map[string]any{"taskId": id}); !strings.Contains(fmt.Sprint(e["message"]), "not found") {
		t.Errorf("tasks/get of alice's task by bob in his session: %v", e)
	}
	if res, e := alice.post("tasks/cancel", map[string]any{"taskId": id}); e != nil || res["status"] != "cancelled" {
		t.Errorf("tasks/cancel of alice's task with her other credential: %v %v", res, e)
	}
}
