//go:build linux || darwin

package cli

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeOutlivesAClosedStderr: a client that closes its end of the
// gateway's stderr (it stopped reading the log) loses the log, not the
// gateway. Go ends a program on SIGPIPE when a write to fd 2 finds no
// reader, unless the program asked to be told of SIGPIPE; serve asks.
func TestServeOutlivesAClosedStderr(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "a")
	w.permissions(t, []string{"mcp__a", "mcp__b"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // nobody reads the gateway's stderr
	defer wr.Close()
	cmd := w.command(t, "--log-level", "info", "serve", "--stdio")
	cmd.Stderr = wr
	client := mcp.NewClient(&mcp.Implementation{Name: "sigpipe-test"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	stderr := &syncBuffer{} // stays empty: the log goes to the broken pipe
	waitServed(t, ctx, cs, stderr, "start", "a")
	// Adding a server makes the gateway write "configuration reloaded"
	// to its stderr: a write to a pipe without a reader.
	writeJSON(t, w.sbHome+"/mcp.json", echoServers("a", "b"))
	waitServed(t, ctx, cs, stderr, "after the reload", "a", "b")
	for _, name := range []string{"a__echo", "b__echo"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "still here"}})
		if err != nil {
			t.Fatalf("%s after the log's reader went: %v (the gateway ended: %v)", name, err, cmd.ProcessState)
		}
		if res.IsError {
			t.Fatalf("%s: %+v", name, res.Content)
		}
	}
}
