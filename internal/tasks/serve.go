package tasks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server side: the gateway offers tasks to its own clients, in both
// revisions. On 2025-11-25 (the tasks utility) a client's tools/call with
// a `task` field is answered at once with a CreateTaskResult while the
// call runs on; the client follows it with tasks/get, tasks/result,
// tasks/list and tasks/cancel. On 2026-07-28 (the extension) the client
// declares io.modelcontextprotocol/tasks per request and the server
// decides: a CreateTaskResult (resultType "task"), then tasks/get (which
// carries the result, or the task's inputRequests), tasks/update (the
// answers) and tasks/cancel. The SDK knows all of these as custom methods.
// Each task belongs to an owner (the gateway's word for a client), and no
// other owner can see, read, answer or cancel it. When the SDK supports
// tasks on its server side, this file goes with the rest of the package:
// the gateway then declares the SDK's own task support.

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
	// MaxServedPerPrincipal bounds the tasks of one principal (a team
	// member) held at once over all its owners (its sessions), which it
	// can open many of.
	MaxServedPerPrincipal = 2 * MaxServedPerOwner
	// MaxServed bounds the tasks the store holds at once, of everyone.
	MaxServed = 1024
	// The tasks/result requests waiting at once for a task to end are
	// bounded as the tasks are, one wait per task an owner may hold: each
	// holds a request (an HTTP connection) open until its task ends, up
	// to its ttl. Past a bound the request is refused at once, and its
	// client can poll with tasks/get.
	MaxWaitingPerOwner     = MaxServedPerOwner
	MaxWaitingPerPrincipal = MaxServedPerPrincipal
	MaxWaiting             = MaxServed
)

// Store holds the tasks a server runs for its clients. The zero value is
// not usable; use NewStore.
type Store struct {
	mu    sync.Mutex
	tasks map[string]*served // owner + "\x00" + id
	owned map[string]int     // owner → tasks held
	byWho map[string]int     // principal → tasks held
	// waits counts the tasks/result requests waiting: by owner, by
	// principal ("p\x00" + principal) and in all ("").
	waits  map[string]int
	closed bool
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{tasks: map[string]*served{}, owned: map[string]int{}, byWho: map[string]int{}, waits: map[string]int{}}
}

type served struct {
	id        string
	owner     string
	principal string   // "" when its owner has no principal to count
	rev       revision // the revision its client speaks
	ttl       time.Duration
	created   time.Time
	cancel    context.CancelFunc
	expire    *time.Timer
	done      chan struct{} // closed once status is terminal
	mu        sync.Mutex
	status    string
	message   string
	updated   time.Time
	result    mcp.Result
	err       error
	finished  bool
	// asking counts the questions of the call open on the client's
	// session (2025-11-25): the task is input_required meanwhile.
	asking int
	// inputs are the task's open input requests (2026-07-28), keyed;
	// answers takes the answers to them (capacity 1).
	inputs  mcp.InputRequestMap
	answers chan mcp.InputResponseMap
}

func key(owner, id string) string { return owner + "\x00" + id }

// Start runs call as a new task of owner (2025-11-25), kept for ttl
// (DefaultServedTTL when 0 or longer), and returns the CreateTaskResult
// to answer the tools/call with. principal, if not "", is who owner
// belongs to: its tasks over all its owners count against
// MaxServedPerPrincipal. call's context is a new one, with none
// of the answered request's values but the task's [Run]; it ends when the
// task is cancelled or expires, or the store is closed. A call answering
// with isError makes the task failed, its first text the status message.
func (s *Store) Start(owner, principal string, ttl time.Duration, call func(context.Context) (mcp.Result, error)) (mcp.Result, error) {
	return s.start(revV1, owner, principal, ttl, call)
}

// StartExtension is Start for a client of the 2026-07-28 extension: the
// task is kept for DefaultServedTTL, its CreateTaskResult is the
// extension's (resultType "task"), and tasks/get reports its end as the
// extension says — completed with the call's result (isError included),
// or failed with the call's JSON-RPC error.
func (s *Store) StartExtension(owner, principal string, call func(context.Context) (mcp.Result, error)) (mcp.Result, error) {
	return s.start(revV2, owner, principal, 0, call)
}

func (s *Store) start(rev revision, owner, principal string, ttl time.Duration, call func(context.Context) (mcp.Result, error)) (mcp.Result, error) {
	if ttl <= 0 || ttl > DefaultServedTTL {
		ttl = DefaultServedTTL
	}
	now := time.Now().UTC()
	t := &served{id: randomID(), owner: owner, principal: principal, rev: rev, ttl: ttl, created: now, updated: now, status: statusWorking,
		done: make(chan struct{}), answers: make(chan mcp.InputResponseMap, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server is shutting down"}
	}
	var refused string
	switch {
	case s.owned[owner] >= MaxServedPerOwner:
		refused = fmt.Sprintf("too many tasks: this client holds %d; cancel some or wait for their ttl", MaxServedPerOwner)
	case principal != "" && s.byWho[principal] >= MaxServedPerPrincipal:
		refused = fmt.Sprintf("too many tasks: %s holds %d over all its sessions, its share of the gateway's tasks; cancel some or wait for their ttl", principal, MaxServedPerPrincipal)
	case len(s.tasks) >= MaxServed:
		refused = fmt.Sprintf("too many tasks: the server holds %d, as many as it takes; try again once some have ended", MaxServed)
	}
	if refused != "" {
		s.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: refused}
	}
	cctx, cancel := context.WithCancel(context.WithValue(context.Background(), runKey{}, &Run{t: t}))
	t.cancel = cancel
	s.tasks[key(owner, t.id)] = t
	s.owned[owner]++
	if principal != "" {
		s.byWho[principal]++
	}
	t.expire = time.AfterFunc(ttl, func() { s.drop(t) })
	s.mu.Unlock()
	w := t.wire() // working: the call has not begun
	go func() {
		res, err := call(cctx)
		t.finish(res, err)
	}()
	if rev == revV2 {
		w["resultType"] = "task"
		return rawResult(w)
	}
	return rawResult(map[string]any{"task": w})
}

// drop forgets t (its ttl passed), cancelling it if it still runs.
func (s *Store) drop(t *served) {
	s.mu.Lock()
	s.forget(t)
	s.mu.Unlock()
	t.end(statusCancelled, "expired: its ttl passed")
	t.cancel()
}

// forget takes t out of s, under s.mu.
func (s *Store) forget(t *served) {
	if s.tasks[key(t.owner, t.id)] != t {
		return
	}
	delete(s.tasks, key(t.owner, t.id))
	if s.owned[t.owner]--; s.owned[t.owner] <= 0 {
		delete(s.owned, t.owner)
	}
	if t.principal != "" {
		if s.byWho[t.principal]--; s.byWho[t.principal] <= 0 {
			delete(s.byWho, t.principal)
		}
	}
}

// Gone forgets every task of owner, cancelling those that still run: its
// client is gone (the session that owned them ended), and no one else
// may ask for them.
func (s *Store) Gone(owner string) {
	s.mu.Lock()
	var mine []*served
	for _, t := range s.tasks {
		if t.owner == owner {
			mine = append(mine, t)
		}
	}
	for _, t := range mine {
		s.forget(t)
	}
	s.mu.Unlock()
	for _, t := range mine {
		t.expire.Stop()
		t.end(statusCancelled, "its client's session ended")
		t.cancel()
	}
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

// Get answers tasks/get: the task's state; on 2026-07-28 with its open
// input requests, or once it ended its result or error.
func (s *Store) Get(owner, id string) (mcp.Result, error) {
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	w := t.wire()
	if t.rev == revV2 {
		w["resultType"] = "complete"
	}
	return rawResult(w)
}

// Result answers tasks/result: it waits for the task to end (or ctx),
// then returns the call's result, or its error. Waits are bounded
// (MaxWaitingPerOwner and its siblings): past one, it answers at once
// with an error saying to poll.
func (s *Store) Result(ctx context.Context, owner, id string) (mcp.Result, error) {
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	default:
		done, err := s.wait(t)
		if err != nil {
			return nil, err
		}
		defer done()
		select {
		case <-t.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
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

// wait counts one more tasks/result request waiting for t to end, by
// t's owner and principal (the requester's: a task is only its owner's),
// or refuses it past a bound; done uncounts it.
func (s *Store) wait(t *served) (done func(), err error) {
	who := "p\x00" + t.principal
	keys := []string{t.owner, ""}
	if t.principal != "" {
		keys = append(keys, who)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var refused string
	switch {
	case s.waits[t.owner] >= MaxWaitingPerOwner:
		refused = fmt.Sprintf("too many tasks/result requests waiting: this client has %d; poll with tasks/get instead", MaxWaitingPerOwner)
	case t.principal != "" && s.waits[who] >= MaxWaitingPerPrincipal:
		refused = fmt.Sprintf("too many tasks/result requests waiting: %s has %d over all its sessions; poll with tasks/get instead", t.principal, MaxWaitingPerPrincipal)
	case s.waits[""] >= MaxWaiting:
		refused = fmt.Sprintf("too many tasks/result requests waiting: the server has %d, as many as it takes; poll with tasks/get instead", MaxWaiting)
	}
	if refused != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: refused}
	}
	for _, k := range keys {
		s.waits[k]++
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, k := range keys {
			if s.waits[k]--; s.waits[k] <= 0 {
				delete(s.waits, k)
			}
		}
	}, nil
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
	if t.rev == revV2 {
		// The extension's cancellation is cooperative and acknowledged
		// with an empty result, whether or not the task had ended.
		if t.end(statusCancelled, "cancelled by the client") {
			t.cancel()
		}
		return rawResult(map[string]any{"resultType": "complete"})
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

// finish records the call's outcome, unless the task was cancelled. On
// 2025-11-25 a call answering with isError makes the task failed; on
// 2026-07-28 only a JSON-RPC error does (the extension keeps a tool's
// isError result as the completed task's result).
func (t *served) finish(res mcp.Result, err error) {
	status, msg := statusCompleted, ""
	if err != nil {
		status, msg = statusFailed, shortErr(err)
	} else if ctr, ok := res.(*mcp.CallToolResult); ok && ctr.IsError && t.rev == revV1 {
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

// wire is the task as tasks/get shows it, in its client's revision.
func (t *served) wire() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	status := t.status
	if !t.finished && (t.asking > 0 || t.inputs != nil) {
		status = statusInput
	}
	w := map[string]any{
		"taskId":        t.id,
		"status":        status,
		"createdAt":     t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.Format(time.RFC3339Nano),
	}
	if t.message != "" {
		w["statusMessage"] = t.message
	}
	if t.rev == revV1 {
		w["ttl"] = t.ttl.Milliseconds()
		w["pollInterval"] = servedPollInterval.Milliseconds()
		return w
	}
	w["ttlMs"] = t.ttl.Milliseconds()
	w["pollIntervalMs"] = servedPollInterval.Milliseconds()
	switch {
	case status == statusInput && t.inputs != nil:
		w["inputRequests"] = t.inputs
	case status == statusCompleted && t.result != nil:
		w["result"] = t.result
	case status == statusFailed:
		w["error"] = errorObject(t.err)
	}
	return w
}

// errorObject is err as the JSON-RPC error object of a failed task.
func errorObject(err error) *jsonrpc.Error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return rpc
	}
	msg := "the call failed"
	if err != nil {
		msg = shortErr(err)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

// Update answers tasks/update (2026-07-28): the answers to the task's
// open input requests go to the call waiting for them ([Run.Ask]);
// answers to anything else (keys never issued, answered already) are
// ignored, as the extension says. It is acknowledged with an empty
// result.
func (s *Store) Update(owner, id string, responses mcp.InputResponseMap) (mcp.Result, error) {
	t, err := s.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	if t.rev != revV2 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %s takes no tasks/update: it is a task of protocol 2025-11-25", quoteShort(id))}
	}
	t.mu.Lock()
	picked := mcp.InputResponseMap{}
	for k, v := range responses {
		if _, open := t.inputs[k]; open && v != nil {
			picked[k] = v
		}
	}
	if len(picked) > 0 && !t.finished {
		// Answered: the call asks again for anything still open.
		t.inputs = nil
		t.updated = time.Now().UTC()
		select {
		case t.answers <- picked:
		default:
		}
	}
	t.mu.Unlock()
	return rawResult(map[string]any{"resultType": "complete"})
}

// Run is a task's running call, as its context carries it ([RunOf]): the
// call says through it that it waits for its client's input, so that the
// task's status says input_required meanwhile.
type Run struct{ t *served }

type runKey struct{}

// RunOf returns the task whose call ctx belongs to, or nil.
func RunOf(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// Asking says that a question of the call is open on the client's session
// (2025-11-25: the question is an elicitation/create the client answers
// as ever): the task is input_required until done is called.
func (r *Run) Asking() (done func()) {
	t := r.t
	t.mu.Lock()
	t.asking++
	t.updated = time.Now().UTC()
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			t.asking--
			t.updated = time.Now().UTC()
			t.mu.Unlock()
		})
	}
}

// Ask puts input requests to the client of a 2026-07-28 task: the task is
// input_required with them until the client answers some with
// tasks/update, whose answers Ask returns, or ctx ends.
func (r *Run) Ask(ctx context.Context, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	t := r.t
	t.mu.Lock()
	if t.finished {
		t.mu.Unlock()
		return nil, context.Canceled
	}
	select {
	case <-t.answers: // stale: answers to requests no longer open
	default:
	}
	t.inputs = requests
	t.updated = time.Now().UTC()
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		if t.inputs != nil {
			t.inputs = nil
			t.updated = time.Now().UTC()
		}
		t.mu.Unlock()
	}()
	select {
	case a := <-t.answers:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// result is a result the SDK writes as the bytes it holds.
type result struct {
	mcp.ResultBase
	raw json.RawMessage
}

// MarshalJSON writes the bytes held, with any _meta the SDK set on the
// way out (2026-07-28's serverInfo) added to theirs.
func (r *result) MarshalJSON() ([]byte, error) {
	if len(r.Meta) == 0 {
		return r.raw, nil
	}
	m, err := object(r.raw)
	if err != nil {
		return r.raw, nil
	}
	meta, err := object(m["_meta"])
	if err != nil {
		return r.raw, nil
	}
	for k, v := range r.Meta {
		if _, ok := meta[k]; !ok {
			if meta[k], err = json.Marshal(v); err != nil {
				return nil, err
			}
		}
	}
	if m["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

func rawResult(v any) (mcp.Result, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &result{raw: raw}, nil
}

// asMap is a result as a JSON object to change.
func asMap(res mcp.Result) (map[string]any, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// WithCapability returns an initialize result that also offers tasks for
// tools/call, with tasks/list and tasks/cancel (2025-11-25's
// capabilities.tasks).
func WithCapability(res *mcp.InitializeResult) (mcp.Result, error) {
	m, err := asMap(res)
	if err != nil {
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

// UpdateParams are the params of tasks/update (2026-07-28).
type UpdateParams struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId"`
	InputResponses mcp.InputResponseMap `json:"inputResponses"`
}

// ListParams are the params of tasks/list.
type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// Serve adds tasks/get, tasks/result, tasks/list, tasks/cancel and
// tasks/update to srv, answered from s for the owner that owner finds in
// each request's context. Which of them a client may use (its revision's)
// is the caller's to decide, in a middleware before them.
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
	if err := mcp.AddReceivingCustomMethod(srv, methodUpdate, func(ctx context.Context, _ *mcp.ServerSession, p *UpdateParams) (mcp.Result, error) {
		if p == nil || p.TaskID == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is required"}
		}
		return s.Update(owner(ctx), p.TaskID, p.InputResponses)
	}); err != nil {
		return err
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

// Declares reports whether a 2026-07-28 request's client capabilities
// declare the tasks extension: only then may a server answer it with a
// task.
func Declares(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[extensionID]
	return ok
}

// WithExtension returns a server/discover result that also offers the
// 2026-07-28 tasks extension (capabilities.extensions).
func WithExtension(res *mcp.DiscoverResult) *mcp.DiscoverResult {
	cp := *res
	caps := &mcp.ServerCapabilities{}
	if res.Capabilities != nil {
		c := *res.Capabilities
		caps = &c
	}
	caps.Extensions = maps.Clone(caps.Extensions)
	if caps.Extensions == nil {
		caps.Extensions = map[string]any{}
	}
	caps.Extensions[extensionID] = map[string]any{}
	cp.Capabilities = caps
	return &cp
}

// WithTaskSupport returns a tools/list result whose tools carry
// execution.taskSupport, as support gives it for each tool's name ("": no
// execution field); modern marks a 2026-07-28 result (resultType
// "complete", which the SDK cannot set on the bytes).
func WithTaskSupport(res *mcp.ListToolsResult, support func(name string) string, modern bool) (mcp.Result, error) {
	m, err := asMap(res)
	if err != nil {
		return nil, err
	}
	tools, _ := m["tools"].([]any)
	for _, t := range tools {
		if t, ok := t.(map[string]any); ok {
			name, _ := t["name"].(string)
			if s := support(name); s != "" {
				t["execution"] = map[string]any{"taskSupport": s}
			}
		}
	}
	if modern {
		m["resultType"] = "complete"
	}
	return rawResult(m)
}
