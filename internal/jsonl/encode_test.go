package jsonl

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var stringSeeds = []string{"", "hello", `a "quoted" \ back`, "<b>&amp;</b>", "line\nbreak\ttab\r\b\f",
	"\x00\x01\x1f\x7f", "é ü 日本", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x80", "emoji 🎉"}

// encodingJSON is what encoding/json writes for s, with or without HTML
// escaping.
func encodingJSON(t *testing.T, s string, escapeHTML bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			if got, want := AppendString([]byte("x"), s, html), append([]byte("x"), encodingJSON(t, s, html)...); !bytes.Equal(got, want) {
				t.Fatalf("AppendString(%q, html %v) = %s; encoding/json writes %s", s, html, got, want)
			}
		}
	})
}

// FuzzAppendRequest: a request is written byte for byte as the SDK's
// jsonrpc.EncodeMessage writes it, and params it cannot write are not
// written either.
func FuzzAppendRequest(f *testing.F) {
	f.Add(int64(1), "", true, "tools/call", []byte(`{"name":"echo","arguments":{"text":"hi <b>"}}`))
	f.Add(int64(0), "sb-7", false, "tools/call", []byte(" { \"name\" : \"e\",\n \"arguments\" : { \"t\" : \"a b\\n\" } } "))
	f.Add(int64(0), "", false, "notifications/cancelled", []byte(`{"requestId":"sb-1","reason":"x"}`))
	f.Add(int64(-5), "", true, "ping", []byte(nil))
	f.Add(int64(3), "", true, "m\u2028<", []byte(`null`))
	f.Add(int64(3), "", true, "tools/call", []byte(`{"a":`))
	f.Add(int64(3), "", true, "tools/call", []byte(`{"a":1}{}`))
	f.Fuzz(func(t *testing.T, n int64, s string, isInt bool, method string, params []byte) {
		req := &jsonrpc.Request{Method: method, Params: params}
		switch {
		case isInt:
			req.ID, _ = jsonrpc.MakeID(float64(n))
		case s != "":
			req.ID, _ = jsonrpc.MakeID(s)
		}
		want, werr := jsonrpc.EncodeMessage(req)
		got, ok := appendRequest([]byte("x"), req)
		if werr != nil {
			if ok || string(got) != "x" {
				t.Fatalf("appendRequest wrote %s where EncodeMessage fails (%v)", got, werr)
			}
			return
		}
		if !ok || !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendRequest = %s, %v; EncodeMessage writes %s", got, ok, want)
		}
	})
}

// FuzzAppendResponse: an answer with a result is written byte for byte as
// jsonrpc.EncodeMessage writes it; any other answer is left to it.
func FuzzAppendResponse(f *testing.F) {
	f.Add(int64(1), "", true, []byte(`{"content":[{"type":"text","text":"hi <b>"}]}`), false)
	f.Add(int64(0), "sb-7", false, []byte(" { \"a\" :\n [ 1 , \"x y\" ] } "), false)
	f.Add(int64(2), "", true, []byte(nil), false)
	f.Add(int64(2), "", true, []byte(`{}`), true)
	f.Add(int64(3), "", true, []byte(`{"a":`), false)
	f.Fuzz(func(t *testing.T, n int64, s string, isInt bool, result []byte, withErr bool) {
		resp := &jsonrpc.Response{Result: result}
		switch {
		case isInt:
			resp.ID, _ = jsonrpc.MakeID(float64(n))
		case s != "":
			resp.ID, _ = jsonrpc.MakeID(s)
		}
		if withErr {
			resp.Error = &jsonrpc.Error{Code: -32000, Message: "x"}
		}
		got, ok := appendResponse([]byte("x"), resp)
		want, werr := jsonrpc.EncodeMessage(resp)
		if !ok {
			if string(got) != "x" {
				t.Fatalf("appendResponse wrote %s and reported false", got)
			}
			if werr == nil && !withErr && len(result) > 0 {
				var v any
				if json.Unmarshal(result, &v) == nil {
					t.Fatalf("appendResponse left a valid result to EncodeMessage: %s", result)
				}
			}
			return
		}
		if werr != nil || !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendResponse = %s; EncodeMessage writes %s (%v)", got, want, werr)
		}
	})
}
