package gateway

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/tasks"
)

// Withdrawing a question (issue 29, point 8). A question put to a client
// on a protocol before 2026-07-28 — a permission question, or an upstream
// server's — is an elicitation/create request the SDK sends during the
// call. When the call ends first (its timeout, its client's
// cancellation, shutdown), the SDK cancels that request: it sends
// notifications/cancelled for the request's id, so that the client closes
// its dialog, but in the background, after the call has already moved on
// to its answer. Over HTTP the two race for the call's stream, and once
// the answer is written the stream is closed and the cancellation dropped
// ("write to closed stream"): the client's dialog stayed open in most
// tries. So the gateway counts the questions of a call that the SDK is
// withdrawing (a sending middleware sees each elicitation/create end by
// its context), watches the call's channel for their notifications/cancelled
// (the stdio connection: Transport; the HTTP response: BindHTTP), and
// answers the call only once they are out (at most withdrawWait).

// withdrawWait bounds how long a call's answer waits for the
// cancellations of its questions (the SDK gives up on one after 5 s).
const withdrawWait = 2 * time.Second

// cancelledMethod is what a notifications/cancelled holds, as encoded.
var cancelledMethod = []byte(`"method":"notifications/cancelled"`)

// withdrawals counts the questions of a call (or of the calls one HTTP
// request carries) that are being withdrawn: owed when the SDK gives up on
// one, paid when its notifications/cancelled is written. A payment may
// come before the debt (the SDK writes in the background): the balance
// then goes below zero and nothing waits.
type withdrawals struct {
	balance atomic.Int32
	mu      sync.Mutex
	settled chan struct{} // closed when the balance drops to zero; nil if nobody waits
}

func (w *withdrawals) owe() { w.balance.Add(1) }

func (w *withdrawals) pay() {
	if w.balance.Add(-1) > 0 {
		return
	}
	w.mu.Lock()
	if w.settled != nil {
		close(w.settled)
		w.settled = nil
	}
	w.mu.Unlock()
}

// wait waits until every question owed is withdrawn, at most d.
func (w *withdrawals) wait(d time.Duration) {
	w.mu.Lock()
	if w.balance.Load() <= 0 {
		w.mu.Unlock()
		return
	}
	if w.settled == nil {
		w.settled = make(chan struct{})
	}
	ch := w.settled
	w.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

type liveCallKey struct{}

// liveCallFrom returns the call in flight that ctx belongs to, if any.
func liveCallFrom(ctx context.Context) *liveCall {
	lc, _ := ctx.Value(liveCallKey{}).(*liveCall)
	return lc
}

// trackQuestions is the sending middleware that notes a question (an
// elicitation/create of a call) the SDK gives up on: it is cancelling it
// in the background. The question of a call a 2025-11-25 task runs makes
// the task input_required while it is open (tasks.go).
func trackQuestions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "elicitation/create" {
			return next(ctx, method, req)
		}
		if run := tasks.RunOf(ctx); run != nil {
			defer run.Asking()()
		}
		res, err := next(ctx, method, req)
		if err != nil && ctx.Err() != nil {
			if lc := liveCallFrom(ctx); lc != nil {
				lc.withdrawn.owe()
			}
		}
		return res, err
	}
}

// Transport returns t with the gateway watching what is written on it:
// serve the gateway's Server on it instead of t (stdio), so that a call
// whose question to the client is withdrawn answers after the
// question's notifications/cancelled, not before; and so that the `task`
// field of a task-capable client's tools/call reaches the gateway
// (tasks.go). An HTTP handler gets the same from BindHTTP.
func (g *Gateway) Transport(t mcp.Transport) mcp.Transport { return &watchedTransport{Transport: t} }

type watchedTransport struct {
	mcp.Transport
	// g, if set (Gateway.Run), answers plain calls itself (stdio_fast.go)
	// on the connection, conn, once the session is known.
	g    *Gateway
	conn *watchedConn
}

func (t *watchedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	wc := &watchedConn{Connection: c}
	if t.g != nil {
		wc.fast = newStdioFast(t.g, c)
	}
	t.conn = wc
	return wc, nil
}

type watchedConn struct {
	mcp.Connection
	fast *stdioFast // nil: every message to the SDK
}

// Read keeps the `task` field of a task-capable client's tools/call for
// serveTasks (tasks.go), and hands a plain call to the fast path, if any.
func (c *watchedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.fast.end()
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if ok && c.fast != nil {
			if req.Method == "notifications/cancelled" {
				c.fast.cancel(req.Params)
			} else if req.Method == "tools/call" && c.fast.take(req) {
				continue
			}
		}
		if ok && req.Method == "tools/call" {
			if params, changed := tasks.TakeTaskField(req.Params); changed {
				cp := *req
				cp.Params = params
				msg = &cp
			}
		}
		return msg, err
	}
}

func (c *watchedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	// The SDK writes a cancellation under the context of the request it
	// cancels, which belongs to the call that asked.
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/cancelled" {
		if lc := liveCallFrom(ctx); lc != nil {
			lc.withdrawn.pay()
		}
	}
	return err
}

// watchedWriter is the response of an HTTP request that carries calls:
// the SDK writes a call's questions, their cancellations and its answer
// on it, one SSE event a Write.
type watchedWriter struct {
	http.ResponseWriter
	withdrawn *withdrawals
}

func (w *watchedWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	// A cancellation is a small event, and may be written before the
	// SDK's give-up is counted (owe): look at every small one.
	if len(b) <= maxCancelledEvent && bytes.Contains(b, cancelledMethod) {
		w.withdrawn.pay()
	}
	return n, err
}

// maxCancelledEvent bounds the writes watchedWriter looks into: an SSE
// event holding a notifications/cancelled is a few hundred bytes, and
// results are not searched.
const maxCancelledEvent = 1024

// Flush and Unwrap keep the SDK's flushing (http.ResponseController)
// working through the wrapper.
func (w *watchedWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *watchedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
