package testserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tasks server runs tools as MCP tasks, written against the
// specification's task flow for both revisions: 2025-11-25's experimental
// tasks (the client asks with a `task` field on tools/call, for tools whose
// execution.taskSupport allows it; tasks/get, tasks/result, tasks/list,
// tasks/cancel) and the 2026-07-28 extension io.modelcontextprotocol/tasks
// (the client declares the extension per request and the server decides;
// resultType "task", tasks/get carrying the result, tasks/update,
// tasks/cancel). Which one a client gets follows the protocol it
// negotiates; -protocol 2025-11-25 pins the older.
//
// The Go SDK knows neither: the server adds what the wire needs around it
// (capabilities.tasks, execution on tools, the CreateTaskResult), and its
// stdio and HTTP forms move a tools/call's `task` field into _meta
// (liftedTaskKey) before the SDK reads the request, which would drop it.
func init() {
	register("tasks", serverDef{
		doc: "tools that run as tasks (both revisions): work (stages, each shown by a tasks/get before the next), maybe (optional: says how it ran), " +
			"plain (no task), ask (input_required: one question), fail (the task fails with a JSON-RPC error), expire " +
			"(a short ttl, never finishes), never (never finishes; says idempotentHint), garbage (tasks/get answers nonsense), unknown (tasks/get: no such task); " +
			"-log appends \"call TOOL task REVISION|plain|refused\", \"polled TOOL ID\" (the first tasks/get), \"cancel ID\" lines",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := &tasksConfig{}
			fs.StringVar(&cfg.protocol, "protocol", "", "speak only this protocol revision (2025-11-25: the experimental tasks utility)")
			fs.DurationVar(&cfg.stage, "stage", 30*time.Millisecond, "how long each stage of work takes")
			fs.DurationVar(&cfg.poll, "poll", 20*time.Millisecond, "the pollInterval the tasks suggest")
			fs.DurationVar(&cfg.ttl, "expire-ttl", 300*time.Millisecond, "the ttl of expire's tasks")
			fs.BoolVar(&cfg.noCancel, "no-cancel", false, "do not offer tasks/cancel (2025-11-25)")
			fs.StringVar(&cfg.log, "log", "", "file to append a line to per tools/call and tasks/cancel")
			fs.BoolVar(&cfg.holdCreate, "hold-create", false, "answer a task call only once the client has cancelled it (notifications/cancelled), as a server that was slow to answer")
			fs.BoolVar(&cfg.endedCreate, "ended-create", false, "answer a task call once its task has ended (maybe, fail), as a server whose work was quick: the CreateTaskResult says completed or failed, without the outcome")
			fs.StringVar(&p.pidFile, "pid-file", "", "file to append this process's pid to")
			fs.StringVar(&cfg.failMessage, "fail-message", "the tool broke", "the message of fail's error, and its status message as it fails")
			fs.StringVar(&cfg.taskIDPrefix, "task-id-prefix", "", "start each task id with this (a server whose ids collide with another's, or say anything: escapes, paths, megabytes)")
			fs.IntVar(&cfg.failRepeat, "fail-repeat", 1, "repeat -fail-message this many times (a server that answers megabytes)")
			p.build = func() *mcp.Server { return newTasksServer(cfg, p) }
			return func(ctx context.Context) error {
				return p.serve(ctx, p.build(), &liftingReader{r: bufio.NewReader(p.in)})
			}
		},
	})
}

type tasksConfig struct {
	protocol     string
	stage, poll  time.Duration
	ttl          time.Duration
	noCancel     bool
	log          string
	holdCreate   bool
	endedCreate  bool
	failMessage  string
	failRepeat   int
	taskIDPrefix string
}

const legacyRevision = "2025-11-25"

// liftedTaskKey is where the server's transports put a tools/call's
// `task` field, in _meta, for the SDK to keep it.
const liftedTaskKey = "switchboard.test/task"

// taskTools are the tools' execution.taskSupport.
var taskTools = map[string]string{
	"work": "required", "maybe": "optional", "ask": "required", "fail": "required",
	"expire": "required", "never": "required", "garbage": "required", "unknown": "required",
}

// RequestFilter returns what server name's HTTP form does to each POST
// body before the SDK reads it (testhttp applies it), or nil.
func RequestFilter(name string) func([]byte) []byte {
	if name == "tasks" {
		return liftTaskField
	}
	return nil
}

// liftTaskField rewrites one JSON-RPC message for the tasks server: a
// tools/call's `task` field moves into _meta, where the SDK keeps it.
// Other messages come back unchanged.
func liftTaskField(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"task"`)) {
		return msg
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || string(m["method"]) != `"tools/call"` {
		return msg
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) != nil || params["task"] == nil {
		return msg
	}
	meta := map[string]json.RawMessage{}
	if raw := params["_meta"]; raw != nil && json.Unmarshal(raw, &meta) != nil {
		return msg
	}
	meta[liftedTaskKey] = params["task"]
	delete(params, "task")
	params["_meta"], _ = json.Marshal(meta)
	m["params"], _ = json.Marshal(params)
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// liftingReader applies liftTaskField to each line read.
type liftingReader struct {
	r   *bufio.Reader
	buf []byte
}

func (l *liftingReader) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		line, err := l.r.ReadBytes('\n')
		if len(line) > 0 {
			l.buf = append(liftTaskField(bytes.TrimRight(line, "\r\n")), '\n')
		}
		if err != nil {
			if len(l.buf) > 0 {
				break
			}
			return 0, err
		}
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// rawResult is a result the server writes itself.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

type taskIDIn struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type taskUpdateIn struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// serverTask is one task of the server.
type serverTask struct {
	id, tool string
	modern   bool // 2026-07-28
	created  time.Time
	ttl      time.Duration // 0: unlimited
	mu       sync.Mutex
	status   string
	message  string
	updated  time.Time
	result   json.RawMessage // completed
	rpcErr   *jsonrpc.Error  // failed
	question bool            // ask: a question is open
	polled   bool            // a tasks/get came for it
	answer   chan json.RawMessage
	seen     chan string   // gets the status message each tasks/get shows (when not full)
	done     chan struct{} // closed when terminal
	stop     context.CancelFunc
}

type tasksServer struct {
	cfg  *tasksConfig
	p    *proc
	mu   sync.Mutex
	all  map[string]*serverTask
	made int // tasks made
}

func newTasksServer(cfg *tasksConfig, p *proc) *mcp.Server {
	var opts mcp.ServerOptions
	if cfg.protocol != "" {
		opts.SupportedProtocolVersions = []string{cfg.protocol}
	}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension("io.modelcontextprotocol/tasks", nil)
	opts.Capabilities = caps
	s := mcp.NewServer(implementation("tasks"), &opts)
	ts := &tasksServer{cfg: cfg, p: p, all: map[string]*serverTask{}}

	type textIn struct {
		Text   string `json:"text,omitempty"`
		Stages int    `json:"stages,omitempty"`
	}
	plainly := func(_ context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		ts.logf("call %s plain", req.Params.Name)
		if req.Params.Name == "maybe" {
			return text("plainly"), nil, nil
		}
		return text("plain: " + in.Text), nil, nil
	}
	for _, name := range []string{"work", "maybe", "plain", "ask", "fail", "expire", "never", "garbage", "unknown"} {
		tool := &mcp.Tool{Name: name, Description: "A task tool of the tasks test server: " + name + "."}
		if name == "never" {
			// So that only the rule that a task is never re-run keeps a
			// host from calling it again after a reconnect.
			tool.Annotations = &mcp.ToolAnnotations{IdempotentHint: true}
		}
		mcp.AddTool(s, tool, plainly)
	}
	s.AddReceivingMiddleware(ts.middleware)
	_ = mcp.AddReceivingCustomMethod(s, "tasks/get", ts.get)
	_ = mcp.AddReceivingCustomMethod(s, "tasks/result", ts.result)
	_ = mcp.AddReceivingCustomMethod(s, "tasks/cancel", ts.cancel)
	_ = mcp.AddReceivingCustomMethod(s, "tasks/update", ts.update)
	_ = mcp.AddReceivingCustomMethod(s, "tasks/list", ts.list)
	return s
}

func (ts *tasksServer) logf(format string, args ...any) {
	appendLine(ts.p, ts.cfg.log, fmt.Sprintf(format, args...))
}

// modern reports whether a request came on protocol 2026-07-28.
func modernRequest(req mcp.Request) bool {
	v, _ := req.GetParams().GetMeta()[mcp.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

func (ts *tasksServer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			tasks := map[string]any{"list": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
			if !ts.cfg.noCancel {
				tasks["cancel"] = map[string]any{}
			}
			return withFields(res, func(m map[string]any) {
				caps, _ := m["capabilities"].(map[string]any)
				if caps == nil {
					caps = map[string]any{}
					m["capabilities"] = caps
				}
				delete(caps, "extensions")
				caps["tasks"] = tasks
			})
		case "tools/list":
			res, err := next(ctx, method, req)
			if err != nil || modernRequest(req) {
				return res, err
			}
			return withFields(res, func(m map[string]any) {
				tools, _ := m["tools"].([]any)
				for _, t := range tools {
					if t, ok := t.(map[string]any); ok {
						if s := taskTools[fmt.Sprint(t["name"])]; s != "" {
							t["execution"] = map[string]any{"taskSupport": s}
						}
					}
				}
			})
		case "tools/call":
			return ts.call(ctx, next, method, req)
		}
		return next(ctx, method, req)
	}
}

// withFields returns res as JSON, edited by edit.
func withFields(res mcp.Result, edit func(map[string]any)) (mcp.Result, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	edit(m)
	b, err = json.Marshal(m)
	return &rawResult{raw: b}, err
}

// asked reports whether the client asked for a task: the `task` field
// (2025-11-25) or the extension in the request's capabilities (2026-07-28).
func asked(req mcp.Request, modern bool) bool {
	meta := req.GetParams().GetMeta()
	if !modern {
		_, ok := meta[liftedTaskKey]
		return ok
	}
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	_, ok := exts["io.modelcontextprotocol/tasks"]
	return ok
}

func (ts *tasksServer) call(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	ctr, ok := req.(*mcp.CallToolRequest)
	if !ok {
		return next(ctx, method, req)
	}
	name := ctr.Params.Name
	support := taskTools[name]
	modern := modernRequest(req)
	if support == "" || !asked(req, modern) {
		if support == "required" {
			ts.logf("call %s refused", name)
			if modern {
				return nil, &jsonrpc.Error{Code: -32021, Message: "Missing required client capability",
					Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`)}
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("Tool %s requires task augmentation (taskSupport: 'required')", name)}
		}
		return next(ctx, method, req)
	}
	rev := legacyRevision
	if modern {
		rev = "2026-07-28"
	}
	ts.logf("call %s task %s", name, rev)
	var in struct {
		Text   string `json:"text"`
		Stages int    `json:"stages"`
	}
	_ = json.Unmarshal(ctr.Params.Arguments, &in)
	t := ts.newTask(name, modern)
	if name == "expire" {
		t.ttl = ts.cfg.ttl
	}
	runCtx, stop := context.WithCancel(context.Background())
	t.stop = stop
	go ts.run(runCtx, t, in.Text, in.Stages)
	if ts.cfg.holdCreate {
		<-ctx.Done() // the client gave up on the call: the task exists all the same
		ts.logf("answered %s after the client gave up", name)
	}
	if ts.cfg.endedCreate {
		select {
		case <-t.done:
		case <-ctx.Done():
		}
	}
	return &rawResult{raw: t.createResult(ts.cfg.poll)}, nil
}

func (ts *tasksServer) newTask(tool string, modern bool) *serverTask {
	var b [16]byte
	_, _ = rand.Read(b[:])
	now := time.Now()
	ts.mu.Lock()
	ts.made++
	n := ts.made
	ts.mu.Unlock()
	id := hex.EncodeToString(b[:])
	if ts.cfg.taskIDPrefix != "" {
		id = ts.cfg.taskIDPrefix + strconv.Itoa(n) // the same ids as another server's with the prefix
	}
	t := &serverTask{
		id: id, tool: tool, modern: modern, created: now, updated: now,
		status: "working", answer: make(chan json.RawMessage, 1), seen: make(chan string, 1), done: make(chan struct{}),
	}
	ts.mu.Lock()
	ts.all[t.id] = t
	ts.mu.Unlock()
	return t
}

func (ts *tasksServer) find(id string) *serverTask {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.all[id]
}

// run does a task's work.
func (ts *tasksServer) run(ctx context.Context, t *serverTask, in string, stages int) {
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	switch t.tool {
	case "work":
		if stages <= 0 {
			stages = 3
		}
		// Each stage lasts until a tasks/get has shown it, so that every
		// status message reaches a polling client, however slow.
		for i := 1; i <= stages; i++ {
			msg := fmt.Sprintf("stage %d of %d", i, stages)
			t.set("working", msg)
			for seen := ""; seen != msg; {
				select {
				case <-ctx.Done():
					return
				case seen = <-t.seen:
				}
			}
			if !sleep(ts.cfg.stage) {
				return
			}
		}
		t.complete(text("worked: "+in), nil)
	case "maybe":
		t.complete(text("as a task"), nil)
	case "ask":
		if !sleep(ts.cfg.stage) {
			return
		}
		t.mu.Lock()
		t.question = true
		t.mu.Unlock()
		t.set("input_required", "Which colour?")
		var a json.RawMessage
		select {
		case <-ctx.Done():
			return
		case a = <-t.answer:
		}
		t.mu.Lock()
		t.question = false
		t.mu.Unlock()
		t.set("working", "got an answer")
		var r mcp.ElicitResult
		_ = json.Unmarshal(a, &r)
		reply := "the user chose " + r.Action
		if r.Action == "accept" {
			reply = fmt.Sprint(r.Content["colour"])
		}
		t.complete(text("colour: "+reply), nil)
	case "fail":
		if !sleep(ts.cfg.stage) {
			return
		}
		msg := strings.Repeat(ts.cfg.failMessage, max(ts.cfg.failRepeat, 1))
		t.set("working", msg)
		t.complete(nil, &jsonrpc.Error{Code: -32000, Message: msg})
	default: // expire, never, garbage, unknown: work until cancelled
		<-ctx.Done()
	}
}

func (t *serverTask) set(status, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if isTerminal(t.status) {
		return
	}
	t.status, t.message, t.updated = status, message, time.Now()
}

func isTerminal(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

func (t *serverTask) complete(res *mcp.CallToolResult, rpcErr *jsonrpc.Error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if isTerminal(t.status) {
		return
	}
	t.updated = time.Now()
	if rpcErr != nil {
		t.status, t.message, t.rpcErr = "failed", "Tool execution failed: "+rpcErr.Message, rpcErr
	} else {
		t.result, _ = json.Marshal(res)
		t.status, t.message = "completed", "done"
	}
	close(t.done)
}

// state is the task as the protocol shows it: CreateTaskResult's task,
// tasks/get's result.
func (t *serverTask) state(poll time.Duration, detailed bool) map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := map[string]any{
		"taskId": t.id, "status": t.status,
		"createdAt": t.created.UTC().Format(time.RFC3339Nano), "lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
	}
	if t.message != "" {
		m["statusMessage"] = t.message
	}
	var ttl any // null: unlimited
	if t.ttl > 0 {
		ttl = t.ttl.Milliseconds()
	}
	if t.modern {
		m["ttlMs"], m["pollIntervalMs"] = ttl, poll.Milliseconds()
	} else {
		m["ttl"], m["pollInterval"] = ttl, poll.Milliseconds()
	}
	if detailed && t.modern {
		m["resultType"] = "complete"
		switch {
		case t.status == "completed":
			m["result"] = t.result
		case t.status == "failed":
			m["error"] = t.rpcErr
		case t.status == "input_required" && t.question:
			m["inputRequests"] = map[string]any{"colour": map[string]any{
				"method": "elicitation/create",
				"params": map[string]any{"mode": "form", "message": "Which colour?", "requestedSchema": answerSchema("colour")},
			}}
		}
	}
	return m
}

func (t *serverTask) createResult(poll time.Duration) json.RawMessage {
	st := t.state(poll, false)
	var b []byte
	if t.modern {
		st["resultType"] = "task"
		b, _ = json.Marshal(st)
	} else {
		b, _ = json.Marshal(map[string]any{"task": st})
	}
	return b
}

var errNoTask = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}

func (ts *tasksServer) get(_ context.Context, _ *mcp.ServerSession, in *taskIDIn) (*rawResult, error) {
	t := ts.find(in.TaskID)
	if t == nil || t.tool == "unknown" {
		return nil, errNoTask
	}
	if t.tool == "garbage" {
		return &rawResult{raw: json.RawMessage(`{"taskId":42,"status":["working"]}`)}, nil
	}
	st := t.state(ts.cfg.poll, true)
	b, err := json.Marshal(st)
	select {
	case t.seen <- fmt.Sprint(st["statusMessage"]):
	default:
	}
	t.mu.Lock()
	first := !t.polled
	t.polled = true
	t.mu.Unlock()
	if first { // the client has the task: it polls
		ts.logf("polled %s %s", t.tool, t.id)
	}
	return &rawResult{raw: b}, err
}

// result is 2025-11-25's tasks/result: it blocks until the task ends,
// asking the client its question on the way (input_required).
func (ts *tasksServer) result(ctx context.Context, ss *mcp.ServerSession, in *taskIDIn) (*rawResult, error) {
	t := ts.find(in.TaskID)
	if t == nil {
		return nil, errNoTask
	}
	related := mcp.Meta{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}
	askedOnce := false
	for {
		t.mu.Lock()
		question := t.question && t.status == "input_required" && !askedOnce
		t.mu.Unlock()
		if question {
			askedOnce = true
			r, err := ss.Elicit(ctx, &mcp.ElicitParams{Meta: related, Message: "Which colour?", RequestedSchema: answerSchema("colour")})
			if err != nil {
				r = &mcp.ElicitResult{Action: "cancel"}
			}
			b, _ := json.Marshal(r)
			select {
			case t.answer <- b:
			default:
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.done:
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.rpcErr != nil {
				return nil, t.rpcErr
			}
			var m map[string]any
			_ = json.Unmarshal(t.result, &m)
			m["_meta"] = related
			b, err := json.Marshal(m)
			return &rawResult{raw: b}, err
		case <-time.After(ts.cfg.poll):
		}
	}
}

func (ts *tasksServer) cancel(_ context.Context, _ *mcp.ServerSession, in *taskIDIn) (*rawResult, error) {
	ts.logf("cancel %s", in.TaskID)
	t := ts.find(in.TaskID)
	if t == nil {
		return nil, errNoTask
	}
	t.mu.Lock()
	if isTerminal(t.status) {
		st := t.status
		t.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Cannot cancel task: already in terminal status '" + st + "'"}
	}
	t.status, t.message, t.updated = "cancelled", "The task was cancelled by request.", time.Now()
	close(t.done)
	t.mu.Unlock()
	t.stop()
	if t.modern {
		return &rawResult{raw: json.RawMessage(`{"resultType":"complete"}`)}, nil
	}
	b, err := json.Marshal(t.state(ts.cfg.poll, false))
	return &rawResult{raw: b}, err
}

// update is 2026-07-28's tasks/update: the answers to input requests.
func (ts *tasksServer) update(_ context.Context, _ *mcp.ServerSession, in *taskUpdateIn) (*rawResult, error) {
	t := ts.find(in.TaskID)
	if t == nil {
		return nil, errNoTask
	}
	if a, ok := in.InputResponses["colour"]; ok {
		select {
		case t.answer <- a:
		default:
		}
	}
	return &rawResult{raw: json.RawMessage(`{"resultType":"complete"}`)}, nil
}

func (ts *tasksServer) list(context.Context, *mcp.ServerSession, *taskIDIn) (*rawResult, error) {
	ts.mu.Lock()
	all := make([]*serverTask, 0, len(ts.all))
	for _, t := range ts.all {
		all = append(all, t)
	}
	ts.mu.Unlock()
	list := make([]any, 0, len(all))
	for _, t := range all {
		list = append(list, t.state(ts.cfg.poll, false))
	}
	b, err := json.Marshal(map[string]any{"tasks": list})
	return &rawResult{raw: b}, err
}
