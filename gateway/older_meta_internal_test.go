package gateway

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/tasks"
)

// FuzzOlderMeta: whenever olderMeta lets a 2025-11-25 call's _meta onto
// the fast path, the SDK decodes the same params without an error into
// the same map, with the same progress token, and finds no task request
// in it — so the chain sees what it would see on the SDK's path.
func FuzzOlderMeta(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"progressToken":"p"}`,
		`{"progressToken":7}`,
		`{"progressToken":7.5}`,
		`{"progressToken":9007199254740993}`,
		`{"progressToken":true}`,
		`{"progressToken":null}`,
		`{"vscode.conversationId":"c","vscode.requestId":"r","progressToken":"u"}`,
		`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		`{"switchboard/task":{"ttl":1000}}`,
		`{"progressToken":"a","progressToken":"b"}`,
		`{"progresstoken":1}`,
		`[]`,
		`null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		meta, ok := olderMeta(json.RawMessage(raw))
		if !ok {
			return // the SDK's path: always right
		}
		var p mcp.CallToolParamsRaw
		if err := json.Unmarshal([]byte(`{"name":"x","_meta":`+raw+`}`), &p); err != nil {
			t.Fatalf("_meta %s: taken by the fast path, refused by the SDK's decoding: %v", raw, err)
		}
		if !reflect.DeepEqual(map[string]any(p.Meta), map[string]any(meta)) {
			t.Fatalf("_meta %s: fast path %#v, SDK %#v", raw, meta, p.Meta)
		}
		if !reflect.DeepEqual(p.GetProgressToken(), meta["progressToken"]) {
			t.Fatalf("_meta %s: progress token %#v, the SDK's %#v", raw, meta["progressToken"], p.GetProgressToken())
		}
		if _, asked := tasks.Requested(p.Meta); asked {
			t.Fatalf("_meta %s: a task request on the fast path", raw)
		}
	})
}

// FuzzFastMeta: whenever fastMeta lets a 2026-07-28 call's _meta onto the
// fast path, it holds the protocol version and the client's capabilities,
// the SDK decodes the same params into the same map with the same progress
// token, and finds no task request in it.
func FuzzFastMeta(f *testing.F) {
	const triple = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
	for _, s := range []string{
		`{` + triple + `}`,
		`{` + triple + `,"progressToken":3}`,
		`{` + triple + `,"progressToken":"p","claudecode/callMark":"m"}`,
		`{` + triple + `,"progressToken":1.5}`,
		`{` + triple + `,"io.modelcontextprotocol/logLevel":"debug"}`,
		`{` + triple + `,"switchboard/task":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}`,
		`{"progressToken":1}`,
		`null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		meta, ok := fastMeta(json.RawMessage(raw))
		if !ok {
			return
		}
		if meta[metaProtocolVersion] != protocolMRT || meta[metaClientCapabilities] == nil {
			t.Fatalf("_meta %s: taken without the protocol version and capabilities", raw)
		}
		var p mcp.CallToolParamsRaw
		if err := json.Unmarshal([]byte(`{"name":"x","_meta":`+raw+`}`), &p); err != nil {
			t.Fatalf("_meta %s: taken by the fast path, refused by the SDK's decoding: %v", raw, err)
		}
		if !reflect.DeepEqual(map[string]any(p.Meta), map[string]any(meta)) || !reflect.DeepEqual(p.GetProgressToken(), meta["progressToken"]) {
			t.Fatalf("_meta %s: fast path %#v, SDK %#v", raw, meta, p.Meta)
		}
		if _, asked := tasks.Requested(p.Meta); asked {
			t.Fatalf("_meta %s: a task request on the fast path", raw)
		}
	})
}
