package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve relays a call's arguments undecoded unless a rule could read them
// (host.Options.LazyPermitArgs): an argument deny rule must still refuse
// the call it names, whatever the spelling of the JSON, and let the others
// run.
func TestGatewayArgumentRuleStillDecides(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	writeJSON(t, filepath.Join(w.sbHome, "settings.json"), map[string]any{"permissions": map[string]any{
		"allow": []string{"mcp__alpha"},
		"deny":  []string{`mcp__alpha__echo(text:"secret*")`},
	}})
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--token-file", tokenFileFor(t, w))
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: bearerTransport{token: "scale-token"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "args"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if txt, isErr := callText(t, ctx, cs, "alpha__echo", map[string]any{"text": "secret-plan"}); !isErr || !strings.Contains(txt, "secret*") {
		t.Errorf("a call the argument rule denies: isError %v, %q", isErr, txt)
	}
	if txt, isErr := callText(t, ctx, cs, "alpha__echo", map[string]any{"text": "hello"}); isErr || !strings.Contains(txt, "hello") {
		t.Errorf("a call no rule denies: isError %v, %q", isErr, txt)
	}
	// A key given twice: the rule and the server must see one value.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: json.RawMessage(`{"text":"hello","text":"secret-twice"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			got.WriteString(tc.Text)
		}
	}
	if !res.IsError && strings.Contains(got.String(), "secret-twice") {
		t.Errorf("a duplicated key smuggled the denied value past the rule: %q", got.String())
	}
	// The other tools of the server, which no argument rule names, run
	// with their arguments as sent.
	if txt, isErr := callText(t, ctx, cs, "alpha__pid", nil); isErr {
		t.Errorf("alpha__pid: %q", txt)
	}
}
