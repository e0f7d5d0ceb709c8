package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/tasks"
)

// Task-capable clients (protocol 2025-11-25's tasks utility): the gateway
// offers tasks for tools/call in its capabilities, and a call whose
// client asks for a task (the `task` field, which Transport and BindHTTP
// keep for it: tasks.TakeTaskField) is answered at once with a task of
// the gateway's own while the call runs on, as any call does — decided,
// audited and timed once, a task upstream followed by the host. The
// client follows it with tasks/get, tasks/result, tasks/list and
// tasks/cancel. A task is its client's alone: its credentials and
// session (taskOwner); another client asking for it is told there is no
// such task. Clients of 2026-07-28 get their calls as ever (the relay
// holds long ones), and so do the clients of a stateless HTTP gateway
// (without sessions), where nothing tells one unauthenticated client
// from another.

type taskOwnerKey struct{}

// serveTasks is the outermost receiving middleware: it adds the tasks
// capability to initialize results, runs calls that ask for a task as
// tasks, and tells the tasks/* methods whose request it is.
func (g *Gateway) serveTasks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && ir.ProtocolVersion < "2026-07-28" && !g.sessionless(session(req)) {
				return tasks.WithCapability(ir)
			}
			return res, err
		case "tools/call":
			creq, ok := req.(*mcp.CallToolRequest)
			if !ok || creq.Params == nil {
				return next(ctx, method, req)
			}
			ttl, asked := tasks.Requested(creq.Params.Meta)
			if !asked || !taskProtocol(creq.Session) || g.sessionless(creq.Session) {
				return next(ctx, method, req)
			}
			// The call outlives this request: not tied to its HTTP
			// request (BindHTTP's carrier) nor to its context (Store.Start
			// gives it one of its own), but to the task.
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
			delete(p.Meta, "progressToken") // the request it named is answered
			bg.Params = &p
			return g.tasks.Start(taskOwner(req), ttl, func(tctx context.Context) (mcp.Result, error) {
				return next(tctx, method, &bg)
			})
		case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
			return next(context.WithValue(ctx, taskOwnerKey{}, taskOwner(req)), method, req)
		}
		return next(ctx, method, req)
	}
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

// taskOwner names the client of req for its tasks: the digest of its
// credentials over HTTP (as ownerOf), and its session — the session id,
// or for a connection without one (stdio) the session itself.
func taskOwner(req mcp.Request) string {
	var auth string
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		h := sha256.New()
		h.Write([]byte(ex.Header.Get("Authorization")))
		if ex.TokenInfo != nil {
			h.Write([]byte{0})
			h.Write([]byte(ex.TokenInfo.UserID))
		}
		auth = hex.EncodeToString(h.Sum(nil))
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
		r.Body = &memBody{Reader: bytes.NewReader(body), data: body}
		if err != nil {
			return
		}
	}
	if out, changed := tasks.TakeTaskFieldInBody(body); changed {
		r.Body = &memBody{Reader: bytes.NewReader(out), data: out}
		r.ContentLength = int64(len(out))
		r.Header.Del("Content-Length")
	}
}

// memBody is a request body held in memory.
type memBody struct {
	*bytes.Reader
	data []byte
}

func (*memBody) Close() error { return nil }

// Bytes returns the whole body.
func (b *memBody) Bytes() []byte { return b.data }
