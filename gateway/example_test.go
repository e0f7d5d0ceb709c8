package gateway_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
)

// A gateway re-serves every server of a host as one MCP server; here a
// client reaches it over an in-memory transport and calls a tool of the
// upstream server "demo" by its namespaced name.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The host exists before the gateway; its events reach the gateway
	// once there is one.
	var gw atomic.Pointer[gateway.Gateway]
	h := host.New(&config.Resolved{Servers: []config.ResolvedServer{stdio("demo", "echo")}}, &host.Options{
		OnEvent: func(ev host.Event) {
			if g := gw.Load(); g != nil {
				g.HandleEvent(ev)
			}
		},
	})
	defer h.Close()
	g := gateway.New(h, nil)
	gw.Store(g)
	defer g.Close()
	h.WaitReady(ctx)
	g.Sync(ctx)

	ct, st := mcp.NewInMemoryTransports()
	ss, _ := g.Server().Connect(ctx, st, nil)
	defer ss.Close()
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
