package tasks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server side: the gateway offers tasks (2025-11-25's tasks utility)
// to its own clients. A client's tools/call with a `task` field is
// answered at once with a CreateTaskResult while the call runs on; the
// client follows it with tasks/get, tasks/result, tasks/list and
// tasks/cancel, which the SDK knows as custom methods. Each task belongs
// to an owner (the gateway's word for a client: its credentials and its
// session), and no other owner can see, read or cancel it. When the SDK
// supports tasks on its server side, this file goes with the rest of the
// package: the gateway then declares the SDK's own task support.

// RequestKey is the _meta key under which TakeTaskField keeps a
// tools/call's `task` field for the gateway: the SDK's CallToolParamsRaw
// drops fields it does not know.
const RequestKey = "switchboard/task"

var (
	taskField      = []byte(`"task"`)
	requestKeyText = []byte(`"` + RequestKey + `"`)
)

// TakeTaskField rewrites the params of a client's tools/call: a `task`
// object moves into _meta[RequestKey], and a RequestKey the client wrote
// itself is dropped (only the `task` field asks for a task). It returns
// params unchanged and false when there is nothing to move or drop, which
// it tells without decoding for all but the calls that mention either.
func TakeTaskField(params json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(params, taskField) && !bytes.Contains(params, requestKeyText) {
		return params, false
	}
	m, err := object(params)
	if err != nil || m == nil {
		return params, false // the SDK reports it
	}
	var meta map[string]json.RawMessage
	if raw, ok := m["_meta"]; ok && isObject(raw) {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return params, false
		}
	}
	_, forged := meta[RequestKey]
	delete(meta, RequestKey)
	task, asked := m["task"]
	if asked && isObject(task) {
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		meta[RequestKey] = task
	}
	if !asked && !forged {
		return params, false
	}
	delete(m, "task")
	if meta != nil {
		raw, err := json.Marshal(meta)
		if err != nil {
			return params, false
		}
		m["_meta"] = raw
	}
	out, err := json.Marshal(m)
	if err != nil {
		return params, false
	}
	return out, true
}

// TakeTaskFieldInBody does TakeTaskField for an HTTP POST body holding
// one JSON-RPC tools/call request. Any other body is returned as it is.
func TakeTaskFieldInBody(body []byte) ([]byte, bool) {
	if !bytes.Contains(body, taskField) && !bytes.Contains(body, requestKeyText) {
		return body, false
	}
	m, err := object(body)
	if err != nil || m == nil {
		return body, false
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || method != "tools/call" {
		return body, false
	}
	params, changed := TakeTaskField(m["params"])
	if !changed {
		return body, false
	}
	m["params"] = params
	out, err := json.Marshal(m)
	if err != nil {
		return body, false
	}
	return out, true
}

// Requested reports whether a call asked for a task (TakeTaskField put
// its `task` field in meta), with the ttl it asked for (0: none), and
// takes the key out of meta.
func Requested(meta mcp.Meta) (ttl time.Duration, ok bool) {
	v, ok := meta[RequestKey]
	if !ok {
		return 0, false
	}
	delete(meta, RequestKey)
	raw, err := json.Marshal(v)
	if err != nil {
		return 0, true
	}
	var task struct {
		TTL json.RawMessage `json:"ttl"`
	}
	if json.Unmarshal(raw, &task) == nil {
		ttl, _ = millis(task.TTL, "ttl") // not a number: none
	}
	return ttl, true
}

// Store limits.
const (
	// DefaultServedTTL is how long a task is kept when its client asks
	// for no ttl, and the longest one a client may ask for: a finished
	// task's result is held for it, from the task's creation.
	DefaultServedTTL = time.Hour
	// servedPollInterval is the pollInterval the gateway suggests.
	servedPollInterval = time.Second
	// MaxServedPerOwner bounds the tasks one owner holds at once: past
	// it, a new task is refused until one ends its ttl or is cancelled.
	MaxServedPerOwner = 64
)

// Store holds the tasks a server runs for its clients. The zero value is
// not usable; use NewStore.
type Store struct {
	mu     sync.Mutex
	tasks  map[string]*served // owner + "\x00" + id
	owned  map[string]int     // owner → tasks held
	closed bool
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{tasks: map[string]*served{}, owned: map[string]int{}}
}

type served struct {
	id       string
	owner    string
	ttl      time.Duration
	created  time.Time
	cancel   context.CancelFunc
	expire   *time.Timer
	done     chan struct{} // closed once status is terminal
	mu       sync.Mutex
	status   string
	message  string
	updated  time.Time
	result   mcp.Result
	err      error
	finished bool
}

func key(owner, id string) string { return owner + "\x00" + id }

// Start runs call as a new task of owner, kept for ttl (DefaultServedTTL
// when 0 or longer), and returns the CreateTaskResult to answer the
// tools/call with. call's context is a new one, with none of the
// answered request's values; it ends when the task is cancelled or
// expires, or the store is closed. A call answering with isError makes the task failed, its
// first text the status message.
func (s *Store) Start(owner string, ttl time.Duration, call func(context.Context) (mcp.Result, error)) (mcp.Result, error) {
	if ttl <= 0 || ttl > DefaultServedTTL {
		ttl = DefaultServedTTL
	}
	now := time.Now().UTC()
	t := &served{id: randomID(), owner: owner, ttl: ttl, created: now, updated: now, status: statusWorking, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server is shutting down"}
	}
	if s.owned[owner] >= MaxServedPerOwner {
		s.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("too many tasks: this client holds %d; cancel some or wait for their ttl", MaxServedPerOwner)}
	}
	cctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	s.tasks[key(owner, t.id)] = t
	s.owned[owner]++
	t.expire = time.AfterFunc(ttl, func() { s.drop(t) })
	s.mu.Unlock()
	go func() {
		res, err := call(cctx)
		t.finish(res, err)
	}()
	return rawResult(map[string]any{"task": t.wire()})
}

// drop forgets t (its ttl passed), cancelling it if it still runs.
func (s *Store) drop(t *served) {
	s.mu.Lock()
	if s.tasks[key(t.owner, t.id)] == t {
		delete(s.tasks, key(t.owner, t.id))
		if s.owned[t.owner]--; s.owned[t.owner] <= 0 {
			delete(s.owned, t.owner)
		}
	}
	s.mu.Unlock()
	t.end(statusCancelled, "expired: its ttl passed")
	t.cancel()
}

// Close cancels every task and refuses new ones.
func (s *Store) Close() {
	s.mu.Lock()
	s.closed = true
	all := make([]*served, 0, len(s.tasks))
	for _, t := range s.tasks {
		all = append(all, t)
	}
	s.mu.Unlock()
	for _, t := range all {
		t.expire.Stop()
		t.end(statusCancelled, "the server shut down")
		t.cancel()
	}
}

func (s *Store) lookup(owner, id string) (*served, error) {
	s.mu.Lock()
	t := s.tasks[key(owner, id)]
	s.mu.Unlock()
	if t == nil {
		// The same words for a task of another client: it is not there.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %s not found", quoteShort(id))}
	}
	return t, nil
}

// Get answers tasks/get.
func (s *Store) Get(owner, id string) (mcp.Result, error) {
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	return rawResult(t.wire())
}

// Result answers tasks/result: it waits for the task to end (or ctx),
// then returns the call's result, or its error.
func (s *Store) Result(ctx context.Context, owner, id string) (mcp.Result, error) {
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t.mu.Lock()
	res, rerr, status, msg := t.result, t.err, t.status, t.message
	t.mu.Unlock()
	if status == statusCancelled {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %s was cancelled: %s", quoteShort(id), msg)}
	}
	if rerr != nil {
		return nil, rerr
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	m, err := object(raw)
	if err != nil || m == nil {
		return nil, fmt.Errorf("task %s: its result is not an object", quoteShort(id))
	}
	var meta map[string]any
	if r, ok := m["_meta"]; ok {
		_ = json.Unmarshal(r, &meta)
	}
	if meta == nil {
		meta = map[string]any{}
	}
	meta["io.modelcontextprotocol/related-task"] = map[string]string{"taskId": id}
	mraw, _ := json.Marshal(meta)
	m["_meta"] = mraw
	return rawResult(m)
}

// List answers tasks/list: the owner's tasks, oldest first.
func (s *Store) List(owner string) (mcp.Result, error) {
	s.mu.Lock()
	var mine []*served
	for _, t := range s.tasks {
		if t.owner == owner {
			mine = append(mine, t)
		}
	}
	s.mu.Unlock()
	sort.Slice(mine, func(i, j int) bool { return mine[i].created.Before(mine[j].created) })
	list := make([]any, 0, len(mine))
	for _, t := range mine {
		list = append(list, t.wire())
	}
	return rawResult(map[string]any{"tasks": list})
}

// Cancel answers tasks/cancel: a running task is cancelled (its call's
// context ends); one that ended already is refused.
func (s *Store) Cancel(owner, id string) (mcp.Result, error) {
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	if !t.end(statusCancelled, "cancelled by the client") {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %s has ended already (%s)", quoteShort(id), t.wire()["status"])}
	}
	t.cancel()
	return rawResult(t.wire())
}

// end moves t to a terminal status unless it has one; it reports whether
// it did.
func (t *served) end(status, message string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		return false
	}
	t.finished = true
	t.status, t.message, t.updated = status, message, time.Now().UTC()
	close(t.done)
	return true
}

// finish records the call's outcome, unless the task was cancelled.
func (t *served) finish(res mcp.Result, err error) {
	status, msg := statusCompleted, ""
	if err != nil {
		status, msg = statusFailed, shortErr(err)
	} else if ctr, ok := res.(*mcp.CallToolResult); ok && ctr.IsError {
		status = statusFailed
		for _, c := range ctr.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				msg = tc.Text
				break
			}
		}
	}
	t.mu.Lock()
	if !t.finished {
		t.result, t.err = res, err
	}
	t.mu.Unlock()
	t.end(status, msg)
}

// wire is the task as tasks/get shows it.
func (t *served) wire() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.Format(time.RFC3339Nano),
		"ttl":           t.ttl.Milliseconds(),
		"pollInterval":  servedPollInterval.Milliseconds(),
	}
	if t.message != "" {
		w["statusMessage"] = t.message
	}
	return w
}

// result is a result the SDK writes as the bytes it holds.
type result struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *result) MarshalJSON() ([]byte, error) { return r.raw, nil }

func rawResult(v any) (mcp.Result, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &result{raw: raw}, nil
}

// WithCapability returns an initialize result that also offers tasks for
// tools/call, with tasks/list and tasks/cancel (2025-11-25's
// capabilities.tasks).
func WithCapability(res *mcp.InitializeResult) (mcp.Result, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	caps, _ := m["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		m["capabilities"] = caps
	}
	caps["tasks"] = map[string]any{
		"list":     map[string]any{},
		"cancel":   map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
	}
	return rawResult(m)
}

// TaskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type TaskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// ListParams are the params of tasks/list.
type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// Serve adds tasks/get, tasks/result, tasks/list and tasks/cancel to srv,
// answered from s for the owner that owner finds in each request's
// context.
func (s *Store) Serve(srv *mcp.Server, owner func(context.Context) string) error {
	byID := func(f func(ctx context.Context, owner, id string) (mcp.Result, error)) func(context.Context, *mcp.ServerSession, *TaskIDParams) (mcp.Result, error) {
		return func(ctx context.Context, _ *mcp.ServerSession, p *TaskIDParams) (mcp.Result, error) {
			if p == nil || p.TaskID == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is required"}
			}
			return f(ctx, owner(ctx), p.TaskID)
		}
	}
	for _, m := range []struct {
		name string
		f    func(ctx context.Context, owner, id string) (mcp.Result, error)
	}{
		{"tasks/get", func(_ context.Context, o, id string) (mcp.Result, error) { return s.Get(o, id) }},
		{"tasks/result", s.Result},
		{"tasks/cancel", func(_ context.Context, o, id string) (mcp.Result, error) { return s.Cancel(o, id) }},
	} {
		if err := mcp.AddReceivingCustomMethod(srv, m.name, byID(m.f)); err != nil {
			return err
		}
	}
	return mcp.AddReceivingCustomMethod(srv, "tasks/list", func(ctx context.Context, _ *mcp.ServerSession, _ *ListParams) (mcp.Result, error) {
		return s.List(owner(ctx))
	})
}

// randomID is a task id no client can guess (the owner check stands on
// its own; this keeps ids from telling how many tasks ran).
func randomID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("tasks: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}
