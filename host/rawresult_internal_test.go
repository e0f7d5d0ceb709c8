package host

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkResult decodes a tools/call result as the SDK's ClientSession does.
func sdkResult(data []byte) (*mcp.CallToolResult, error) {
	res := new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return res, nil
}

// sameAsSDK fails unless rawResult(data) is what the SDK decodes: the same
// error, or a result equal in value (reflect.DeepEqual: nil and empty
// maps differ there) and in what it encodes to.
func sameAsSDK(t *testing.T, data []byte) {
	t.Helper()
	got, err1 := rawResult(data)
	want, err2 := sdkResult(data)
	if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
		t.Fatalf("%s:\nerrors differ: relay %v, SDK %v", data, err1, err2)
	}
	if err1 != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nresults differ:\nrelay %#v\nSDK   %#v", data, got, want)
	}
	j1, err1 := json.Marshal(got)
	j2, err2 := json.Marshal(want)
	if string(j1) != string(j2) || (err1 == nil) != (err2 == nil) {
		t.Fatalf("%s:\nencodings differ:\nrelay %s (%v)\nSDK   %s (%v)", data, j1, err1, j2, err2)
	}
}

var rawResultCases = []string{
	`{"content":[{"type":"text","text":"hi"}]}`,
	`{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}`,
	// 2026-07-28: the server's identity in the result's _meta.
	`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"echo","version":"v0"}},"content":[{"type":"text","text":"hi"}],"resultType":"complete"}`,
	`{"_meta":{},"content":[]}`,
	`{"_meta":null,"content":[{"type":"text","text":"a","_meta":null}]}`,
	`{"_meta":{"a":[1,"x",{"b":null}],"n":1.5e3,"t":true},"content":[{"type":"text","text":"a","_meta":{"k":{"deep":[{}]}}}]}`,
	`{"_meta":{"dup":1,"dup":2},"content":[{"type":"text","text":"a","_meta":{"x":1,"x":{"y":2}}}]}`,
	`{"_meta":5,"content":[]}`,
	// A key given twice: the SDK decodes each into the same map.
	`{"_meta":"0","_meta":null}`,
	`{"_meta":{"a":1},"_meta":{"b":2},"content":[{"type":"text","text":"a","_meta":{"c":1},"_meta":{"d":[]}}]}`,
	`{"_meta":{"a":1},"_meta":null,"content":[{"type":"text","text":"a","_meta":{"c":1},"_meta":null}]}`,
	`{"_meta":null,"_meta":{"a":1},"content":[]}`,
	`{"_meta":"text","content":[]}`,
	`{"_meta":[],"content":[]}`,
	`{"content":[{"type":"text","text":"a","_meta":7}]}`,
	`{"content":[{"type":"text","text":"a","_meta":{"x":}}]}`,
	`{"_meta":{"Meta":1},"structuredContent":{"a":{"b":[1,2]}},"isError":true,"content":[{"type":"text","text":"a","annotations":{"audience":["user"],"priority":0.5}}]}`,
	`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png","_meta":{"a":1}}],"_meta":{"b":2}}`,
}

// TestRawResultAsSDK: the relay path's decoding of a result is the SDK's,
// _meta values of every shape included (it makes their maps itself).
func TestRawResultAsSDK(t *testing.T) {
	for _, c := range rawResultCases {
		sameAsSDK(t, []byte(c))
	}
}

func FuzzRawResult(f *testing.F) {
	for _, c := range rawResultCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsSDK(t, data)
	})
}

// FuzzNotObjectText: valid JSON text is refused as arguments exactly
// when encoding/json reads a value other than an object or null from it.
func FuzzNotObjectText(f *testing.F) {
	for _, s := range []string{`{}`, ` null`, `[1]`, `"x"`, `5`, `-1e3`, "\ttrue", `false`, ` {"a":[1]} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return // not valid JSON: refused before this check
		}
		_, object := v.(map[string]any)
		if got := notObjectText(raw); (got == "") != (object || v == nil) {
			t.Fatalf("%q: notObjectText %q, encoding/json read %T", raw, got, v)
		}
	})
}

// BenchmarkRawResult decodes a Go SDK server's answer on 2026-07-28 (its
// identity in _meta, the result type) as the relay path does, and as the
// SDK's ClientSession does:
//
//	go test ./host -run '^$' -bench RawResult -benchtime 20000x -count 3
func BenchmarkRawResult(b *testing.B) {
	data := []byte(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"echo","version":"v0.0.1"}},` +
		`"content":[{"type":"text","text":"hello switchboard"}],"resultType":"complete"}`)
	for name, decode := range map[string]func([]byte) (*mcp.CallToolResult, error){
		"relay": func(d []byte) (*mcp.CallToolResult, error) { return rawResult(d) },
		"sdk":   sdkResult,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
