package gateway_test

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// A gateway re-serves every server of a Switchboard as one MCP server; here a
// client reaches it over an in-memory transport and calls a tool of the
// upstream server "demo" by its namespaced name.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The servers a person configured, with the front door's safety; here
	// one, with no rules (see openSwitchboard).
	sb, closeSB := openSwitchboard([]config.ResolvedServer{stdio("demo", "echo")}, nil)
	defer closeSB()
	g := gateway.New(sb, nil) // it follows sb's servers
	defer g.Close()
	sb.Ready(ctx)
	g.Sync(ctx)

	// Any transport: stdio, or here one in memory. (Over HTTP, serve
	// g.Handler instead.)
	ct, st := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- g.Run(ctx, st) }()
	defer func() { <-served }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// <mcp_response server="demo" tool="echo" trust="untrusted">
	// hello
	// </mcp_response>
}
