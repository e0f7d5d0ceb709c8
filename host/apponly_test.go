package host_test

import (
	"testing"
	"time"
)

// An MCP App's own tool (_meta.ui.visibility ["app"]: the App's Buy
// button, which a person clicks) is neither listed for the model nor
// callable by it: Switchboard renders no App, so nobody else may call it.
// Before, it was served like any tool, and a model could buy without the
// click the server required.
func TestAppOnlyToolNotTheModels(t *testing.T) {
	h := newHost(t, cfgOf(stdio("shop", "apps")), nil)
	ctx := ctxFor(t, 20*time.Second)
	tl, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tl.Tools {
		names[tool.Name] = true
	}
	if !names["mcp__shop__show"] || !names["mcp__shop__bought"] {
		t.Fatalf("the shop's model tools are not listed (the test proves nothing then): %v", names)
	}
	if names["mcp__shop__buy"] {
		t.Errorf("the App's own tool is listed for the model: %v", names)
	}
	if res, err := h.Call(ctx, "mcp__shop__buy", map[string]any{}); err == nil {
		t.Errorf("the model called the App's own tool: %q", textOf(res))
	}
	if got := textOf(mustCall(t, h, "mcp__shop__bought", map[string]any{})); got != "bought: 0" {
		t.Errorf("the App's own tool ran: %q", got)
	}
}
