package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Options configure an [Adapter]. The zero value runs as tasks only the
// tools that require it.
type Options struct {
	// Optional also runs as tasks the tools whose taskSupport is
	// "optional" (2025-11-25; on 2026-07-28 the server decides).
	Optional bool
	// TTL is the lifetime asked for each task (2025-11-25's task.ttl); 0
	// leaves it to the server.
	TTL time.Duration
	// CancelWait bounds the tasks/cancel sent when a call is given up.
	// If CancelWait <= 0, 5s is used.
	CancelWait time.Duration
	// Logger gets a debug line per task (nil: discard). It must not be a
	// logger that writes to the connection's own stdout.
	Logger *slog.Logger
}

// Adapter follows the tasks of one connection to a server. Create one per
// connection with [New] and hand it to [Wrap] or use its
// [Adapter.RoundTripper]; its methods are safe for concurrent use.
type Adapter struct {
	opts Options
	log  *slog.Logger
	next atomic.Int64

	rev    atomic.Uint32 // the revision the server offers
	cancel atomic.Bool   // the server takes tasks/cancel
	// busy counts the entries of watch, waits and follow: with none, a
	// message needs no look-up.
	busy atomic.Int32

	mu      sync.Mutex
	support map[string]string              // tool → taskSupport (2025-11-25)
	watch   map[any]watched                // SDK request ids whose answer the adapter reads
	waits   map[any]chan *jsonrpc.Response // the adapter's own request ids, both ways
	follow  map[any]*follower              // by the SDK's id of the call
	byTask  map[string]*follower           // by task id (status notifications)

	closed    chan struct{}
	closeOnce sync.Once
}

// New returns an Adapter for one connection; opts may be nil.
func New(opts *Options) *Adapter {
	a := &Adapter{
		support: map[string]string{},
		watch:   map[any]watched{},
		waits:   map[any]chan *jsonrpc.Response{},
		follow:  map[any]*follower{},
		byTask:  map[string]*follower{},
		closed:  make(chan struct{}),
	}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.CancelWait <= 0 {
		a.opts.CancelWait = 5 * time.Second
	}
	a.log = a.opts.Logger
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return a
}

// Close ends the adapter with its connection: tasks being followed are
// left (their calls fail with the connection), and nothing more is sent.
// Idempotent.
func (a *Adapter) Close() {
	a.closeOnce.Do(func() { close(a.closed) })
}

// TaskSupport says how the server runs tool as a task, as the adapter
// learned it: its execution.taskSupport on 2025-11-25 ("required" or
// "optional"; "" for none, or a tool not listed yet), and "optional" for
// every tool of a 2026-07-28 server that offers the extension, where the
// server decides per call. The gateway shows it to its own task-capable
// clients.
func (a *Adapter) TaskSupport(tool string) string {
	switch a.revision() {
	case revV1:
		a.mu.Lock()
		s := a.support[tool]
		a.mu.Unlock()
		if s == "required" || s == "optional" {
			return s
		}
	case revV2:
		return "optional"
	}
	return ""
}

// errClosed ends what waits on a closed adapter.
var errClosed = errors.New("connection closed")

// A Mark learns whether a call became a task: the host puts one in a
// call's context ([WithMark]) and reads it when the call fails, so that a
// call cut by a dropped connection is not re-run once the server took it
// as a task.
type Mark struct{ id atomic.Pointer[string] }

// TaskID is the id of the task the call became, or "" if it did not
// (yet) become one.
func (m *Mark) TaskID() string {
	if p := m.id.Load(); p != nil {
		return *p
	}
	return ""
}

type markKey struct{}

// WithMark returns a context whose tool call reports to m.
func WithMark(ctx context.Context, m *Mark) context.Context {
	return context.WithValue(ctx, markKey{}, m)
}

// link is the way the adapter reaches the server and the SDK for one call:
// the connection (stdio, SSE), or one HTTP exchange (Streamable HTTP).
type link interface {
	// send writes a request of the adapter's own to the server; its
	// response comes back through Adapter.incoming.
	send(ctx context.Context, req *jsonrpc.Request) error
	// deliver hands msg to the SDK as though the server had sent it.
	deliver(msg jsonrpc.Message) error
	// started says that f now follows a task over the link.
	started(f *follower)
	// done says that nothing more will be delivered for f.
	done(f *follower)
}

type watchKind uint8

const (
	watchInit watchKind = iota + 1
	watchDiscover
	watchList
	watchCall
)

type watched struct {
	kind watchKind
	call *pendingCall
}

// pendingCall is a tools/call the adapter augmented, until its answer.
type pendingCall struct {
	id        jsonrpc.ID
	name      string
	token     json.RawMessage // the call's progress token, if any
	mark      *Mark
	meta      json.RawMessage // 2026-07-28: the _meta the adapter's requests carry
	cancelled atomic.Bool     // the SDK gave up before the answer came
}

func (a *Adapter) revision() revision { return revision(a.rev.Load()) }

// outgoing looks at a message the SDK sends over l: it returns what to
// send instead (most often msg itself), or nil when the adapter took it.
func (a *Adapter) outgoing(ctx context.Context, msg jsonrpc.Message, l link) jsonrpc.Message {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		switch m.Method {
		case "tools/call":
			if a.revision() == revNone || !m.IsCall() {
				return msg
			}
			return a.callOut(ctx, m, l)
		case "notifications/cancelled":
			if a.busy.Load() == 0 {
				return msg
			}
			return a.cancelOut(m)
		case "tools/list":
			if a.revision() == revV1 && m.IsCall() {
				a.watchID(m.ID, watched{kind: watchList})
			}
		case "initialize":
			if m.IsCall() {
				a.watchID(m.ID, watched{kind: watchInit})
			}
		case "server/discover":
			if m.IsCall() {
				a.watchID(m.ID, watched{kind: watchDiscover})
			}
		}
	case *jsonrpc.Response:
		// The SDK's answer to a request the adapter handed it (an input
		// request of a 2026-07-28 task).
		if a.busy.Load() > 0 && a.answer(m) {
			return nil
		}
	}
	return msg
}

// sendFailed undoes what outgoing recorded for msg, which never left.
func (a *Adapter) sendFailed(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && a.busy.Load() > 0 {
		take(a, a.watch, idKey(req.ID))
	}
}

// take removes key from m, one of the adapter's maps of what it waits
// for, and returns what it held.
func take[V any](a *Adapter, m map[any]V, key any) (V, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := m[key]
	if ok {
		delete(m, key)
		a.busy.Add(-1)
	}
	return v, ok
}

func (a *Adapter) watchID(id jsonrpc.ID, w watched) {
	a.mu.Lock()
	if _, dup := a.watch[idKey(id)]; !dup {
		a.busy.Add(1)
	}
	a.watch[idKey(id)] = w
	a.mu.Unlock()
}

// callOut augments a tools/call for a tool that runs as a task.
func (a *Adapter) callOut(ctx context.Context, m *jsonrpc.Request, l link) jsonrpc.Message {
	var p callParams
	if json.Unmarshal(m.Params, &p) != nil {
		return m
	}
	var params json.RawMessage
	var err error
	switch a.revision() {
	case revV1:
		if !a.runsAsTask(ctx, p.Name, l) {
			return m
		}
		params, err = withTaskField(m.Params, a.opts.TTL)
	case revV2:
		params, err = withExtension(m.Params)
	}
	if err != nil {
		return m
	}
	mark, _ := ctx.Value(markKey{}).(*Mark)
	c := &pendingCall{id: m.ID, name: p.Name, token: p.Meta.ProgressToken, mark: mark}
	if a.revision() == revV2 {
		c.meta = requestMeta(params)
	}
	a.watchID(m.ID, watched{kind: watchCall, call: c})
	return &jsonrpc.Request{ID: m.ID, Method: m.Method, Params: params, Extra: m.Extra}
}

// runsAsTask says whether a 2025-11-25 tool is called as a task. A tool
// the adapter has not seen in a tools/list of this connection (the host
// may call from the list of a connection before) makes it list the tools
// itself first.
func (a *Adapter) runsAsTask(ctx context.Context, name string, l link) bool {
	a.mu.Lock()
	s, known := a.support[name]
	a.mu.Unlock()
	if !known {
		a.listTools(ctx, l)
		a.mu.Lock()
		s, known = a.support[name]
		if !known {
			a.support[name] = "" // not listed: no task, and no list again for it
		}
		a.mu.Unlock()
	}
	return a.asksTask(s)
}

// asksTask says whether a 2025-11-25 tool of taskSupport s is called as a
// task: "required" always, "optional" with the server's "tasks" setting.
func (a *Adapter) asksTask(s string) bool {
	return s == "required" || (s == "optional" && a.opts.Optional)
}

// listTools reads every page of the server's tools/list, for their
// taskSupport. A failure leaves the support as it was.
func (a *Adapter) listTools(ctx context.Context, l link) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cursor := ""
	for range 100 { // pages; a server that never ends its list is cut off
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		resp, err := a.call(ctx, l, "tools/list", params)
		if err != nil || resp.Error != nil {
			return
		}
		a.learnTools(resp.Result)
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal(resp.Result, &page) != nil || page.NextCursor == "" {
			return
		}
		cursor = page.NextCursor
	}
}

func (a *Adapter) learnTools(result json.RawMessage) {
	s := taskSupports(result)
	a.mu.Lock()
	for name, v := range s {
		a.support[name] = v
	}
	a.mu.Unlock()
}

// cancelOut turns the SDK's cancellation of a call that became a task into
// tasks/cancel; the notification itself is not sent (the request it names
// is answered already, and 2026-07-28 forbids it for tasks).
func (a *Adapter) cancelOut(m *jsonrpc.Request) jsonrpc.Message {
	var p cancelledParams
	if json.Unmarshal(m.Params, &p) != nil {
		return m
	}
	key, ok := rawIDKey(p.RequestID)
	if !ok {
		return m
	}
	a.mu.Lock()
	f := a.follow[key]
	w, pending := a.watch[key]
	a.mu.Unlock()
	if f != nil {
		f.halt()
		return nil
	}
	if pending && w.call != nil {
		// Not yet a task: the server may still make one, which is then
		// cancelled as soon as it is known.
		w.call.cancelled.Store(true)
	}
	return m
}

// givenUp marks a call the SDK gave up before its answer came: a task it
// becomes is cancelled at once.
func (a *Adapter) givenUp(id jsonrpc.ID) {
	a.mu.Lock()
	w, ok := a.watch[idKey(id)]
	a.mu.Unlock()
	if ok && w.call != nil {
		w.call.cancelled.Store(true)
	}
}

// answer routes the SDK's response to a request the adapter handed it.
func (a *Adapter) answer(m *jsonrpc.Response) bool {
	key := idKey(m.ID)
	if _, own := key.(string); !own {
		return false // the adapter's ids are strings, the SDK's numbers
	}
	ch, ok := take(a, a.waits, key)
	if ok {
		ch <- m
	}
	return ok
}

// incoming looks at a message the server sent over l: it returns what the
// SDK gets instead (most often msg itself), or nil when the adapter took
// it.
func (a *Adapter) incoming(msg jsonrpc.Message, l link) jsonrpc.Message {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if a.busy.Load() == 0 {
			return msg
		}
		if a.answer(m) {
			return nil
		}
		w, ok := take(a, a.watch, idKey(m.ID))
		if !ok || m.Error != nil {
			return msg
		}
		switch w.kind {
		case watchInit, watchDiscover:
			rev, cancel := serverSupport(m.Result, w.kind == watchDiscover)
			a.rev.Store(uint32(rev))
			a.cancel.Store(cancel)
		case watchList:
			a.learnTools(m.Result)
		case watchCall:
			return a.answered(w.call, m, l)
		}
	case *jsonrpc.Request:
		if m.Method == notifyStatusV1 || m.Method == notifyStatusV2 {
			a.notice(m.Params)
			return nil // the SDK knows no such notification
		}
	}
	return msg
}

// answered reads the server's answer to an augmented call: a task starts
// being followed; anything else goes to the SDK.
func (a *Adapter) answered(c *pendingCall, m *jsonrpc.Response, l link) jsonrpc.Message {
	rev := a.revision()
	t, err := created(rev, m.Result)
	if err != nil {
		return &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "the server answered with a task that is not one: " + err.Error()}}
	}
	if t == nil {
		return m
	}
	if c.mark != nil {
		c.mark.id.Store(&t.ID)
	}
	a.log.Debug("call became a task", "tool", c.name, "task", t.ID, "status", t.Status)
	if c.cancelled.Load() {
		go a.cancelTask(l, t.ID, c.meta)
		return nil
	}
	f := &follower{
		a: a, l: l, call: c, rev: rev, t: t, since: time.Now(),
		stop: make(chan struct{}), finished: make(chan struct{}), notices: make(chan *task, 1), asked: map[string]bool{},
	}
	key := idKey(c.id)
	a.mu.Lock()
	a.follow[key] = f
	a.byTask[t.ID] = f
	a.busy.Add(1)
	a.mu.Unlock()
	l.started(f)
	go f.run()
	return nil
}

// notice hands a status notification to the task's follower.
func (a *Adapter) notice(params json.RawMessage) {
	t, err := parseTask(params)
	if err != nil {
		return
	}
	a.mu.Lock()
	f := a.byTask[t.ID]
	a.mu.Unlock()
	if f == nil {
		return
	}
	select { // the latest wins
	case <-f.notices:
	default:
	}
	select {
	case f.notices <- t:
	default:
	}
}

func (a *Adapter) forget(f *follower) {
	a.mu.Lock()
	if a.follow[idKey(f.call.id)] == f {
		delete(a.follow, idKey(f.call.id))
		delete(a.byTask, f.t.ID)
		a.busy.Add(-1)
	}
	a.mu.Unlock()
}

// ownPrefix starts the ids of the adapter's own requests (to the server,
// and those it hands the SDK): the SDK's are numbers.
const ownPrefix = "switchboard-task-"

// call sends a request of the adapter's own over l and waits for its
// response.
func (a *Adapter) call(ctx context.Context, l link, method string, params any) (*jsonrpc.Response, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return a.exchange(ctx, func(id jsonrpc.ID) error {
		return l.send(ctx, &jsonrpc.Request{ID: id, Method: method, Params: raw})
	})
}

// ask hands the SDK a request as though the server had sent it, and waits
// for the SDK's answer.
func (a *Adapter) ask(ctx context.Context, l link, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	return a.exchange(ctx, func(id jsonrpc.ID) error {
		return l.deliver(&jsonrpc.Request{ID: id, Method: method, Params: params})
	})
}

// exchange puts a request of the adapter's own under a new id and waits
// for the response to it.
func (a *Adapter) exchange(ctx context.Context, put func(jsonrpc.ID) error) (*jsonrpc.Response, error) {
	id, _ := jsonrpc.MakeID(ownPrefix + strconv.FormatInt(a.next.Add(1), 10))
	ch := make(chan *jsonrpc.Response, 1)
	a.mu.Lock()
	a.waits[idKey(id)] = ch
	a.busy.Add(1)
	a.mu.Unlock()
	defer take(a, a.waits, idKey(id))
	if err := put(id); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-a.closed:
		return nil, errClosed
	}
}

// cancelTask asks the server to cancel a task, best effort and bounded.
func (a *Adapter) cancelTask(l link, id string, meta json.RawMessage) {
	if a.revision() == revV1 && !a.cancel.Load() {
		a.log.Debug("task left running: the server takes no tasks/cancel", "task", id)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.opts.CancelWait)
	defer cancel()
	go func() { // a closed connection sends nothing more
		select {
		case <-a.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := a.call(ctx, l, methodCancel, taskIDParams{TaskID: id, Meta: meta})
	switch {
	case err != nil:
		a.log.Debug("tasks/cancel failed", "task", id, "error", err)
	case resp.Error != nil:
		a.log.Debug("tasks/cancel refused", "task", id, "error", resp.Error)
	default:
		a.log.Debug("task cancelled", "task", id)
	}
}
