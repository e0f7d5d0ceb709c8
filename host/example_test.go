package host_test

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// Start a host on one stdio server, list its tools and call one.
func Example() {
	cmd, args := testserver.Command("demo") // any MCP server command works here
	def := config.Server{Type: config.TypeStdio, Command: cmd, Args: args}
	cfg := &config.Resolved{Servers: []config.ResolvedServer{{
		Name: "demo", Written: def, Effective: def,
		Scope: config.ScopeSession, Trust: config.TrustUser, Availability: config.Available,
	}}}

	h := host.New(cfg, nil) // returns at once; the server connects in the background
	defer h.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.Call(ctx, "mcp__demo__add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(textOf(res))
	fmt.Println(h.Status()[0].State)
	// Output:
	// 2 + 3 = 5
	// connected
}

// The first line of main in a program that embeds a Host: in the copies of
// the program that the host starts as its servers' supervisor, it does the
// supervising and exits; here it returns at once.
func ExampleMaybeRunSupervisor() {
	host.MaybeRunSupervisor()
	fmt.Println("main goes on")
	// Output:
	// main goes on
}
