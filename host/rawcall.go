package host

import (
	"bytes"
	"context"
	"encoding/json"
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
// The path is taken only where the SDK would add nothing to the request
// nor do anything with the answer but decode it (rawEligible): a protocol
// before 2026-07-28 (from it on, the SDK puts the client's identity in
// every request's _meta and runs multi-round-trip questions), no task
// support on the server (the tasks adapter rewrites such calls), no
// progress asked for. Anything else goes through CallTool as before, and
// Options.SDKCalls sends every call there.

// rawIDPrefix starts the IDs of the host's own requests: the SDK's are
// numbers, so an answer with such an ID is the host's.
const rawIDPrefix = "switchboard-"

// rawCalls are the tools/call requests the host writes itself on one
// connection, waiting for their answers.
type rawCalls struct {
	conn    mcp.Connection // under probeConn: what the SDK writes to
	next    atomic.Int64
	sent    atomic.Int64 // calls written (for tests)
	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response
}

func newRawCalls() *rawCalls {
	return &rawCalls{pending: map[string]chan *jsonrpc.Response{}}
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

// rawParams is a tools/call's params as the SDK writes them before
// 2026-07-28.
type rawParams struct {
	Meta      mcp.Meta        `json:"_meta,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// rawEligible reports whether a call of tool on c may take the relay path.
func (s *server) rawEligible(ctx context.Context, c *conn) bool {
	if s.h.opts.SDKCalls || c.raw == nil || c.raw.conn == nil || c.protocol >= "2026-07-28" || c.tasks == nil || c.tasks.Offered() {
		return false
	}
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return fn == nil
}

// rawCall makes a call on c's connection directly (see rawEligible); it
// answers as ClientSession.CallTool does: the result, a *jsonrpc.Error
// when the server answered with an error, or an error when the
// connection ended first. written is set once the request is on the pipe.
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
		return rawResult(resp.Result)
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

// rawParamsJSON encodes params. Without _meta, as the name and the
// arguments as they are: the connection's writer compacts and checks them
// (jsonl's appendRequest, as the SDK's encoder does), which json.Marshal
// would do a second time, with reflection.
func rawParamsJSON(params *rawParams) (json.RawMessage, error) {
	if len(params.Meta) > 0 {
		return json.Marshal(params)
	}
	b := make([]byte, 0, len(params.Name)+len(params.Arguments)+24)
	b = append(b, `{"name":`...)
	b = jsonl.AppendString(b, params.Name, true)
	b = append(b, `,"arguments":`...)
	b = append(b, params.Arguments...)
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
	Meta              mcp.Meta        `json:"_meta,omitempty"`
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
	Meta              mcp.Meta              `json:"_meta,omitempty"`
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
		res := &mcp.CallToolResult{Meta: w.Meta, StructuredContent: w.StructuredContent, IsError: w.IsError,
			Content: make([]mcp.Content, len(w.Content))}
		for i, c := range w.Content {
			res.Content[i] = &mcp.TextContent{Text: c.Text, Meta: c.Meta, Annotations: c.Annotations}
		}
		return res, nil
	}
	res := new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return res, nil
}

// plain reports whether w is a result rawResult builds itself: text
// content only, and nothing of protocol 2026-07-28.
func (w *wireResult) plain() bool {
	if w.RequestState != "" || !isNull(w.InputRequests) || !isNull(w.ResultType) {
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
