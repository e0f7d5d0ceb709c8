package host

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// The relay path of tools/call (issue 36).
//
// Through the SDK's ClientSession, a call's result is decoded twice with
// a fresh 32 KiB decoder buffer each time, which was a third of a relayed
// call's allocations. On a stdio connection the host owns the
// mcp.Connection under the SDK (probeConn), so it can write a tools/call
// of its own, under a request ID the SDK never uses, take the answer off
// the wire before the SDK sees it, and decode the result in one pass over
// the bytes into the same *mcp.CallToolResult (rawResult). Everything
// after the call — what the model reads, hooks, the envelope — is the
// same code on the same value, so the model gets the same bytes.
//
// The path is taken where the SDK would do nothing with the request but
// encode it and nothing with the answer but decode it (rawEligible): not
// a call the tasks adapter makes a task (it rewrites those; a server that
// offers tasks keeps the path for its other tools on 2025-11-25). A
// call that asks for progress carries the host's token in its _meta, and
// the notifications it brings go to the SDK as before. From protocol
// 2026-07-28 on, the SDK adds two
// things, and the relay path does both as the SDK would:
//
//   - the client's identity in every request's _meta (SEP-2575: the
//     protocol revision, clientInfo, clientCapabilities). The host takes
//     it from the SDK's own requests on the connection (the last one seen,
//     noteIdentity) and writes the same keys; until it has them for the
//     connection's agreed revision, calls go through the SDK.
//   - the server's questions (multi round-trip, SEP-2322): an answer that
//     carries input requests is handed to the SDK's CallTool, which asks
//     them through the host's handlers, with every check of its own, and
//     sends the retries. Its first request — the round the server has
//     answered already — is not sent again: probeConn writes a ping under
//     its ID instead and gives the SDK the answer it replaces (replay), so
//     no round runs twice on the server. Before 2026-07-28 a server has no
//     such answers; one that sent them anyway is handled the same way, as
//     the SDK would.
//
// Anything else goes through CallTool as before, and Options.SDKCalls sends
// every call there.

// rawIDPrefix starts the IDs of the host's own requests: the SDK's are
// numbers, so an answer with such an ID is the host's.
const rawIDPrefix = "switchboard-"

// rawCalls are the tools/call requests the host writes itself on one
// connection, waiting for their answers.
type rawCalls struct {
	conn     mcp.Connection // under probeConn: what the SDK writes to
	next     atomic.Int64
	sent     atomic.Int64             // calls written (for tests)
	replayed atomic.Int64             // answers handed to the SDK (for tests)
	identity atomic.Pointer[identity] // on 2026-07-28: the _meta keys the SDK sends (noteIdentity)
	mu       sync.Mutex
	pending  map[string]chan *jsonrpc.Response
	// replays are the answers the SDK is to read in place of its pings'
	// (replay), by request ID; replaying counts them, so that a read
	// looks them up only while there are any.
	replays   map[jsonrpc.ID]json.RawMessage
	replaying atomic.Int32
}

func newRawCalls() *rawCalls {
	return &rawCalls{pending: map[string]chan *jsonrpc.Response{}}
}

// identity is the client's identity as the SDK writes it in a request's
// _meta on 2026-07-28 (SEP-2575).
type identity struct {
	protocol string                     // the protocol revision it names
	raw      json.RawMessage            // the object of the keys below, keys sorted
	keys     map[string]json.RawMessage // protocolVersion, clientCapabilities and, if set, clientInfo
	// leveled is the _meta of a call of a server that logs (the log
	// level and these keys), as metaJSON last wrote it.
	leveled atomic.Pointer[leveledMeta]
}

type leveledMeta struct {
	level string
	raw   []byte
}

var identityKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}

// noteIdentity keeps the identity in params, a request the SDK wrote, if
// it has one (the protocol revision and capabilities at least). The last
// one seen is kept: the handshake's names the revision asked for, the
// requests after it the one agreed on.
func (r *rawCalls) noteIdentity(params json.RawMessage) {
	if !bytes.Contains(params, []byte(mcp.MetaKeyClientCapabilities)) {
		return
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta[mcp.MetaKeyClientCapabilities] == nil {
		return
	}
	id := &identity{keys: map[string]json.RawMessage{}}
	if json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &id.protocol) != nil || id.protocol == "" {
		return
	}
	for _, k := range identityKeys {
		if v, ok := p.Meta[k]; ok {
			id.keys[k] = v
		}
	}
	raw, err := json.Marshal(id.keys) // keys sorted, as the SDK writes a map
	if err != nil {
		return
	}
	id.raw = raw
	if cur := r.identity.Load(); cur == nil || !bytes.Equal(cur.raw, raw) {
		r.identity.Store(id)
	}
}

// replayKey marks a context whose first tools/call write is to be
// replayed (replay).
type replayKey struct{}

// replay is an answer the server gave the relay path, for the SDK to
// read as the answer to its own first tools/call request.
type replay struct {
	result json.RawMessage
	used   atomic.Bool
}

// expect arranges for the answer to request id to be read as result.
func (r *rawCalls) expect(id jsonrpc.ID, result json.RawMessage) {
	r.mu.Lock()
	if r.replays == nil {
		r.replays = map[jsonrpc.ID]json.RawMessage{}
	}
	r.replays[id] = result
	r.mu.Unlock()
	r.replaying.Add(1)
}

// unexpect forgets id's replay (its ping was not written).
func (r *rawCalls) unexpect(id jsonrpc.ID) {
	r.mu.Lock()
	_, ok := r.replays[id]
	delete(r.replays, id)
	r.mu.Unlock()
	if ok {
		r.replaying.Add(-1)
	}
}

// swap returns the answer the SDK is to read for resp: the replayed one
// if resp answers a ping written in place of a request (whatever the
// ping's answer), else resp.
func (r *rawCalls) swap(resp *jsonrpc.Response) *jsonrpc.Response {
	if r.replaying.Load() == 0 {
		return resp
	}
	r.mu.Lock()
	result, ok := r.replays[resp.ID]
	delete(r.replays, resp.ID)
	r.mu.Unlock()
	if !ok {
		return resp
	}
	r.replaying.Add(-1)
	r.replayed.Add(1)
	return &jsonrpc.Response{ID: resp.ID, Result: result}
}

// deliver hands resp to the call waiting for it, and reports whether it
// was one of the host's own requests (then the SDK must not see it).
func (r *rawCalls) deliver(resp *jsonrpc.Response) bool {
	id, ok := resp.ID.Raw().(string)
	if !ok || len(id) <= len(rawIDPrefix) || id[:len(rawIDPrefix)] != rawIDPrefix {
		return false
	}
	r.mu.Lock()
	ch := r.pending[id]
	delete(r.pending, id)
	r.mu.Unlock()
	if ch != nil {
		ch <- resp // capacity 1
	}
	// An answer to a call given up on (cancelled) is dropped: the SDK
	// would log one it does not know.
	return true
}

// rawParams is a tools/call's params as the SDK writes them, and the
// client identity to add to its _meta (2026-07-28; nil before).
type rawParams struct {
	Meta      mcp.Meta        `json:"_meta,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	identity  *identity
}

// rawEligible reports whether a call of tool on c may take the relay
// path, and on 2026-07-28 the identity its request carries. A server that
// offers tasks keeps it for the tools the tasks adapter leaves alone
// (tasks.Adapter.Plain): its request goes out through the adapter, which
// passes it on as it is, and so does the answer. A call that
// asks for progress may: its request carries the host's progress token in
// its _meta as through the SDK, the server's notifications are read by
// probeConn, counted in wire order before the answer and handed to the
// SDK's handler, which delivers them (progressRouter), and callOn waits
// for them before it returns, whichever path the answer took.
func (s *server) rawEligible(c *conn, tool string) (*identity, bool) {
	if s.h.opts.SDKCalls || c.raw == nil || c.raw.conn == nil || c.tasks == nil || !c.tasks.Plain(tool) {
		return nil, false
	}
	var id *identity
	if c.protocol >= "2026-07-28" {
		if id = c.raw.identity.Load(); id == nil || id.protocol != c.protocol {
			return nil, false
		}
	}
	return id, true
}

// rawCall makes a call on c's connection directly (see rawEligible); it
// answers as ClientSession.CallTool does: the result, a *jsonrpc.Error
// when the server answered with an error, or an error when the
// connection ended first. written is set once the request is on the pipe.
// An answer with questions in it is returned as a *needsInput, for
// callOn to hand to the SDK.
func (c *conn) rawCall(ctx context.Context, params *rawParams, written *atomic.Bool) (*mcp.CallToolResult, error) {
	r := c.raw
	if len(params.Arguments) == 0 {
		params.Arguments = json.RawMessage("{}")
	}
	body, err := rawParamsJSON(params)
	if err != nil {
		return nil, err
	}
	key := rawIDPrefix + strconv.FormatInt(r.next.Add(1), 10)
	id, err := jsonrpc.MakeID(key)
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	r.mu.Lock()
	r.pending[key] = ch
	r.mu.Unlock()
	forget := func() {
		r.mu.Lock()
		delete(r.pending, key)
		r.mu.Unlock()
	}
	if err := r.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call", Params: body}); err != nil {
		forget()
		return nil, err
	}
	written.Store(true)
	r.sent.Add(1)
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, resp.Error
		}
		res, err := rawResult(resp.Result)
		if err == nil && res.InputRequests != nil {
			return nil, &needsInput{result: resp.Result}
		}
		return res, err
	case <-ctx.Done():
		forget()
		// As the SDK does: the server may stop the work.
		go c.rawCancel(id, ctx.Err())
		return nil, ctx.Err()
	case <-c.done:
		forget()
		return nil, mcp.ErrConnectionClosed
	}
}

// needsInput is the answer of a server that asks questions (input
// requests): the SDK is to ask them and send the retries (replay).
type needsInput struct{ result json.RawMessage }

func (*needsInput) Error() string { return "the server asks for input" }

// rawParamsJSON encodes params, with its identity's keys in _meta where
// params.Meta does not set them, as the SDK does. The name and the
// arguments go as they are: the connection's writer compacts and checks
// them (jsonl's appendRequest, as the SDK's encoder does), which
// json.Marshal would do a second time, with reflection.
func rawParamsJSON(params *rawParams) (json.RawMessage, error) {
	meta, err := metaJSON(params.Meta, params.identity)
	if err != nil {
		return nil, err
	}
	// {"_meta":…,"name":…,"arguments":…} is 33 bytes besides the values.
	b := make([]byte, 0, len(params.Name)+len(params.Arguments)+len(meta)+48)
	if meta != nil {
		b = append(b, `{"_meta":`...)
		b = append(b, meta...)
		b = append(b, `,"name":`...)
	} else {
		b = append(b, `{"name":`...)
	}
	b = jsonl.AppendString(b, params.Name, true)
	b = append(b, `,"arguments":`...)
	b = append(b, params.Arguments...)
	return append(b, '}'), nil
}

// metaJSON writes the _meta object json.Marshal writes for meta merged
// with id's keys (id may be nil; meta's keys win), or nil when both are
// empty. A string value (the log level, on every call of a server that
// logs) is written directly, any other through json.Marshal.
func metaJSON(meta mcp.Meta, id *identity) (out []byte, err error) {
	var idKeys map[string]json.RawMessage
	if id != nil {
		if len(meta) == 0 {
			return id.raw, nil
		}
		// The _meta of every call of a server that logs: the same bytes
		// each time.
		if level, ok := meta[mcp.MetaKeyLogLevel].(string); ok && len(meta) == 1 {
			if l := id.leveled.Load(); l != nil && l.level == level {
				return l.raw, nil
			}
			defer func() {
				if err == nil {
					id.leveled.Store(&leveledMeta{level: level, raw: out})
				}
			}()
		}
		idKeys = id.keys
	} else if len(meta) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(meta)+len(idKeys))
	for k := range meta {
		keys = append(keys, k)
	}
	for k := range idKeys {
		if _, ok := meta[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // as encoding/json orders a map's keys
	b := make([]byte, 0, 64+len(idKeys)*64)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonl.AppendString(b, k, true)
		b = append(b, ':')
		v, set := meta[k]
		if !set {
			b = append(b, idKeys[k]...)
		} else if str, ok := v.(string); ok {
			b = jsonl.AppendString(b, str, true)
		} else {
			vb, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			b = append(b, vb...)
		}
	}
	return append(b, '}'), nil
}

// rawCancel tells the server that the host gave up on request id.
func (c *conn) rawCancel(id jsonrpc.ID, why error) {
	p, err := json.Marshal(&mcp.CancelledParams{RequestID: id.Raw(), Reason: why.Error()})
	if err != nil {
		return
	}
	_ = c.raw.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/cancelled", Params: p})
}

// wireResult mirrors the form the SDK decodes a CallToolResult from
// (CallToolResult.UnmarshalJSON), field for field and type for type, so
// that what one rejects the other rejects too.
type wireResult struct {
	Meta              wireMeta        `json:"_meta,omitempty"`
	Content           []*wireContent  `json:"content"`
	StructuredContent any             `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	InputRequests     json.RawMessage `json:"inputRequests,omitempty"`
	RequestState      string          `json:"requestState,omitempty"`
	ResultType        json.RawMessage `json:"resultType"`
}

// wireContent mirrors the SDK's wireContent.
type wireContent struct {
	Type              string                `json:"type"`
	Text              string                `json:"text,omitempty"`
	MIMEType          string                `json:"mimeType,omitempty"`
	Data              []byte                `json:"data,omitempty"`
	Resource          *mcp.ResourceContents `json:"resource,omitempty"`
	URI               string                `json:"uri,omitempty"`
	Name              string                `json:"name,omitempty"`
	Title             string                `json:"title,omitempty"`
	Description       string                `json:"description,omitempty"`
	Size              *int64                `json:"size,omitempty"`
	Meta              wireMeta              `json:"_meta,omitempty"`
	Annotations       *mcp.Annotations      `json:"annotations,omitempty"`
	Icons             []mcp.Icon            `json:"icons,omitempty"`
	ID                string                `json:"id,omitempty"`
	Input             map[string]any        `json:"input,omitempty"`
	ToolUseID         string                `json:"toolUseId,omitempty"`
	NestedContent     []*wireContent        `json:"content,omitempty"`
	StructuredContent any                   `json:"structuredContent,omitempty"`
	IsError           bool                  `json:"isError,omitempty"`
}

// rawResult decodes a tools/call result as the SDK does, in one pass
// without a decoder buffer, when it is text content (the common case);
// anything else — other content, questions, a result type — is left to
// the SDK's own decoding of the same bytes.
func rawResult(data json.RawMessage) (*mcp.CallToolResult, error) {
	var w wireResult
	if _, err := sjson.Parse(data, &w, sjson.DontMatchCaseInsensitiveStructFields); err == nil && w.plain() {
		return w.result(), nil
	}
	res := new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return res, nil
}

// result is the CallToolResult of a plain w.
func (w *wireResult) result() *mcp.CallToolResult {
	res := new(mcp.CallToolResult)
	if string(w.ResultType) == `"complete"` {
		*res = completeResult() // the SDK keeps the type (unexported) and writes it again
	}
	res.Meta, res.StructuredContent, res.IsError = mcp.Meta(w.Meta), w.StructuredContent, w.IsError
	res.Content = make([]mcp.Content, len(w.Content))
	for i, c := range w.Content {
		res.Content[i] = &mcp.TextContent{Text: c.Text, Meta: mcp.Meta(c.Meta), Annotations: c.Annotations}
	}
	return res
}

// wireMeta is an mcp.Meta decoded as the SDK's decoder does (a key given
// twice merges into the first value's map, null empties it), into a map
// of its own making: for a nil map the parser makes one sized for 64 keys
// (~5 KB each time), where a result's _meta on 2026-07-28 has one key,
// the server's identity.
type wireMeta mcp.Meta

func (m *wireMeta) UnmarshalJSON(data []byte) error {
	if *m == nil && !isNull(data) {
		*m = wireMeta{}
	}
	_, err := sjson.Parse(data, (*map[string]any)(m), sjson.DontMatchCaseInsensitiveStructFields)
	return err
}

// completeResult is an empty CallToolResult of result type "complete",
// the type of every finished call's answer on 2026-07-28, decoded once
// by the SDK (the field is unexported; a copy keeps it).
var completeResult = sync.OnceValue(func() mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := r.UnmarshalJSON([]byte(`{"content":[],"resultType":"complete"}`)); err != nil {
		panic(err)
	}
	return r
})

// plain reports whether w is a result rawResult builds itself: text
// content only, and no questions (a result type other than "complete",
// input requests, a request state).
func (w *wireResult) plain() bool {
	if w.RequestState != "" || !isNull(w.InputRequests) || !isNull(w.ResultType) && string(w.ResultType) != `"complete"` {
		return false
	}
	for _, c := range w.Content {
		if c == nil || c.Type != "text" {
			return false
		}
	}
	return true
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}
