package host_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// A hostile server's schema text is capped as its descriptions are: a
// parameter description of a megabyte (hostile-peer -fat) reaches the
// model as 2,048 characters, and a schema of many parameters each under
// that cap (-wide) as at most the schema budget; the findings say what
// was cut. Before, both reached the model whole.
func TestHostileSchemaTextCapped(t *testing.T) {
	const fat = 1 << 20
	h := newHost(t, cfgOf(stdio("peer", "hostile-peer", "-fat", "1048576", "-wide", "200")), nil)
	ctx := ctxFor(t, 20*time.Second)
	tl, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range append(tl.Tools, tl.Deferred...) { // a large tool block is deferred
		tools[tool.Name] = tool.Tool
	}
	if tools["mcp__peer__fat"] == nil || tools["mcp__peer__wide"] == nil {
		t.Fatalf("fat or wide not listed: %v %v", tools, tl.Warnings)
	}
	d := tools["mcp__peer__fat"].InputSchema.(map[string]any)["properties"].(map[string]any)["q"].(map[string]any)["description"].(string)
	if n := utf8.RuneCountInString(d); n != toolsurface.DefaultDescriptionCap || !strings.HasSuffix(d, toolsurface.Ellipsis) {
		t.Errorf("fat's parameter description reaches the model as %d characters, want %d", n, toolsurface.DefaultDescriptionCap)
	}
	wide := tools["mcp__peer__wide"]
	in, err := json.Marshal(wide.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	// 200 parameters: their names, types and the budget's ellipses
	// besides the budget's text and the values' budget (enums past it
	// are dropped whole, never cut).
	if len(in) > 2*toolsurface.DefaultSchemaBudget+toolsurface.DefaultValuesBudget+200*40 {
		t.Errorf("wide's input schema reaches the model as %d bytes", len(in))
	}
	if !strings.Contains(string(in), `"type":"string"`) || !strings.Contains(string(in), `"p0199"`) {
		t.Errorf("wide's schema lost its parameters or types: %.300s", in)
	}
	if o := wide.OutputSchema.(map[string]any)["description"].(string); utf8.RuneCountInString(o) != toolsurface.DefaultDescriptionCap {
		t.Errorf("wide's output schema description is %d characters", utf8.RuneCountInString(o))
	}
	var said []string
	for _, st := range h.Status() {
		for _, tf := range st.Findings {
			for _, f := range tf.Findings {
				said = append(said, tf.Tool+": "+f.String())
			}
		}
	}
	all := strings.Join(said, "\n")
	for _, want := range []string{
		"fat: inputSchema.properties.q.description: " + itoa(fat-toolsurface.DefaultDescriptionCap+1) + " characters cut",
		"wide: inputSchema.properties.p0000.title: 953 characters cut",
		"wide: outputSchema.description: 953 characters cut",
		"wide: inputSchema: ",
		"wide: inputSchema.properties.p0199.enum: 2053 characters dropped",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("status does not say %q; it says:\n%.2000s", want, all)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
