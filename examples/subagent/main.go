// Command subagent is an agent with a sub-agent over one set of MCP
// servers: the main agent sees every server of the workspace, the
// sub-agent only a profile of the settings (docs/configuration.md,
// Profiles), and a server both see runs once. Given the mcpServers of an
// Agent Client Protocol session/new (the JSON array an editor sends), it
// also opens that session: those servers start for the session only, and
// stop when it closes.
//
//	go run ./examples/subagent PROFILE ['[{"name": "notes", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": []}]']
//
// It is headless: a project server nobody approved stays held, and the
// session's servers are trusted as the embedder's (TrustSessionServers):
// an editor's own list. An agent taking them from somewhere less trusted
// passes ApproveSessionServers and a Prompter that asks the person.
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
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: subagent PROFILE [ACP-MCPSERVERS-JSON]")
		os.Exit(2)
	}
	ctx := context.Background()
	agent, err := switchboard.Open(ctx, switchboard.Options{Workspace: "."})
	if err != nil {
		fail(err)
	}
	defer agent.Close()
	sub, err := agent.View(os.Args[1]) // an *UnknownProfileError names the profiles
	if err != nil {
		fail(err)
	}
	defer sub.Close() // the servers run on for the main agent
	show("main agent", agent)
	show("sub-agent ("+os.Args[1]+")", sub)

	if len(os.Args) > 2 {
		var servers []switchboard.SessionServer // ACP's own JSON form
		if err := json.Unmarshal([]byte(os.Args[2]), &servers); err != nil {
			fail(fmt.Errorf("mcpServers: %w", err))
		}
		sess, err := agent.OpenSession(ctx, switchboard.SessionOptions{Servers: servers, Trust: switchboard.TrustSessionServers})
		if err != nil {
			fail(err)
		}
		show("ACP session", sess)
		sess.Close() // stops the servers only it started
	}
}

// show prints the tools a model of sb gets, and the servers' states.
func show(who string, sb *switchboard.Switchboard) {
	tools, err := sb.Tools(context.Background(), shape.Anthropic) // waits for servers still connecting
	if err != nil {
		fmt.Println(who, "error:", err)
	}
	fmt.Printf("%s: %d tools\n", who, len(tools))
	for _, t := range tools {
		var d struct{ Name string }
		_ = json.Unmarshal(t, &d)
		fmt.Println("  tool", d.Name)
	}
	for _, st := range sb.Status() {
		fmt.Printf("  server %s: %s %s\n", st.Name, st.State, st.Reason)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(2)
}
