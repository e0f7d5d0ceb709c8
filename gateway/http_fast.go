package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The HTTP fast path (issue 36). The SDK's Streamable HTTP handler decodes
// a POST's message several times over, each through a fresh 32 KiB buffer,
// before a tools/call reaches the gateway's handler: most of what an HTTP
// call costs the gateway. For the common call — one tools/call of a live
// session whose client can never be asked anything during it — httpLife
// answers it here instead: the envelope is decoded once, the call runs
// through the very middleware chain and handler the SDK would run
// (Gateway.fastChain), and the answer is written as the SDK writes it (the
// same headers, one SSE "message" event, the same JSON). Everything else
// goes to the SDK unchanged: initialize, lists, notifications, batches, a
// call with _meta (progress, tasks), a client on 2026-07-28, a client that
// declared elicitation (a permission question or an upstream server's
// question would go on the call's stream, which only the SDK has), a
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

// fastCall answers r, a POST of session sid whose body is body, if it is a
// call the fast path takes, and reports whether it did. When it reports
// false, nothing was written and r is as it was.
func (l *httpLife) fastCall(w http.ResponseWriter, r *http.Request, sid string, body []byte) bool {
	if l.sdkOnly || l.sessions == nil || !fastHeaders(r) {
		return false
	}
	msgs := postMessages(r, body)
	if len(msgs) != 1 || firstByte(body) != '{' {
		return false
	}
	m := msgs[0]
	if m.Method != "tools/call" || m.JSONRPC != "2.0" {
		return false
	}
	id, ok := fastID(m.ID)
	if !ok {
		return false
	}
	var p fastParams
	if len(m.Params) == 0 || json.Unmarshal(m.Params, &p) != nil ||
		len(p.Meta)+len(p.Task)+len(p.InputResponses)+len(p.RequestState) > 0 || string(p.Arguments) == "null" {
		return false
	}
	g := l.g
	if !g.fastServed(p.Name) {
		return false
	}
	var userID string
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		userID = ti.UserID
	}
	idKey := compactJSON(m.ID)
	ss, dup, ok := l.sessions.beginFast(sid, userID, r.Header.Get("Mcp-Protocol-Version"), idKey)
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
	w, r, release := g.bindHTTP(w, r, false, cancelKey(sid, idKey))
	defer release()
	req := &mcp.CallToolRequest{
		Session: ss,
		Params:  &mcp.CallToolParamsRaw{Name: p.Name, Arguments: p.Arguments},
		Extra:   &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header},
	}
	res, err := g.fastChain(r.Context(), "tools/call", req)
	var b bytes.Buffer
	b.WriteString("event: message\ndata: ")
	if err == nil {
		err = appendResponse(&b, id, m.ID, res)
	}
	if err != nil {
		b.Truncate(len("event: message\ndata: "))
		resp := &jsonrpc.Response{ID: id, Error: err}
		data, merr := jsonrpc.EncodeMessage(resp)
		if merr != nil {
			data, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: merr.Error()}})
		}
		b.Write(data)
	}
	b.WriteString("\n\n")
	// As the SDK's stateful handler answers a POST with a call: an SSE
	// stream of one event. Not flushed: written whole when the handler
	// returns, in one write with its length (the SDK flushes the event,
	// then ends the chunked body in a second write).
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	_, _ = w.Write(b.Bytes())
	return true
}

// appendResponse appends the JSON-RPC response of request id (rawID as
// sent) with result res to b, as the SDK's jsonrpc.EncodeMessage writes
// it: {"jsonrpc":"2.0","id":…,"result":…}, the result encoded by
// encoding/json without HTML escaping.
func appendResponse(b *bytes.Buffer, id jsonrpc.ID, rawID json.RawMessage, res mcp.Result) error {
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	switch v := id.Raw().(type) {
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case string:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	default:
		return fmt.Errorf("request id %s", rawID)
	}
	b.WriteString(`,"result":`)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1)
	b.WriteByte('}')
	return nil
}

// fastTool is the innermost handler of the fast path's chain: what the
// SDK's server does for a tools/call of a served tool (its handler is
// callTool) and a client before 2026-07-28.
func (g *Gateway) fastTool(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	creq := req.(*mcp.CallToolRequest)
	res, err := g.callTool(ctx, creq)
	if err != nil || res == nil {
		return res, err
	}
	if len(res.InputRequests) > 0 {
		// Never, for a client that cannot be asked; the SDK would put
		// the question to it on the call's stream, which only it has.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway would ask a client that cannot be asked"}
	}
	if res.Content == nil {
		cp := *res
		cp.Content = []mcp.Content{} // as the SDK: not "null"
		res = &cp
	}
	return res, nil
}

// fastServed reports whether name is a tool the gateway serves through
// the SDK's registry with callTool as its handler, and no sync is
// changing that registry.
func (g *Gateway) fastServed(name string) bool {
	if g.toolsMoving.Load() || isAdminTool(name) {
		return false
	}
	g.mu.Lock()
	_, ok := g.tools[name]
	g.mu.Unlock()
	return ok
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
// ok is false for anything else, which the SDK answers.
func fastID(raw json.RawMessage) (jsonrpc.ID, bool) {
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
// Last-Event-ID, none of the MCP standard headers (Mcp-Method, Mcp-Name,
// Mcp-Param-*, which it checks against the body), and a Host it does not
// refuse (its DNS rebinding protection).
func fastHeaders(r *http.Request) bool {
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	if !acceptsJSONAndSSE(r.Header.Values("Accept")) {
		return false
	}
	for k := range r.Header {
		if k == "Mcp-Method" || k == "Mcp-Name" || strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && loopback(la.String()) && !loopback(r.Host) {
		return false
	}
	return true
}

// acceptsJSONAndSSE is the SDK's test of a POST's Accept header.
func acceptsJSONAndSSE(values []string) bool {
	var jsonOK, streamOK bool
	for _, v := range values {
		for _, raw := range strings.Split(v, ",") {
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
	return jsonOK && streamOK
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
