package gateway_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// A program that an MCP client starts serves the gateway on its stdin and
// stdout: gateway.Stdio(os.Stdin, os.Stdout). Here two pipes stand in for
// them, and the client speaks through the other ends.
func ExampleStdio() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, closeSB := openSwitchboard([]config.ResolvedServer{stdio("demo", "echo")}, nil)
	defer closeSB()
	g := gateway.New(sb, nil)
	defer g.Close()
	sb.Ready(ctx)
	g.Sync(ctx)

	stdinR, stdinW := io.Pipe()   // the gateway's stdin: the client writes it
	stdoutR, stdoutW := io.Pipe() // the gateway's stdout: the client reads it
	t, restore := gateway.Stdio(stdinR, stdoutW)
	served := make(chan error, 1)
	go func() { served <- g.Run(ctx, t); restore() }()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	cs.Close() // closes stdin: Run returns
	fmt.Println("served:", <-served)
	// Output:
	// <mcp_response server="demo" tool="echo" trust="untrusted">
	// hello
	// </mcp_response>
	// served: <nil>
}
