package testserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// A server that needs no process of its own can be served in memory.
func ExampleNewServer() {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := testserver.NewServer("demo").Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roll_dice", Arguments: map[string]any{"count": 3, "seed": 7}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: rolled 3d6 (seed 7): [4 2 1] = 7
}

// Command gives the argv that re-runs the current binary as a server; the
// binary's TestMain (or main) must call testserver.MaybeRun first.
func ExampleCommand() {
	exe, args := testserver.Command("flap", "-calls", "2")
	_ = exe // os.Executable()
	fmt.Println(args)
	// Output: [__switchboard-testserver flap -calls 2]
}
