package gateway

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/tasks"
)

// Task-capable clients, in the revision each speaks. The call a task runs
// goes through everything a call does — decided, audited and timed once,
// a task upstream followed by the host — after its tools/call is answered
// with the gateway's own task; tasks.Store holds the tasks of both.
//
// 2025-11-25 (the tasks utility): the gateway offers tasks for tools/call
// in its initialize result, and a call whose client asks for a task (the
// `task` field, which Transport and BindHTTP keep for it:
// tasks.TakeTaskField) is answered with a task; the client follows it
// with tasks/get, tasks/result, tasks/list and tasks/cancel. A task is its
// client's alone: its credentials and session (taskOwner); another client
// asking for it is told there is no such task. Not on a stateless HTTP
// gateway, where nothing tells one unauthenticated client from another.
//
// 2026-07-28 (the extension io.modelcontextprotocol/tasks): the gateway
// offers the extension in its server/discover result, and decides: a call
// that declares the extension, of a tool that runs as a task upstream
// (execution.taskSupport as the host learned it), is answered with a task;
// the client follows it with tasks/get (the result, or the call's
// questions as inputRequests), tasks/update (the answers) and tasks/cancel.
// That protocol has no sessions over HTTP, so there a task is owned by the
// client's credentials (extensionOwner), and its 128-bit id, which no
// tasks/list shows, guards it between clients that send none.

type taskOwnerKey struct{}

// serveTasks is the outermost receiving middleware but the first-sync
// wait (whether a tool runs as a task needs its route): it offers tasks in the
// initialize and server/discover results, shows task-capable clients which
// tools run as tasks, runs calls as tasks, and tells the tasks/* methods
// whose request it is (refusing the methods of the other revision).
func (g *Gateway) serveTasks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && ir.ProtocolVersion < "2026-07-28" && !g.sessionless(session(req)) {
				return tasks.WithCapability(ir)
			}
			return res, err
		case "server/discover":
			res, err := next(ctx, method, req)
			if dr, ok := res.(*mcp.DiscoverResult); ok && err == nil {
				return tasks.WithExtension(dr), nil
			}
			return res, err
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && g.tasksNegotiated(req) && g.listsTaskTools(lr) {
				return tasks.WithTaskSupport(lr, g.servedTaskSupport, modernRequest(req))
			}
			return res, err
		case "tools/call":
			creq, ok := req.(*mcp.CallToolRequest)
			if !ok || creq.Params == nil {
				return next(ctx, method, req)
			}
			if modernRequest(req) {
				// The look-up first: decoding the client's capabilities costs more.
				if g.taskSupport(creq.Params.Name) == "" || creq.Params.RequestState != "" || !declaresTasks(req) {
					return next(ctx, method, req)
				}
				bg := detached(creq)
				return g.tasks.StartExtension(extensionOwner(req), taskPrincipal(req), func(tctx context.Context) (mcp.Result, error) {
					return g.extensionTask(tctx, next, method, bg)
				})
			}
			ttl, asked := tasks.Requested(creq.Params.Meta)
			if !asked || !taskProtocol(creq.Session) || g.sessionless(creq.Session) {
				return next(ctx, method, req)
			}
			bg := detached(creq)
			owner := taskOwner(req)
			res, err := g.tasks.Start(owner, taskPrincipal(req), ttl, func(tctx context.Context) (mcp.Result, error) {
				return next(tctx, method, bg)
			})
			if err == nil {
				g.watchTasks(creq.Session, owner)
			}
			return res, err
		case "tasks/get", "tasks/cancel", "tasks/result", "tasks/list", "tasks/update":
			modern := modernRequest(req)
			if modern && (method == "tasks/result" || method == "tasks/list") || !modern && method == "tasks/update" {
				rev := "2025-11-25"
				if modern {
					rev = "2026-07-28"
				}
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%s is not a method of the tasks of protocol %s", method, rev)}
			}
			owner := taskOwner(req)
			if modern {
				owner = extensionOwner(req)
			}
			return next(context.WithValue(ctx, taskOwnerKey{}, owner), method, req)
		}
		return next(ctx, method, req)
	}
}

// detached is a copy of a tools/call request for the task that runs it:
// the call outlives the request, so it is not tied to its HTTP request
// (BindHTTP's carrier) nor to its context (the Store gives it one of its
// own), and sends no progress for it (the request it named is answered).
func detached(creq *mcp.CallToolRequest) *mcp.CallToolRequest {
	bg := *creq
	if ex := creq.Extra; ex != nil {
		e := *ex
		if ex.Header != nil {
			e.Header = ex.Header.Clone()
			e.Header.Del(CarrierHeader)
		}
		bg.Extra = &e
	}
	p := *creq.Params
	p.Meta = maps.Clone(p.Meta)
	delete(p.Meta, "progressToken")
	bg.Params = &p
	return &bg
}

// extensionTask runs the call of a 2026-07-28 task. A question of the
// call (the permission rule's, or the upstream server's), which such a
// client gets as the input requests of the call's result, becomes the
// task's: it is input_required with them until the client answers with
// tasks/update, and the answers go back as the retry the client would
// have sent, as often as the call asks. A question left unanswered for
// Options.ElicitationTimeout ends the call, as on the plain path.
func (g *Gateway) extensionTask(ctx context.Context, next mcp.MethodHandler, method string, req *mcp.CallToolRequest) (mcp.Result, error) {
	run := tasks.RunOf(ctx)
	for {
		res, err := next(ctx, method, req)
		cr, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || cr == nil || len(cr.InputRequests) == 0 || cr.RequestState == "" || run == nil {
			return res, err
		}
		// As long as an unanswered question holds a call elsewhere.
		actx, cancel := context.WithTimeout(ctx, g.opts.ElicitationTimeout)
		answers, err := run.Ask(actx, cr.InputRequests)
		cancel()
		if err != nil {
			g.relay.abandon(cr.RequestState) // its upstream call ends now
			if ctx.Err() == nil {
				return g.refusal(req.Params.Name, fmt.Sprintf("the call's question went unanswered for %s; the call was cancelled", g.opts.ElicitationTimeout)), nil
			}
			return nil, err
		}
		retry := *req
		p := *req.Params
		p.InputResponses, p.RequestState = answers, cr.RequestState
		retry.Params = &p
		req = &retry
	}
}

// taskSupport is how the tool served as name runs as a task upstream, as
// the host's connection to its server knows it now ("" for none): read
// at each use, not kept with the route, so that a route made while its
// server was reconnecting does not hide it.
func (g *Gateway) taskSupport(name string) string {
	g.mu.Lock()
	r, ok := g.tools[name]
	g.mu.Unlock()
	if !ok || r.server == "" {
		return ""
	}
	return g.h.TaskSupport(r.server, r.tool)
}

// listsTaskTools reports whether any tool of res runs as a task upstream:
// only then is the list rewritten for a task-capable client.
func (g *Gateway) listsTaskTools(res *mcp.ListToolsResult) bool {
	for _, t := range res.Tools {
		if t != nil && g.taskSupport(t.Name) != "" {
			return true
		}
	}
	return false
}

// servedTaskSupport is the execution.taskSupport a task-capable client
// sees for the tool served as name: "optional" for a tool that runs as a
// task upstream, whether the server requires it or not, since the gateway
// follows the server's task itself for a call that asks for none (a
// "required" would forbid a client such calls); "" for any other.
func (g *Gateway) servedTaskSupport(name string) string {
	if g.taskSupport(name) == "" {
		return ""
	}
	return "optional"
}

// tasksNegotiated reports whether the client of req takes tasks: a
// 2026-07-28 request that declares the extension, or an initialized
// session of 2025-11-25 (the first revision with tasks) offered the tasks
// capability.
func (g *Gateway) tasksNegotiated(req mcp.Request) bool {
	if modernRequest(req) {
		return declaresTasks(req)
	}
	ss := session(req)
	return taskProtocol(ss) && ss.InitializeParams().ProtocolVersion >= "2025-11-25" && !g.sessionless(ss)
}

// modernRequest reports whether req is of protocol 2026-07-28 or later
// (its own _meta says so, or its session's).
func modernRequest(req mcp.Request) bool {
	if r, ok := req.(interface{ ProtocolVersion() string }); ok && hasParams(req) {
		if v := r.ProtocolVersion(); v != "" {
			return v >= "2026-07-28"
		}
	}
	return multiRoundTrip(session(req))
}

// declaresTasks reports whether a 2026-07-28 request declares the tasks
// extension in its client capabilities.
func declaresTasks(req mcp.Request) bool {
	r, ok := req.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	})
	return ok && hasParams(req) && tasks.Declares(r.ClientCapabilities())
}

// hasParams reports whether req came with params: the SDK's per-request
// accessors (ProtocolVersion, ClientCapabilities) panic on a custom
// method's request without them (a tasks/list with none).
func hasParams(req mcp.Request) bool {
	p := req.GetParams()
	if p == nil {
		return false
	}
	v := reflect.ValueOf(p)
	return v.Kind() != reflect.Pointer || !v.IsNil()
}

// taskProtocol reports whether the client of ss speaks 2025-11-25's tasks
// (an initialized session of a protocol before 2026-07-28).
func taskProtocol(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion < "2026-07-28"
}

// extensionOwner names the client of a 2026-07-28 request for its tasks:
// over HTTP, where that protocol has no sessions, the digest of its
// credentials; elsewhere (stdio) its connection, as taskOwner.
func extensionOwner(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		return "2026/" + credentials(ex)
	}
	return "2026/" + taskOwner(req)
}

// taskOwner names the client of req for its tasks: the digest of its
// credentials over HTTP (as ownerOf), and its session — the session id,
// or for a connection without one (stdio) the session itself.
func taskOwner(req mcp.Request) string {
	var auth string
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		auth = credentials(ex)
	}
	ss := session(req)
	switch {
	case ss == nil:
		return auth + "/"
	case ss.ID() != "":
		return auth + "/" + ss.ID()
	default:
		return fmt.Sprintf("%s/%p", auth, ss)
	}
}

// taskPrincipal names the team member whose request req is, for the
// share of the gateway's tasks its tasks count against over all its
// sessions; "" for the shared token's holder and a caller without
// credentials, whose tasks count against the gateway's whole only.
func taskPrincipal(req mcp.Request) string {
	ex := req.GetExtra()
	if ex == nil || ex.TokenInfo == nil || !PrincipalFromTokenInfo(ex.TokenInfo).Keyed() {
		return ""
	}
	return ex.TokenInfo.UserID
}

// watchTasks forgets (and cancels) the 2025-11-25 tasks of owner once
// ss, the session they belong to, ends: no one can ask for them after,
// and they would hold their share of the tasks until their ttl. (A
// session's requests may name more than one owner: each key of its
// principal is one.)
func (g *Gateway) watchTasks(ss *mcp.ServerSession, owner string) {
	g.taskMu.Lock()
	defer g.taskMu.Unlock()
	owners, watched := g.taskSessions[ss]
	if !watched {
		owners = map[string]bool{}
		g.taskSessions[ss] = owners
		go func() {
			_ = ss.Wait()
			g.taskMu.Lock()
			gone := g.taskSessions[ss]
			delete(g.taskSessions, ss)
			g.taskMu.Unlock()
			for o := range gone {
				g.tasks.Gone(o)
			}
		}()
	}
	owners[owner] = true
}

func session(req mcp.Request) *mcp.ServerSession {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return ss
}

func taskOwnerFrom(ctx context.Context) string {
	o, _ := ctx.Value(taskOwnerKey{}).(string)
	return o
}

// takeTaskFieldHTTP keeps the `task` field of a POST's tools/call for
// serveTasks (tasks.TakeTaskFieldInBody).
func takeTaskFieldHTTP(r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		return
	}
	var body []byte
	if b, ok := r.Body.(interface{ Bytes() []byte }); ok {
		body = b.Bytes() // read whole already (switchboard serve)
	} else {
		// Read here what the SDK would read next, within its limit.
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, mcp.DefaultMaxRequestBodyBytes+1))
		if err != nil {
			body = nil // the SDK reads the rest and reports it
		}
		setPostBody(r, body)
		if err != nil {
			return
		}
	}
	if out, changed := tasks.TakeTaskFieldInBody(body); changed {
		setPostBody(r, out)
		r.ContentLength = int64(len(out))
		r.Header.Del("Content-Length")
	}
}
