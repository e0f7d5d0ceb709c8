package gateway

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzDeclaresElicitation: whenever declaresElicitation says a client
// declared no elicitation — so that its 2026-07-28 call runs on its
// request, where no question can reach it — the SDK reads no elicitation
// in the same request either, whatever capabilities object was sent. The
// check reads the decoded _meta map; the SDK encodes and decodes it again.
func FuzzDeclaresElicitation(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"elicitation":{}}`,
		`{"Elicitation":{}}`,
		`{"ELICITATION":{"form":{}}}`,
		`{"elicitation":null}`,
		`{"roots":{"listChanged":"yes"}}`,
		`{"roots":{"listChanged":true},"sampling":{}}`,
		`{"elicitation":{"url":{}},"elicitation":null}`,
		`[]`,
		`"text"`,
		`null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, caps string) {
		var v any
		if json.Unmarshal([]byte(caps), &v) != nil {
			return
		}
		// As a request's _meta arrives: the SDK decodes params into maps.
		params := &mcp.CallToolParamsRaw{Name: "x", Meta: mcp.Meta{metaClientCapabilities: v}}
		req := &mcp.CallToolRequest{Params: params}
		if declaresElicitation(req) {
			return // the call takes the worker: always right
		}
		if c := req.ClientCapabilities(); c != nil && c.Elicitation != nil {
			t.Fatalf("capabilities %s: the SDK reads elicitation %+v, the check says none", caps, c.Elicitation)
		}
	})
}

// The check answers as the SDK reads the same requests, without its
// decoding where the map is plain.
func TestDeclaresElicitation(t *testing.T) {
	for _, c := range []struct {
		caps any
		want bool
	}{
		{map[string]any{}, false},
		{map[string]any{"sampling": map[string]any{}}, false},
		{map[string]any{"elicitation": map[string]any{}}, true},
		{map[string]any{"Elicitation": map[string]any{"form": map[string]any{}}}, true},
		{&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, true}, // typed, in-process
		{&mcp.ClientCapabilities{}, false},
		{nil, false},
	} {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x", Meta: mcp.Meta{metaClientCapabilities: c.caps}}}
		if got := declaresElicitation(req); got != c.want {
			t.Errorf("capabilities %#v: declaresElicitation %v, want %v", c.caps, got, c.want)
		}
	}
}
