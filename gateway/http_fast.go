package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
	"github.com/switchboard-mcp/switchboard/internal/tasks"
)

// The HTTP fast path (issue 36). The SDK's Streamable HTTP handler decodes
// a POST's message several times over, each through a fresh 32 KiB buffer,
// before a tools/call reaches the gateway's handler: most of what an HTTP
// call costs the gateway. For the common call — one tools/call of a live
// session whose client can never be asked anything during it — httpLife
// answers it here instead: the envelope is decoded once, the call runs
// through the very middleware chain and handler the SDK would run
// (Gateway.fastChain), and the answer is written as the SDK writes it (the
// same headers, one SSE "message" event, the same JSON). A call of a
// client that declared elicitation is taken too, and handed over to the
// SDK's handler if it asks (a permission question or an upstream server's
// question goes on the call's stream, which only the SDK has:
// http_handoff.go), and so is a call with a progress token (at its first
// progress notification). Everything else goes to the SDK unchanged:
// initialize, lists, notifications, batches, a call with any other _meta
// (olderMeta: a task, a key of the protocol's), a client on 2026-07-28, a
// session the SDK ended or that belongs to another principal, the MCP
// standard headers, and any request the SDK would refuse.
//
// The session's bookkeeping the SDK would do for the call is done here:
// the session stays alive while the call runs (sessionCap's idle timer
// replaces the SDK's), a notifications/cancelled naming the call cancels
// it (httpLife.ServeHTTP), and so does the session's DELETE
// (CancelSession).

// fastParams are the fields of a tools/call's params the fast path reads:
// any but the name and the arguments sends the call to the SDK.
type fastParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	Meta           json.RawMessage `json:"_meta"`
	Task           json.RawMessage `json:"task"`
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   json.RawMessage `json:"requestState"`
}

// fastRequest reads r's POST body, body, if it is one tools/call in its
// plain form (scanCall, through postParse: once per request) with a valid
// ID.
func fastRequest(r *http.Request, body []byte) (m rpcMessage, id jsonrpc.ID, p fastParams, ok bool) {
	msgs, p, plain := postParse(r, body)
	if !plain {
		return m, id, p, false
	}
	m = msgs[0]
	id, ok = fastID(m.ID)
	return m, id, p, ok
}

// fastCall answers r, a POST of session sid whose body is body, if it is a
// call the fast path takes, and reports whether it did. When it reports
// false, nothing was written and r is as it was.
func (l *httpLife) fastCall(w http.ResponseWriter, r *http.Request, sid string, body []byte) bool {
	if l.sdkOnly || l.sessions == nil || !fastHeaders(r, false) {
		return false
	}
	m, id, p, ok := fastRequest(r, body)
	if !ok {
		return false
	}
	g := l.g
	var meta mcp.Meta
	if len(p.Meta) > 0 {
		if meta, ok = g.metas.readOlder(p.Meta); !ok {
			return false
		}
	}
	if _, ok := g.fastRoute(p.Name); !ok {
		return false
	}
	idKey := compactJSON(m.ID)
	ss, askable, dup, ok := l.sessions.beginFast(sid, principalID(r), r.Header.Get("Mcp-Protocol-Version"), idKey)
	if !ok {
		return false
	}
	if dup {
		// The SDK's answer to an ID already in flight on the session.
		writeRPCError(w, http.StatusBadRequest, id, &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("duplicate in-flight request ID %v", id.Raw()),
		})
		return true
	}
	defer l.sessions.endFast(sid, idKey)
	g.fastCalls.Add(1)
	key := cancelKey(sid, idKey)
	ctx, release := g.fastBind(r.Context(), key)
	defer release()
	var ho *handoff
	if askable || meta["progressToken"] != nil {
		// Its first question, or its first progress notification, hands
		// the request over to the SDK (http_handoff.go).
		ho, ctx = l.newHandoff(ctx, w, r, body, sid)
	}
	req := &mcp.CallToolRequest{
		Session: ss,
		Params:  &mcp.CallToolParamsRaw{Meta: meta, Name: p.Name, Arguments: p.Arguments},
		Extra:   &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header},
	}
	res, err := g.fastChain(ctx, "tools/call", req)
	if ho != nil && ho.finish(res, err) {
		return true // the SDK wrote the answer
	}
	writeAnswer(w, id, m.ID, res, err, false)
	return true
}

// writeAnswer writes the answer to a call with request id (rawID as
// sent) as the SDK's handler does: an SSE stream of one event holding the
// JSON-RPC response; on 2026-07-28 (mrt), a protocol error SEP-2575 gives
// an HTTP status as a plain JSON answer with that status. The event is not
// flushed: it is written whole when the handler returns, in one write
// with its length (the SDK flushes it, then ends the chunked body in a
// second write).
func writeAnswer(w http.ResponseWriter, id jsonrpc.ID, rawID json.RawMessage, res mcp.Result, err error, mrt bool) {
	const head = "event: message\ndata: "
	var b bytes.Buffer
	b.WriteString(head)
	if err == nil {
		err = appendResponse(&b, id, rawID, res)
	}
	if err != nil {
		data, merr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: err})
		if merr != nil {
			data, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: merr.Error()}})
		}
		if status := errorStatus(err); mrt && status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(data)
			return
		}
		b.Truncate(len(head))
		b.Write(data)
	}
	b.WriteString("\n\n")
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	_, _ = w.Write(b.Bytes())
}

// appendResponse appends the JSON-RPC response of request id (rawID as
// sent) with result res to b, as the SDK's jsonrpc.EncodeMessage writes
// it: {"jsonrpc":"2.0","id":…,"result":…}, the result as appendResult
// writes it.
func appendResponse(b *bytes.Buffer, id jsonrpc.ID, rawID json.RawMessage, res mcp.Result) error {
	out, ok := jsonl.AppendHead(b.AvailableBuffer(), id)
	if !ok || !id.IsValid() {
		return fmt.Errorf("request id %s", rawID)
	}
	out = append(out, `,"result":`...)
	out, err := appendResult(out, res)
	if err != nil {
		return err
	}
	b.Write(append(out, '}'))
	return nil
}

// appendResult appends a handler's result as the SDK's JSON-RPC layer
// encodes it (encoding/json, no HTML escaping): a plain tool result
// directly (appendPlainResult), else by its own MarshalJSON, whose compact
// JSON the encoder would only copy, or by the encoder.
func appendResult(dst []byte, res mcp.Result) ([]byte, error) {
	if cr, ok := res.(*mcp.CallToolResult); ok {
		if out, ok := appendPlainResult(dst, cr); ok {
			return out, nil
		}
	}
	if m, ok := res.(json.Marshaler); ok && res != nil && !isNilResult(res) {
		data, err := m.MarshalJSON()
		return append(dst, data...), err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimRight(buf.Bytes(), "\n")...), nil
}

// isNilResult reports whether res holds a nil *mcp.CallToolResult, which
// encodes as null.
func isNilResult(res mcp.Result) bool {
	cr, ok := res.(*mcp.CallToolResult)
	return ok && cr == nil
}

// fastTool is the innermost handler of the fast path's chain: what the
// SDK's server does for a tools/call of a served tool (its handler is
// callTool), and, for a client on a protocol before 2026-07-28, what the
// SDK's multi-round-trip middleware does around that (inside the chain, as
// on the SDK's path): a round that ends with input requests (the gateway's
// permission question) has them put to the client, each as its own
// elicitation/create (askClient: over HTTP on the stream of the call's
// request, handed over to the SDK), and runs once more with the answers.
// For a client that declared no elicitation, Elicit fails as it does on
// the SDK's path.
func (g *Gateway) fastTool(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	creq := req.(*mcp.CallToolRequest)
	res, err := g.fastRound(ctx, creq)
	if err != nil || res == nil || res.InputRequests == nil || multiRoundTrip(creq.Session) {
		return res, err
	}
	if len(res.InputRequests) == 0 {
		return nil, errors.New("the server is busy, retry later") // the SDK's words
	}
	responses, err := askOlderClient(ctx, creq.Session, res.InputRequests)
	if err != nil {
		return nil, err
	}
	p := *creq.Params
	p.InputResponses, p.RequestState = responses, res.RequestState
	return g.fastRound(ctx, &mcp.CallToolRequest{Session: creq.Session, Params: &p, Extra: creq.Extra})
}

// fastRound is one round of fastTool: the gateway's tool handler, and
// what the SDK's server makes of its result.
func (g *Gateway) fastRound(ctx context.Context, creq *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := g.callTool(ctx, creq)
	if err != nil || res == nil {
		return res, err
	}
	asks := res.InputRequests != nil
	if asks && len(res.Content) > 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
	}
	if res.Content == nil && !asks {
		cp := *res
		cp.Content = []mcp.Content{} // as the SDK: not "null"
		res = &cp
	}
	return res, nil
}

// askOlderClient puts a round's input requests to a client on a protocol
// before 2026-07-28, all at once, as the SDK's multi-round-trip middleware
// does (with its words when one fails). The gateway's only input requests
// are questions (elicitations); anything else fails the call.
func askOlderClient(ctx context.Context, ss *mcp.ServerSession, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	eg, ctx := errgroup.WithContext(ctx)
	var mu sync.Mutex
	responses := make(mcp.InputResponseMap, len(requests))
	for id, ir := range requests {
		eg.Go(func() error {
			q, ok := ir.(*mcp.ElicitParams)
			if !ok {
				return fmt.Errorf("fulfilling input request %q: unknown input request type: %T", id, ir)
			}
			r, err := askClient(ctx, ss, q)
			if err != nil {
				return fmt.Errorf("fulfilling input request %q: %w", id, err)
			}
			mu.Lock()
			responses[id] = r
			mu.Unlock()
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, fmt.Errorf("multi-round-trip: %w", err)
	}
	return responses, nil
}

// The fast path of a 2026-07-28 request (served each on its own, without
// a session). The SDK's stateless handler makes a session for each such
// request, after decoding its message, its _meta and its params, each
// through a fresh 32 KiB buffer. The fast path runs a plain tools/call —
// the _meta triple and otherwise only a progress token and keys of the
// client's own (fastMeta; no log level), no answers to questions (a retry
// goes to the SDK), a tool that is no task and names no x-mcp-header
// parameters — through the same chain under one stand-in session that
// says 2026-07-28, which is all the gateway reads of a sessionless
// request's session (its client's capabilities come from the request's
// _meta, its owner from its credentials). A question comes back in the
// result, as on the SDK's way; a call with a progress token is handed over
// to the SDK at its first progress notification (http_handoff.go).

// metaV2 are the keys of a 2026-07-28 request's _meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	protocolMRT            = "2026-07-28"
)

// fastStateless answers r, a POST to the sessionless endpoint whose body
// is body and whose calls keys names (statelessCancels), if it is a call
// the fast path takes, and reports whether it did.
func (l *httpLife) fastStateless(w http.ResponseWriter, r *http.Request, body []byte, keys []string) bool {
	if l.sdkOnly || !l.stateless || r.Header.Get(sessionIDHeader) != "" || r.Header.Get("Mcp-Protocol-Version") != protocolMRT {
		return false
	}
	if !fastHeaders(r, true) {
		return false
	}
	m, id, p, ok := fastRequest(r, body)
	if !ok || r.Header.Get("Mcp-Method") != "tools/call" || r.Header.Get("Mcp-Name") != p.Name {
		return false
	}
	meta, ok := l.g.metas.read(p.Meta)
	if !ok {
		return false
	}
	g := l.g
	route, ok := g.fastRoute(p.Name)
	if !ok || route.paramHeaders || (route.server != "" && g.h.TaskSupport(route.server, route.tool) != "") {
		return false
	}
	ss := g.standInSession()
	if ss == nil {
		return false
	}
	g.fastCalls.Add(1)
	ctx, release := g.fastBind(r.Context(), keys...)
	defer release()
	var ho *handoff
	if meta["progressToken"] != nil && len(keys) > 0 {
		// Its first progress notification hands the request over to the
		// SDK (http_handoff.go), which cancels it by its first key.
		ho, ctx = l.newHandoff(ctx, w, r, body, "")
	}
	req := &mcp.CallToolRequest{
		Session: ss,
		Params:  &mcp.CallToolParamsRaw{Meta: meta, Name: p.Name, Arguments: p.Arguments},
		Extra:   &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header},
	}
	res, err := g.fastChain(ctx, "tools/call", req)
	if err == nil {
		// As the SDK's session annotates it: also what the SDK writes for
		// a handed-over call (its tool handler, which would, is not run).
		res = g.annotated(res)
	}
	if ho != nil && ho.finish(res, err) {
		return true // the SDK wrote the answer
	}
	writeAnswer(w, id, m.ID, res, err, true)
	return true
}

// errorStatus is the HTTP status the SDK gives a 2026-07-28 request's
// JSON-RPC error (SEP-2575), or 0 for an error in the SSE stream.
func errorStatus(err error) int {
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) {
		return 0
	}
	switch jerr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, -32022, -32021: // unsupported protocol version, missing client capabilities
		return http.StatusBadRequest
	}
	return 0
}

// fastMeta decodes a 2026-07-28 call's _meta, if it holds the protocol
// version (2026-07-28), the client's capabilities (an object of objects)
// and, optionally, its info (an object of strings the SDK knows), and
// otherwise only what olderMeta takes (a progress token, keys of the
// client's own, as Claude Code sends with every call): what the SDK would
// take without a complaint.
func fastMeta(raw json.RawMessage) (mcp.Meta, bool) {
	var meta mcp.Meta
	if len(raw) == 0 || json.Unmarshal(raw, &meta) != nil {
		return nil, false
	}
	return checkFastMeta(meta)
}

// checkFastMeta is fastMeta's check of a decoded _meta.
func checkFastMeta(meta mcp.Meta) (mcp.Meta, bool) {
	if v, _ := meta[metaProtocolVersion].(string); v != protocolMRT {
		return nil, false
	}
	caps, ok := meta[metaClientCapabilities].(map[string]any)
	if !ok {
		return nil, false
	}
	for _, c := range caps {
		if _, ok := c.(map[string]any); !ok {
			return nil, false
		}
	}
	if v, ok := meta[metaClientInfo]; ok {
		info, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		for k, f := range info {
			if _, ok := f.(string); !ok || !clientInfoField[k] {
				return nil, false
			}
		}
	}
	for k, v := range meta {
		switch k {
		case metaProtocolVersion, metaClientCapabilities, metaClientInfo:
		default:
			if !plainMetaEntry(k, v) {
				return nil, false
			}
		}
	}
	return meta, true
}

// olderMeta decodes the _meta of a call on a protocol before 2026-07-28
// if the fast path can take it as the SDK would: an object whose
// progressToken, if any, is a string or a whole number a float64 holds
// exactly (progress is forwarded under it), with no key of the protocol's
// own ("io.modelcontextprotocol/…", the 2026-07-28 keys among them) and no
// task request (tasks.RequestKey); other keys (a client's own, such as VS
// Code's conversation and request IDs, or a trace context) are read by
// the chain as on the SDK's path.
func olderMeta(raw json.RawMessage) (mcp.Meta, bool) {
	var meta mcp.Meta
	if json.Unmarshal(raw, &meta) != nil || meta == nil {
		return nil, false
	}
	return checkOlderMeta(meta)
}

// checkOlderMeta is olderMeta's check of a decoded _meta.
func checkOlderMeta(meta mcp.Meta) (mcp.Meta, bool) {
	for k, v := range meta {
		if !plainMetaEntry(k, v) {
			return nil, false
		}
	}
	return meta, true
}

// plainMetaEntry reports whether a call's _meta entry is one the fast
// path leaves to the chain as the SDK would: a progress token that is a
// string or a whole number a float64 holds exactly, or a key of the
// client's own (none of the protocol's "io.modelcontextprotocol/" keys,
// no task request).
func plainMetaEntry(k string, v any) bool {
	switch {
	case k == "progressToken":
		switch t := v.(type) {
		case string:
			return true
		case float64:
			return t == math.Trunc(t) && math.Abs(t) <= 1<<53
		}
		return false
	case k == tasks.RequestKey, strings.HasPrefix(k, "io.modelcontextprotocol/"):
		return false
	}
	return true
}

// clientInfoField are the string fields of an Implementation.
var clientInfoField = map[string]bool{"name": true, "title": true, "version": true, "description": true, "websiteUrl": true}

// annotated is res as the SDK's session hands a 2026-07-28 result to its
// transport: the server's info in its _meta (unless there already), and
// its resultType (appendResponse writes it).
func (g *Gateway) annotated(res mcp.Result) mcp.Result {
	cr, ok := res.(*mcp.CallToolResult)
	if !ok || cr == nil {
		return res
	}
	cp := *cr
	var meta []byte
	if _, ok := cp.Meta[metaServerInfo]; !ok {
		if len(cp.Meta) == 0 {
			meta = g.serverInfoMeta()
		}
		m := make(mcp.Meta, len(cp.Meta)+1)
		for k, v := range cp.Meta {
			m[k] = v
		}
		m[metaServerInfo] = &mcp.Implementation{Name: g.opts.Name, Version: g.opts.Version}
		cp.Meta = m
	}
	return mrtResult{CallToolResult: &cp, meta: meta}
}

// serverInfoMeta is the JSON of the _meta annotated gives a result that
// had none: the server's info, as CallToolResult.MarshalJSON writes it.
func (g *Gateway) serverInfoMeta() []byte {
	g.infoMetaOnce.Do(func() {
		g.infoMeta, _ = json.Marshal(mcp.Meta{metaServerInfo: &mcp.Implementation{Name: g.opts.Name, Version: g.opts.Version}})
	})
	return g.infoMeta
}

// mrtResult is a 2026-07-28 call's result, encoded with its resultType
// as the SDK encodes it (complete, or input_required with the input
// requests after it).
type mrtResult struct {
	*mcp.CallToolResult
	// meta, when set, is the JSON of the result's only _meta (the
	// server's info, which annotated added to a result without any): a
	// plain result (appendPlainResult) is then written directly, the same
	// bytes (FuzzPlainResult).
	meta []byte
}

func (r mrtResult) MarshalJSON() ([]byte, error) {
	if r.meta != nil && r.InputRequests == nil {
		base := *r.CallToolResult
		base.Meta = nil
		if body, ok := appendPlainResult(nil, &base); ok {
			out := make([]byte, 0, len(r.meta)+len(body)+32)
			out = append(out, `{"_meta":`...)
			out = append(out, r.meta...)
			out = append(out, ',')
			out = append(out, body[1:len(body)-1]...)
			return append(out, `,"resultType":"complete"}`...), nil
		}
	}
	cp := *r.CallToolResult
	ir := cp.InputRequests
	cp.InputRequests = nil
	data, err := cp.MarshalJSON() // compact already: what json.Marshal would copy
	if err != nil || len(data) < 2 || data[len(data)-1] != '}' {
		return nil, fmt.Errorf("encoding a result: %v", err)
	}
	out := append([]byte(nil), data[:len(data)-1]...)
	if ir != nil {
		out = append(out, `,"resultType":"input_required"`...)
		b, err := json.Marshal(ir)
		if err != nil {
			return nil, err
		}
		out = append(out, `,"inputRequests":`...)
		out = append(out, b...)
	} else {
		out = append(out, `,"resultType":"complete"`...)
	}
	return append(out, '}'), nil
}

// standIn is the session the fast path's 2026-07-28 calls run under: a
// session of the gateway's server on a connection that carries nothing,
// made on first use.
type standIn struct {
	once sync.Once
	ss   atomic.Pointer[mcp.ServerSession]
}

func (g *Gateway) standInSession() *mcp.ServerSession {
	g.stand.once.Do(func() {
		ss, err := g.srv.Connect(g.ctx, discardTransport{}, &mcp.ServerSessionOptions{State: &mcp.ServerSessionState{
			InitializeParams:  &mcp.InitializeParams{ProtocolVersion: protocolMRT},
			InitializedParams: &mcp.InitializedParams{},
		}})
		if err != nil {
			g.log.Warn("the HTTP fast path is off for protocol 2026-07-28", "error", err)
			return
		}
		g.stand.ss.Store(ss)
	})
	return g.stand.ss.Load()
}

func (g *Gateway) isStandIn(ss *mcp.ServerSession) bool {
	return ss != nil && ss == g.stand.ss.Load()
}

// askSession is the session the Asker may keep answers for: none for the
// stand-in, which is every sessionless caller's.
func (g *Gateway) askSession(ss *mcp.ServerSession) *mcp.ServerSession {
	if g.isStandIn(ss) {
		return nil
	}
	return ss
}

func (g *Gateway) closeStandIn() {
	g.stand.once.Do(func() {}) // none after this
	if ss := g.stand.ss.Load(); ss != nil {
		ss.Close()
	}
}

// discardTransport is a connection that carries nothing: the stand-in
// session is never read from, and what the server sends to every
// session (list_changed) goes nowhere.
type discardTransport struct{}

func (discardTransport) Connect(context.Context) (mcp.Connection, error) {
	return &discardConn{done: make(chan struct{})}, nil
}

type discardConn struct {
	once sync.Once
	done chan struct{}
}

func (c *discardConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *discardConn) Write(context.Context, jsonrpc.Message) error { return nil }

func (c *discardConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (*discardConn) SessionID() string { return "" }

// fastBind is BindHTTP for a call the fast path runs on the request's own
// goroutine and context: it ends with the request, and keys name it for
// CancelHTTP (a notifications/cancelled of its own).
func (g *Gateway) fastBind(parent context.Context, keys ...string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	if len(keys) == 0 {
		return ctx, func() { cancel(nil) }
	}
	cr := &carrier{ctx: ctx, cancel: cancel, withdrawn: &withdrawals{}}
	g.calls.mu.Lock()
	g.calls.bindKeys(keys, cr)
	g.calls.mu.Unlock()
	return ctx, func() {
		g.calls.mu.Lock()
		g.calls.unbindKeys(keys, cr)
		g.calls.mu.Unlock()
		cancel(nil)
	}
}

// fastRoute returns the route of name if it is a tool the gateway serves
// through the SDK's registry with callTool as its handler, and no sync is
// changing that registry.
func (g *Gateway) fastRoute(name string) (toolRoute, bool) {
	if g.toolsMoving.Load() || isAdminTool(name) {
		return toolRoute{}, false
	}
	g.mu.Lock()
	r, ok := g.tools[name]
	g.mu.Unlock()
	return r, ok
}

// namesParamHeaders reports whether a tool's input schema names an
// x-mcp-header parameter.
func namesParamHeaders(schema any) bool {
	b, err := json.Marshal(schema)
	return err != nil || bytes.Contains(b, []byte(`"x-mcp-header"`))
}

// writeRPCError writes a JSON-RPC error response as the SDK's handler does
// for a request it refuses before any handler runs.
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, jerr *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: jerr}); err == nil {
		_, _ = w.Write(data)
	}
}

// cancelKey names a call of a session for CancelHTTP: its
// notifications/cancelled names the request ID.
func cancelKey(sid, idKey string) string {
	return "s\x00" + sid + "\x00" + idKey
}

// fastID is a request's ID as the SDK reads it (a JSON number or string);
// ok is false for anything else, which the SDK answers. A number and a
// string of printable ASCII without escapes are read directly, anything
// else by encoding/json.
func fastID(raw json.RawMessage) (jsonrpc.ID, bool) {
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			id, err := jsonrpc.MakeID(f)
			return id, err == nil
		}
	}
	if s, ok := plainString(raw); ok {
		id, err := jsonrpc.MakeID(s)
		return id, err == nil
	}
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}, false
	}
	switch v.(type) {
	case float64, string:
		id, err := jsonrpc.MakeID(v)
		return id, err == nil
	}
	return jsonrpc.ID{}, false
}

func firstByte(b []byte) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// fastHeaders reports whether r's headers are those of a POST the SDK
// would take as they are: JSON in, JSON and SSE accepted, no
// Last-Event-ID, none of the MCP standard headers it checks against the
// body (Mcp-Param-*, and unless standard, which the caller checks,
// Mcp-Method and Mcp-Name), and a Host it does not refuse (its DNS
// rebinding protection).
func fastHeaders(r *http.Request, standard bool) bool {
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return false
		}
	}
	if !acceptsJSONAndSSE(r.Header.Values("Accept")) {
		return false
	}
	for k := range r.Header {
		if (!standard && (k == "Mcp-Method" || k == "Mcp-Name")) || strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && loopbackAddr(la) && !loopback(r.Host) {
		return false
	}
	return true
}

// acceptsJSONAndSSE is the SDK's test of a POST's Accept header.
func acceptsJSONAndSSE(values []string) bool {
	jsonOK, streamOK := accepts(values)
	return jsonOK && streamOK
}

// accepts is the SDK's reading of Accept headers: whether they take JSON,
// and SSE.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for raw := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// loopbackAddr is loopback(a.String()) without making the string: a TCP
// address is asked directly.
func loopbackAddr(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return loopback(a.String())
}

// loopback is the SDK's test of a loopback address or Host.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
