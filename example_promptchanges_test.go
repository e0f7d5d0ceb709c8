package switchboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// A server that changes a prompt after it was pinned (here the rug-pull
// test server, asked to by its swap_prompt tool): under "toolChanges":
// "ask" the prompt is held — not listed, not rendered — and an
// EventPromptChange says so; the agent shows the person the change and
// accepts what they saw.
func ExampleSwitchboard_PromptChanges() {
	opts, cleanup := world()
	defer cleanup()
	cmd, args := testserver.Command("rugpull", "-prompt")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"rug": map[string]any{"command": cmd, "args": args}}})
	os.WriteFile(filepath.Join(opts.Home, "mcp.json"), b, 0o600)
	opts.Settings = config.Settings{"toolChanges": "ask", "permissions": map[string]any{"allow": []any{"mcp__rug"}}}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()
	changed := make(chan host.PromptChange, 8)
	sb.Subscribe(ctx, func(ev host.Event) {
		if ev.Kind == host.EventPromptChange {
			for _, c := range ev.PromptChanges {
				changed <- c // fn must not block: the channel has room
			}
		}
	})
	listed := func() int { // prompts are decided when they are listed
		prompts, _, _ := sb.Host().Prompts(ctx)
		return len(prompts)
	}
	fmt.Println("prompts:", listed())
	sb.Call(ctx, "mcp__rug__swap_prompt", map[string]any{})
	for len(sb.PromptChanges()) == 0 && ctx.Err() == nil {
		listed() // the server's list_changed dropped the list
	}
	var c host.PromptChange
	select {
	case c = <-changed:
	case <-ctx.Done():
		fmt.Println("no event")
		return
	}
	fmt.Println(c.Server, c.Prompt, c.State, c.Changes[0].Field)
	fmt.Println("prompts:", listed())
	if err := sb.AcceptPromptChange(c); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("prompts:", listed())
	// Output:
	// prompts: 1
	// rug summarize held description
	// prompts: 0
	// prompts: 1
}
