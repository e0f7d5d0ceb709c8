package gateway

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// capsCases are client capabilities in a request's _meta, as JSON.
var capsCases = []string{
	`{}`,
	`{"roots":{"listChanged":true},"sampling":{}}`,
	`{"elicitation":{}}`,
	`{"elicitation":{"url":{}}}`,
	`{"elicitation":null}`,
	`{"elicitation":false}`,
	`{"elicitation":"yes"}`,
	`{"Elicitation":{}}`,
	`{"ELICITATION":{}}`,
	`{"roots":"not an object"}`,
	`{"roots":"not an object","elicitation":{}}`,
	`null`,
	`"caps"`,
	`[]`,
}

// metaRequest is a call whose _meta holds the client capabilities caps (a
// JSON value, decoded as the SDK decodes params), on a session that did
// not initialize.
func metaRequest(caps []byte) (*mcp.CallToolRequest, bool) {
	var v any
	if err := json.Unmarshal(caps, &v); err != nil {
		return nil, false
	}
	params := &mcp.CallToolParamsRaw{Name: "x"}
	params.SetMeta(map[string]any{mcp.MetaKeyClientCapabilities: v})
	return &mcp.CallToolRequest{Session: &mcp.ServerSession{}, Params: params}, true
}

// declaresNoElicitation never says "none" when the SDK decodes the
// client's capabilities with elicitation: such a client must still have
// its calls held, so that it is asked.
func checkNoElicitation(t *testing.T, caps []byte) {
	req, ok := metaRequest(caps)
	if !ok {
		return
	}
	if !declaresNoElicitation(req) {
		return
	}
	if c := req.ClientCapabilities(); c != nil && c.Elicitation != nil {
		t.Errorf("capabilities %s: declaresNoElicitation, but the SDK decodes elicitation %+v", caps, c.Elicitation)
	}
	st := &askState{caps: req.ClientCapabilities}
	if st.canElicit() || st.canElicitMode("") || st.canElicitMode("url") {
		t.Errorf("capabilities %s: declaresNoElicitation, but the client can be asked", caps)
	}
}

func TestDeclaresNoElicitation(t *testing.T) {
	for _, c := range capsCases {
		checkNoElicitation(t, []byte(c))
	}
	// What the Go SDK client sends, with and without elicitation.
	for caps, want := range map[string]bool{`{}`: true, `{"roots":{"listChanged":true}}`: true, `{"elicitation":{}}`: false, `{"elicitation":{"form":{}}}`: false} {
		req, _ := metaRequest([]byte(caps))
		if got := declaresNoElicitation(req); got != want {
			t.Errorf("capabilities %s: declaresNoElicitation = %v, want %v", caps, got, want)
		}
	}
	// Nothing in _meta: not sure (the session's capabilities apply).
	if declaresNoElicitation(&mcp.CallToolRequest{Session: &mcp.ServerSession{}, Params: &mcp.CallToolParamsRaw{Name: "x"}}) {
		t.Error("declaresNoElicitation without capabilities in _meta")
	}
}

// FuzzDeclaresNoElicitation checks that declaresNoElicitation only says
// "none" when the SDK finds no elicitation either:
//
//	go test ./gateway -run '^$' -fuzz FuzzDeclaresNoElicitation -fuzztime 60s
func FuzzDeclaresNoElicitation(f *testing.F) {
	for _, c := range capsCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkNoElicitation)
}
