package gateway

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// plainParams is how the fast path read a tools/call's params before
// scanParams, with encoding/json: taken if they answer no question, start
// no task and their arguments are not null. The fuzz targets hold
// scanCall and scanParams to it.
func plainParams(raw json.RawMessage) (p fastParams, ok bool) {
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil ||
		len(p.Task)+len(p.InputResponses)+len(p.RequestState) > 0 || string(p.Arguments) == "null" {
		return p, false
	}
	return p, true
}

// scanSeeds are bodies the fast path takes, bodies it must leave to the
// SDK, and the edges of the scanner.
var scanSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"srv__echo","arguments":{"text":"hi"}}}`,
	`{"method":"tools/call","params":{"name":"srv__echo","arguments":{"text":"a\"}b{[","n":[1,{"x":null}]}},"jsonrpc":"2.0","id":"req-7"}`,
	" \n{ \"jsonrpc\" : \"2.0\" , \"id\" : -1.5e3 , \"method\" : \"tools/call\" , \"params\" : { \"name\" : \"t\" } } \t",
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":1}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","requestState":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"t"}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"t"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{"name":"t"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","name":"u"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t\u0041"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na\u006de":"t"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"é"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"extra":1}`,
	`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}`,
	`{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"t"}}`,
	`{"jsonrpc":"2.0","id":"a\u00e9","method":"tools/call","params":{"name":"t"}}`,
	`{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{"name":"t"}}`,
	`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}`,
	`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}]`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}x`,
	`{}`, ``, `null`, `"x"`,
}

// FuzzScanCall: a body scanCall takes is one that decodeMessages and
// plainParams, the decoders the fast path used before it (encoding/json),
// take too and read the same way — every field, byte for byte — and
// whose ID fastID reads as encoding/json does.
func FuzzScanCall(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, p, ok := scanCall(body)
		if !ok {
			return
		}
		msgs := decodeMessages(body)
		if len(msgs) != 1 || firstByte(body) != '{' {
			t.Fatalf("scanCall took %q; encoding/json reads %d messages", body, len(msgs))
		}
		want := msgs[0]
		if m.JSONRPC != want.JSONRPC || m.Method != want.Method || !bytes.Equal(m.ID, want.ID) || !bytes.Equal(m.Params, want.Params) {
			t.Fatalf("scanCall read %q as %+v; encoding/json as %+v", body, m, want)
		}
		wp, ok := plainParams(want.Params)
		if !ok {
			t.Fatalf("scanCall took the params of %q; plainParams does not", body)
		}
		if p.Name != wp.Name || !bytes.Equal(p.Arguments, wp.Arguments) || !bytes.Equal(p.Meta, wp.Meta) {
			t.Fatalf("scanCall read the params of %q as %+v; encoding/json as %+v", body, p, wp)
		}
		if len(p.Task)+len(p.InputResponses)+len(p.RequestState) > 0 {
			t.Fatalf("scanCall took %q with a task or an answer", body)
		}
		id, idOK := fastID(m.ID)
		var v any
		if err := json.Unmarshal(m.ID, &v); err == nil {
			switch v.(type) {
			case float64, string:
				want, err := jsonrpc.MakeID(v)
				if !idOK || err != nil || id.Raw() != want.Raw() {
					t.Fatalf("fastID(%s) = %v, %v; encoding/json reads %v", m.ID, id.Raw(), idOK, v)
				}
				return
			}
		}
		if idOK {
			t.Fatalf("fastID(%s) took an ID encoding/json does not", m.ID)
		}
	})
}

// TestScanCallTakes: the plain calls the fast path is for are taken, and
// what the SDK must see is not.
func TestScanCallTakes(t *testing.T) {
	take := map[int]bool{0: true, 1: true, 2: true, 3: true, 21: true}
	for i, s := range scanSeeds {
		m, _, p, ok := fastRequest(httptest.NewRequest(http.MethodPost, "/mcp", nil), []byte(s))
		if ok != take[i] {
			t.Errorf("fastRequest(%s) = %v; want %v", s, ok, take[i])
			continue
		}
		if ok && (m.Method != "tools/call" || p.Name == "") {
			t.Errorf("scanCall(%s): %+v %+v", s, m, p)
		}
	}
	m, p, _ := scanCall([]byte(scanSeeds[1]))
	if string(m.ID) != `"req-7"` || p.Name != "srv__echo" || string(p.Arguments) != `{"text":"a\"}b{[","n":[1,{"x":null}]}` {
		t.Errorf("scanCall read %+v %+v", m, p)
	}
}

// FuzzScanParams: scanParams never fails on any bytes, and on valid JSON
// takes only params plainParams takes, read the same way.
func FuzzScanParams(f *testing.F) {
	for _, s := range scanSeeds {
		m, _, ok := scanCall([]byte(s))
		if ok {
			f.Add([]byte(m.Params))
		}
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, ok := scanParams(raw)
		if !ok || !json.Valid(raw) {
			return
		}
		wp, wok := plainParams(raw)
		if !wok || p.Name != wp.Name || !bytes.Equal(p.Arguments, wp.Arguments) || !bytes.Equal(p.Meta, wp.Meta) {
			t.Fatalf("scanParams read %q as %+v; plainParams as %+v, %v", raw, p, wp, wok)
		}
	})
}

// TestLoopbackAddr: asking a TCP address directly answers as the SDK's
// reading of its string does.
func TestLoopbackAddr(t *testing.T) {
	addrs := []*net.TCPAddr{
		{IP: net.IPv4(127, 0, 0, 1), Port: 80}, {IP: net.IPv4(127, 9, 8, 7), Port: 1}, {IP: net.IPv6loopback, Port: 443},
		{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 8}, {IP: net.IPv4(10, 0, 0, 1), Port: 80}, {IP: net.ParseIP("fe80::1"), Port: 80, Zone: "eth0"},
		{IP: net.IPv4zero, Port: 80}, {IP: net.IPv6unspecified, Port: 80}, {IP: net.ParseIP("::2"), Port: 80}, {Port: 80},
	}
	for i := range 256 {
		addrs = append(addrs, &net.TCPAddr{IP: net.IPv4(byte(i), byte(i*7), 0, 1), Port: i})
	}
	for _, a := range addrs {
		if got, want := loopbackAddr(a), loopback(a.String()); got != want {
			t.Errorf("loopbackAddr(%v) = %v; loopback(%q) = %v", a, got, a.String(), want)
		}
	}
	if !loopbackAddr(&net.UnixAddr{Name: "localhost", Net: "unix"}) {
		t.Error("a non-TCP address is read from its string")
	}
}

// TestPostParsedOnce: a POST's body is read once however many handlers
// ask (the router, statelessCancels, the fast path), also after it is set
// again as the same bytes, and the params of a plain call come with it.
func TestPostParsedOnce(t *testing.T) {
	body := []byte(scanSeeds[0])
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	setPostBody(r, body)
	first, _, _ := postParse(r, body)
	again, p, plain := postParse(r, body)
	if len(first) != 1 || &again[0] != &first[0] || !plain || p.Name != "srv__echo" {
		t.Fatalf("postParse read the body again or lost its call: %v %v %+v %v", first, again, p, plain)
	}
	setPostBody(r, body)
	if kept, p, plain := postParse(r, body); &kept[0] != &first[0] || !plain || p.Name != "srv__echo" {
		t.Fatalf("the same body set again was read again: %v %+v %v", kept, p, plain)
	}
	if _, _, plain := postParse(r, []byte(scanSeeds[4])); plain {
		t.Fatal("another body than r's took r's reading")
	}
}
