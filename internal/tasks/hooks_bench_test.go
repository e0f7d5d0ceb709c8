package tasks

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// BenchmarkHooks is the adapter's own cost for one non-task call: its look
// at the request and at the response, for a server that offers no tasks
// and for one that does (2025-11-25, a tool without taskSupport), and the
// HTTP form's scan of a POST body.
func BenchmarkHooks(b *testing.B) {
	id, _ := jsonrpc.MakeID(float64(7))
	req := &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hello switchboard"},"_meta":{"progressToken":3}}`)}
	resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[{"type":"text","text":"hello switchboard"}]}`)}
	ctx := context.Background()
	run := func(b *testing.B, a *Adapter) {
		b.ReportAllocs()
		for range b.N {
			if a.outgoing(ctx, req, nil) != req || a.incoming(resp, nil) != resp {
				b.Fatal("a non-task call was changed")
			}
		}
	}
	b.Run("no-tasks", func(b *testing.B) { run(b, New(nil)) })
	b.Run("tasks-offered", func(b *testing.B) {
		a := New(nil)
		a.rev.Store(uint32(revV1))
		a.support["echo"] = ""
		run(b, a)
	})
	b.Run("http-sniff", func(b *testing.B) {
		body, _ := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: "resources/read", Params: json.RawMessage(`{"uri":"file:///a/b/c.txt"}`)})
		t := &roundTripper{a: New(nil)}
		b.ReportAllocs()
		for range b.N {
			if t.sniff(body) != nil {
				b.Fatal("decoded a body of no interest")
			}
		}
	})
}
