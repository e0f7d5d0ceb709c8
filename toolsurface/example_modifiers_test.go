package toolsurface_test

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func ExampleParseToolModifiers() {
	m, err := toolsurface.ParseToolModifiers("default,Defer(mcp__github__*),NoDefer(mcp__github__get_me)")
	if err != nil {
		panic(err)
	}
	for _, tool := range []string{"create_issue", "get_me"} {
		deferred, _ := m.Decide("github", tool)
		fmt.Println(tool, "deferred:", deferred)
	}
	_, err = toolsurface.ParseToolModifiers("Defer(mcp__git*)")
	fmt.Println(err)
	// Output:
	// create_issue deferred: true
	// get_me deferred: false
	// --tools: Defer: pattern "mcp__git*": * may only replace a whole last segment, as in mcp__* or mcp__<server>__*
}

func ExampleSlashCommand() {
	fmt.Println(toolsurface.SlashCommand("github", "review pr"))
	server, prompt, _ := toolsurface.ParseSlashCommand("/github:review_pr")
	fmt.Println(server, prompt)
	server, uri, _ := toolsurface.ParseResourceRef("@docs:file:///README.md")
	fmt.Println(server, uri)
	// Output:
	// /github:review_pr
	// github review_pr
	// docs file:///README.md
}
