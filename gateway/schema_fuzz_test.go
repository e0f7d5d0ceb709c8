package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// FuzzServeTool: whatever schema an upstream server sends, the definition
// the gateway serves is accepted by the SDK (Server.AddTool panics on a
// schema that is not an object) and its schema is an object.
func FuzzServeTool(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"type":"string"}`, `null`, `[]`, `{"properties":1}`, `{"type":["object","null"]}`, `true`} {
		f.Add(s, "desc")
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "fuzz"}, nil)
	g := &Gateway{opts: Options{DescriptionMax: DefaultDescriptionMax}}
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
	f.Fuzz(func(t *testing.T, schema, desc string) {
		var in any = json.RawMessage(schema)
		if !json.Valid([]byte(schema)) {
			in = nil
		}
		st := g.serveTool("s__t", host.Tool{Name: "mcp__s__t", Server: "s", Tool: &mcp.Tool{Name: "t", Description: desc, InputSchema: in}})
		if err := addTool(srv, st, noop); err != nil {
			t.Fatalf("schema %s: the SDK refused the served tool: %v", schema, err)
		}
		b, _ := json.Marshal(st.InputSchema)
		var m map[string]any
		if json.Unmarshal(b, &m) != nil || m["type"] != "object" {
			t.Fatalf("schema %s served as %s", schema, b)
		}
		if len([]rune(st.Description)) > DefaultDescriptionMax+64 {
			t.Fatalf("description of %d runes", len([]rune(st.Description)))
		}
	})
}
