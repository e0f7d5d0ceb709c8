package jsonl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// FuzzDecodeParity checks Decode against the SDK's jsonrpc.DecodeMessage:
// whatever Decode accepts, the SDK accepts as the same message; whatever
// the SDK accepts that is one JSON value (the SDK's stream framing refuses
// the rest before decoding), Decode accepts.
//
//	go test ./internal/jsonl -run '^$' -fuzz FuzzDecodeParity -fuzztime 60s
func FuzzDecodeParity(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no","data":{"a":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"method":null}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"a"}`,
		`{"jsonrpc":"2.0","id":null,"result":1}`,
		`{"jsonrpc":"2.0","Method":"a"}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","params":"\ud800"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\"}",
		`{"jsonrpc":"2.0","id":1e400,"method":"a"}`,
		` {"jsonrpc":"2.0","id":1,"method":"a"} `,
		`[]`, `null`, `"x"`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ours, oerr := jsonl.Decode(bytes.Clone(data))
		sdk, serr := jsonrpc.DecodeMessage(bytes.Clone(data))
		if oerr == nil {
			if serr != nil {
				t.Fatalf("%q: jsonl accepts %#v, the SDK refuses: %v", data, ours, serr)
			}
			if !sameMessage(ours, sdk) {
				t.Fatalf("%q: jsonl %#v, SDK %#v", data, ours, sdk)
			}
			return
		}
		if serr == nil && json.Valid(data) {
			t.Fatalf("%q: the SDK accepts %#v, jsonl refuses: %v", data, sdk, oerr)
		}
	})
}

func sameMessage(a, b jsonrpc.Message) bool {
	switch a := a.(type) {
	case *jsonrpc.Request:
		b, ok := b.(*jsonrpc.Request)
		return ok && a.ID == b.ID && a.Method == b.Method && bytes.Equal(a.Params, b.Params)
	case *jsonrpc.Response:
		b, ok := b.(*jsonrpc.Response)
		return ok && a.ID == b.ID && bytes.Equal(a.Result, b.Result) && reflect.DeepEqual(a.Error, b.Error)
	}
	return false
}

// FuzzRead feeds any bytes through a connection and closes the pipe: a
// Read never panics, never hangs, and ends in an error (EOF or a bad
// frame) after a finite number of messages.
//
//	go test ./internal/jsonl -run '^$' -fuzz FuzzRead -fuzztime 60s
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `[{"jsonrpc":"2.0","id":2,"result":{}}]` + "\n"))
	f.Add([]byte("{\n\"jsonrpc\":\"2.0\",\n\"method\":\"a\"}\n\n"))
	f.Add([]byte("garbage\n{\"a\":"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, w := io.Pipe()
		conn, err := (&jsonl.Transport{Reader: r, Writer: nopWriteCloser{io.Discard}, MaxLineLength: 1 << 16}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go func() { w.Write(data); w.Close() }()
		for n := 0; ; n++ {
			if n > len(data)+1 {
				t.Fatalf("%d messages from %d bytes", n, len(data))
			}
			if _, err := conn.Read(context.Background()); err != nil {
				return
			}
		}
	})
}
