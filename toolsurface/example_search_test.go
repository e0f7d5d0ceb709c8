package toolsurface_test

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func ExampleSearchIndex_Search() {
	ix := toolsurface.NewSearchIndex([]toolsurface.SearchDoc{
		{Name: "mcp__github__create_issue", Server: "github", Tool: "create_issue",
			Description: "Create a new issue in a GitHub repository.",
			Args:        []toolsurface.SearchArg{{Name: "title"}, {Name: "body"}}},
		{Name: "mcp__github__list_issues", Server: "github", Tool: "list_issues",
			Description: "List issues in a GitHub repository."},
		{Name: "mcp__fs__read_text_file", Server: "fs", Tool: "read_text_file",
			Description: "Read the complete contents of a file as text."},
	})
	for _, q := range []string{"open a new github ticket", "read file", "select:mcp__github__list_issues"} {
		hits := ix.Search(q, 1)
		fmt.Printf("%s → %s\n", q, hits[0].Name)
	}
	// Output:
	// open a new github ticket → mcp__github__create_issue
	// read file → mcp__fs__read_text_file
	// select:mcp__github__list_issues → mcp__github__list_issues
}

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
