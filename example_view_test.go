package switchboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

// A main agent and a sub-agent over one set of servers: the sub-agent's
// view shows its profile's tools only, and its calls reach the process
// the main agent's do (no second copy starts).
func ExampleSwitchboard_View() {
	opts, cleanup := world()
	defer cleanup()
	opts.Settings = config.Settings{
		"permissions": map[string]any{"allow": []any{"mcp__demo__echo", "mcp__demo__add"}},
		"profiles": map[string]any{
			// The sub-agent sees the demo server's echo and nothing else.
			"sub-agent": map[string]any{"servers": []any{"demo"}, "enabledTools": []any{"echo"}},
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts) // the main agent: every server
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()
	sub, err := sb.View("sub-agent")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sub.Close() // leaves the servers running for sb

	tools, _ := sub.Tools(ctx, shape.Anthropic)
	for _, raw := range tools {
		var t struct{ Name string }
		json.Unmarshal(raw, &t)
		fmt.Println(t.Name)
	}
	_, err = sub.Call(ctx, "mcp__demo__add", map[string]any{"a": 2, "b": 3})
	fmt.Println(err)
	// Output:
	// mcp__demo__echo
	// tool "add" of server "demo" is hidden: not in enabledTools ["echo"] in profile "sub-agent" (--settings:1:75)
}
