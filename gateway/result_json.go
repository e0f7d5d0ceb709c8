package gateway

import (
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// The answer of almost every call is text content and nothing else. The
// SDK encodes a CallToolResult with encoding/json twice over (the result,
// then each content through its own MarshalJSON, compacted again into the
// result): a fifth of what the fast path spent writing an answer. For
// such a result appendPlainResult writes the very same bytes directly;
// FuzzPlainResult checks it against CallToolResult.MarshalJSON.

// resultTypeField is the index of CallToolResult's unexported resultType
// (go-sdk v1.8.0), which MarshalJSON writes when set: a result that has one
// is not plain. -1 if the SDK has no such field any more: then no result
// is plain (TestPlainResultKnowsTheSDK fails first).
var resultTypeField = func() int {
	f, ok := reflect.TypeFor[mcp.CallToolResult]().FieldByName("resultType")
	if !ok || f.Type.Kind() != reflect.String || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}()

// appendPlainResult appends res as CallToolResult.MarshalJSON encodes it,
// when res is plain: text content only, none with _meta or annotations,
// and no _meta, structured content, questions, request state or result
// type. ok is false, and dst unchanged, for any other result.
func appendPlainResult(dst []byte, res *mcp.CallToolResult) (out []byte, ok bool) {
	if res == nil || res.Content == nil || len(res.Meta) > 0 || res.StructuredContent != nil ||
		res.InputRequests != nil || res.RequestState != "" || resultTypeField < 0 ||
		reflect.ValueOf(res).Elem().Field(resultTypeField).Len() > 0 {
		return dst, false
	}
	out = append(dst, `{"content":[`...)
	for i, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t == nil || len(t.Meta) > 0 || t.Annotations != nil {
			return dst, false
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"type":"text","text":`...)
		out = jsonl.AppendString(out, t.Text, true)
		out = append(out, '}')
	}
	out = append(out, ']')
	if res.IsError {
		out = append(out, `,"isError":true`...)
	}
	return append(out, '}'), true
}
