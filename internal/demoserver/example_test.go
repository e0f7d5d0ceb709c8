package demoserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/demoserver"
)

// The demo served in memory, called as a model would call it.
func ExampleNew() {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := demoserver.New().Connect(ctx, st, nil)
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
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "word_count", Arguments: map[string]any{"text": "one two\nthree"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: 3 words, 2 lines, 13 characters
}

// Command gives the argv that re-runs the current binary as the demo; the
// binary's main calls demoserver.MaybeRun first.
func ExampleCommand() {
	_, args, err := demoserver.Command()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(args)
	// Output: [__switchboard-demo-server]
}
