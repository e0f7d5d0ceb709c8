package host

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testIdentity is the identity a Go SDK client of v1.8 writes.
func testIdentity(t testing.TB) *identity {
	r := newRawCalls()
	r.noteIdentity(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"switchboard","version":"v1"},` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","other":1},"cursor":"x"}`))
	id := r.identity.Load()
	if id == nil {
		t.Fatal("no identity noted")
	}
	return id
}

// wantParams is what the SDK writes: the identity's keys under the call's
// own _meta (the call's win), a map encoded by encoding/json.
func wantParams(t testing.TB, p *rawParams, id *identity) []byte {
	merged := mcp.Meta{}
	if id != nil {
		for k, v := range id.keys {
			merged[k] = v
		}
	}
	for k, v := range p.Meta {
		merged[k] = v
	}
	q := *p
	q.Meta = merged
	if len(merged) == 0 {
		q.Meta = nil
	}
	b, err := json.Marshal(&q)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compact is b as the connection's writer sends it: compacted, <, > and
// & escaped (as the SDK's encoder writes arguments given as raw JSON).
func compact(t testing.TB, b []byte) string {
	var buf, out bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	json.HTMLEscape(&out, buf.Bytes())
	return out.String()
}

// The relay path's params are what the SDK would write, with and without
// the identity and the call's own _meta.
func TestRawParamsJSONAsSDK(t *testing.T) {
	id := testIdentity(t)
	if len(id.keys) != 3 {
		t.Fatalf("identity keys %v, want the three of SEP-2575 only", id.keys)
	}
	args := json.RawMessage(`{ "text": "a <b> & c" }`)
	for _, tc := range []struct {
		name string
		meta mcp.Meta
		id   *identity
	}{
		{"neither", nil, nil},
		{"identity only", nil, id},
		{"log level only", mcp.Meta{mcp.MetaKeyLogLevel: "info"}, nil},
		{"identity and log level", mcp.Meta{mcp.MetaKeyLogLevel: "info"}, id},
		// The identity keeps the last log level's _meta: each is still its own.
		{"the same log level again", mcp.Meta{mcp.MetaKeyLogLevel: "info"}, id},
		{"another log level", mcp.Meta{mcp.MetaKeyLogLevel: "debug"}, id},
		{"a log level that is not a string", mcp.Meta{mcp.MetaKeyLogLevel: 3}, id},
		{"the first log level again", mcp.Meta{mcp.MetaKeyLogLevel: "info"}, id},
		{"a key sorted first, HTML and non-ASCII", mcp.Meta{"a<b>": "é & \u2028", "zz": "last"}, id},
		{"the call's own protocol version wins", mcp.Meta{mcp.MetaKeyProtocolVersion: "2099-01-01"}, id},
		{"a value that is not a string", mcp.Meta{"progressToken": 7, mcp.MetaKeyLogLevel: "debug"}, id},
		{"values that are not strings, no identity", mcp.Meta{"progressToken": 7, "n": nil, "m": map[string]any{"<": true}}, nil},
		{"a nil value among the identity's keys", mcp.Meta{"a": nil}, id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &rawParams{Meta: tc.meta, Name: "echo<&>", Arguments: args, identity: tc.id}
			got, err := rawParamsJSON(p)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := compact(t, got), compact(t, wantParams(t, p, tc.id)); g != w {
				t.Errorf("params:\n got %s\nwant %s", g, w)
			}
		})
	}
}

func FuzzRawParamsMeta(f *testing.F) {
	f.Add("io.modelcontextprotocol/logLevel", "info", "k", "v")
	f.Add("io.modelcontextprotocol/clientInfo", "x", "\u2028", "<>&")
	f.Add("", "", "\xff", "\x00")
	id := testIdentity(f)
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		p := &rawParams{Meta: mcp.Meta{k1: v1, k2: v2}, Name: k1, Arguments: json.RawMessage(`{}`), identity: id}
		got, err := rawParamsJSON(p)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := compact(t, got), compact(t, wantParams(t, p, id)); g != w {
			t.Errorf("params:\n got %s\nwant %s", g, w)
		}
	})
}

// The identity kept is the last one the SDK wrote: the handshake's names
// the revision asked for, a list's after it the one agreed on.
func TestNoteIdentityKeepsTheLast(t *testing.T) {
	r := newRawCalls()
	meta := func(protocol string) json.RawMessage {
		return json.RawMessage(`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"` + protocol + `"}}`)
	}
	r.noteIdentity(json.RawMessage(`{"cursor":"x"}`))
	r.noteIdentity(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`)) // no revision
	if id := r.identity.Load(); id != nil {
		t.Fatalf("an identity from params without one: %+v", id)
	}
	r.noteIdentity(meta("2026-07-28"))
	first := r.identity.Load()
	if first == nil || first.protocol != "2026-07-28" || string(first.raw) != `{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}` {
		t.Fatalf("identity %+v", first)
	}
	r.noteIdentity(meta("2026-07-28"))
	if r.identity.Load() != first {
		t.Errorf("the same identity was replaced")
	}
	r.noteIdentity(meta("2027-01-01"))
	if id := r.identity.Load(); id == nil || id.protocol != "2027-01-01" {
		t.Errorf("identity %+v, want the last one's revision", id)
	}
}
