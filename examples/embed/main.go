// Command embed is an agent's MCP layer in a few lines: it opens a
// workspace with Switchboard's safety (launch trust, permission rules,
// enveloped and bounded results), prints each server's state and the tools
// a model would get, and calls one tool if asked:
//
//	go run ./examples/embed [workspace [mcp__server__tool '{"arg": 1}']]
//
// It is headless: a project server nobody approved stays held, and a call
// the rules say to ask about is denied.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

func main() {
	switchboard.MaybeRunSupervisor() // servers run supervised (and sandboxed) by a copy of this program
	ctx := context.Background()
	if len(os.Args) < 2 {
		os.Args = append(os.Args, ".") // the workspace: the current directory
	}
	sb, err := switchboard.Open(ctx, switchboard.Options{Workspace: os.Args[1]})
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	defer sb.Close()
	list, err := sb.ListTools(ctx, shape.Anthropic) // waits (5 s at most) for servers still connecting
	if err == nil {
		for _, t := range list.Tools {
			fmt.Printf("tool %s\n", t) // a provider's tool definition, as JSON
		}
		for _, w := range list.Warnings {
			fmt.Println("warning", w) // a server whose tools are not in the list (yet)
		}
	}
	for _, st := range sb.Status() {
		fmt.Printf("server %s: %s %s\n", st.Name, st.State, st.Reason)
	}
	if err == nil && len(os.Args) > 3 {
		var res *switchboard.Result // the model's arguments go as they are
		if res, err = sb.Call(ctx, os.Args[2], json.RawMessage(os.Args[3])); err == nil {
			fmt.Println("result", res.Text)
		}
	}
	if err != nil {
		fmt.Println("error:", err)
	}
}
