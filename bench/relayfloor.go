package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The floor's variant "relay" (issue 36): the floor on internal/jsonl,
// its upstream sessions pinned to 2025-11-25, and a receiving middleware
// that answers tools/call itself — the arguments as bytes to the
// upstream's pipe under a request ID of its own, the upstream's result
// as bytes back to the client in a custom mcp.Result. Only the SDK's
// public API: what the SDK permits a relay, with no policy at all, so
// that switchboard ÷ this is what Switchboard's own work costs on top of
// the same design.

// relayProtocol is what the relay floor's upstream sessions speak: before
// 2026-07-28 the SDK's client adds nothing to a tools/call.
const relayProtocol = "2025-11-25"

// relayUpstream is an upstream connection the middleware writes to.
type relayUpstream struct {
	conn    mcp.Connection
	next    atomic.Int64
	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response
}

// relayTransport puts a relayUpstream under the SDK's client session.
type relayTransport struct {
	inner mcp.Transport
	up    *relayUpstream
}

func (t relayTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.up.conn = c
	return relayConn{c, t.up}, nil
}

type relayConn struct {
	mcp.Connection
	up *relayUpstream
}

// Read takes the answers to the middleware's own requests off the wire.
func (c relayConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			return msg, nil
		}
		id, ok := resp.ID.Raw().(string)
		if !ok {
			return msg, nil
		}
		c.up.mu.Lock()
		ch := c.up.pending[id]
		delete(c.up.pending, id)
		c.up.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
}

// call writes a tools/call and waits for its answer.
func (u *relayUpstream) call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params, err := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{name, args})
	if err != nil {
		return nil, err
	}
	key := "relay-" + strconv.FormatInt(u.next.Add(1), 10)
	id, _ := jsonrpc.MakeID(key)
	ch := make(chan *jsonrpc.Response, 1)
	u.mu.Lock()
	u.pending[key] = ch
	u.mu.Unlock()
	if err := u.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call", Params: params}); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ctx.Done():
		u.mu.Lock()
		delete(u.pending, key)
		u.mu.Unlock()
		return nil, ctx.Err()
	}
}

// rawToolResult is an upstream's result, sent to the client unchanged.
type rawToolResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawToolResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// relayRoute is where a served tool's calls go.
type relayRoute struct {
	up   *relayUpstream
	tool string
}

// relayUpstreamOf starts cmd on internal/jsonl under a relayUpstream.
func relayUpstreamOf(cmd *exec.Cmd) (mcp.Transport, *relayUpstream, func(), error) {
	t, wait, err := floorUpstream("jsonl", cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	up := &relayUpstream{pending: map[string]chan *jsonrpc.Response{}}
	return relayTransport{inner: t, up: up}, up, wait, nil
}

// relayMiddleware answers tools/call of the tools in routes itself.
func relayMiddleware(routes map[string]relayRoute) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			creq, ok := req.(*mcp.CallToolRequest)
			if !ok || creq.Params == nil {
				return next(ctx, method, req)
			}
			r, ok := routes[creq.Params.Name]
			if !ok {
				return nil, errors.New("unknown tool " + creq.Params.Name)
			}
			raw, err := r.up.call(ctx, r.tool, creq.Params.Arguments)
			if err != nil {
				return nil, err
			}
			return &rawToolResult{raw: raw}, nil
		}
	}
}
