package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path on stdio (issue 36). As over HTTP (http_fast.go), a
// plain tools/call read from the client's connection is run through the
// gateway's middleware chain and tool handler without the SDK's
// jsonrpc2 layer decoding its params and _meta again, and its answer
// written on the same connection as the SDK writes it. Plain means: on a
// protocol before 2026-07-28, a _meta of a progress token and the
// client's own keys at most (olderMeta; progress goes out on the one
// stream); on 2026-07-28, the _meta triple and otherwise the same
// (fastMeta; questions come back in the result); no answers to a
// question, no task, a served tool. Everything else goes to the SDK in
// order.
//
// A question during a call of a client on a protocol before 2026-07-28
// that declared elicitation (VS Code's kind) is the SDK's own
// elicitation/create, sent with ServerSession.Elicit as on the SDK's path:
// a stdio connection has one stream, so it needs no request to be related
// to, and the client's answer, a response on this connection, goes to the
// SDK, which matches it to its question. (Over HTTP a question must go on
// the call's own stream, which only the SDK's handler relates to the
// call: there the call is handed over to it, http_handoff.go.)

// Run serves the gateway's Server on t, as Server().Run(ctx,
// Transport(t)), until ctx is done or the client ends the connection;
// plain calls take the fast path.
func (g *Gateway) Run(ctx context.Context, t mcp.Transport) error {
	wt := &watchedTransport{Transport: t, g: g}
	ss, err := g.srv.Connect(ctx, wt, nil)
	if err != nil {
		return err
	}
	if c := wt.conn; c != nil && c.fast != nil {
		c.fast.ss.Store(ss)
	}
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-closed
		return ctx.Err()
	case err := <-closed:
		return err
	}
}

// stdioFast is the fast path of one stdio connection.
type stdioFast struct {
	g    *Gateway
	conn mcp.Connection // the connection under the watch: answers go there
	ss   atomic.Pointer[mcp.ServerSession]

	ctx  context.Context // ends with the connection
	stop context.CancelCauseFunc

	mu       sync.Mutex
	inflight map[string]context.CancelCauseFunc // by request ID (compact JSON)
}

func newStdioFast(g *Gateway, c mcp.Connection) *stdioFast {
	ctx, stop := context.WithCancelCause(g.ctx)
	return &stdioFast{g: g, conn: c, ctx: ctx, stop: stop, inflight: map[string]context.CancelCauseFunc{}}
}

// end cancels the calls in flight: the client's connection ended, as the
// SDK cancels its own.
func (f *stdioFast) end() {
	if f != nil {
		f.stop(errClientGone)
	}
}

// cancel cancels the fast call a notifications/cancelled names; the SDK
// gets the notification too, for its own calls.
func (f *stdioFast) cancel(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	id, ok := fastID(p.RequestID)
	if !ok {
		return
	}
	f.mu.Lock()
	cancel := f.inflight[idKey(id)]
	f.mu.Unlock()
	if cancel != nil {
		cancel(errClientCancelled)
	}
}

// take runs req on the fast path if it is a plain call, and reports
// whether it did (the answer is written when the call ends).
func (f *stdioFast) take(req *jsonrpc.Request) bool {
	ss := f.ss.Load()
	if ss == nil || !req.ID.IsValid() || f.ctx.Err() != nil {
		return false
	}
	ip := ss.InitializeParams()
	if ip == nil {
		return false
	}
	p, ok := scanParams(req.Params)
	if !ok {
		return false
	}
	var meta mcp.Meta
	mrt := ip.ProtocolVersion >= protocolMRT
	switch {
	case mrt:
		if len(p.Meta) == 0 {
			return false
		}
		if meta, ok = f.g.metas.read(p.Meta); !ok {
			return false
		}
	case len(p.Meta) > 0:
		if meta, ok = f.g.metas.readOlder(p.Meta); !ok {
			return false
		}
	}
	g := f.g
	route, ok := g.fastRoute(p.Name)
	if !ok || (route.server != "" && g.h.TaskSupport(route.server, route.tool) != "") {
		return false
	}
	key := idKey(req.ID)
	ctx, cancel := context.WithCancelCause(f.ctx)
	f.mu.Lock()
	if _, dup := f.inflight[key]; dup {
		f.mu.Unlock()
		cancel(nil)
		return false // the SDK answers an ID in flight
	}
	f.inflight[key] = cancel
	f.mu.Unlock()
	g.fastCalls.Add(1)
	creq := &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Meta: meta, Name: p.Name, Arguments: p.Arguments}}
	// On one of the relay's kept goroutines, whose stack has grown to a
	// call's depth already (relay.go, workers).
	g.relay.pool.run(func() {
		defer func() {
			f.mu.Lock()
			delete(f.inflight, key)
			f.mu.Unlock()
			cancel(nil)
		}()
		res, err := g.fastChain(ctx, "tools/call", creq)
		resp := &jsonrpc.Response{ID: req.ID}
		if err != nil {
			resp.Error = err
		} else {
			if mrt {
				res = g.annotated(res)
			}
			if resp.Result, err = appendResult(nil, res); err != nil {
				resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
		}
		if werr := f.conn.Write(context.WithoutCancel(ctx), resp); werr != nil {
			g.log.Debug("a call's answer could not be written", "tool", p.Name, "error", werr)
		}
	})
	return true
}

// idKey names a request ID in the map of calls in flight.
func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}
