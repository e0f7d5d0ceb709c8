package search_test

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface/search"
)

func ExampleIndex_Search() {
	ix := search.NewIndex([]search.Doc{
		{Name: "mcp__github__create_issue", Server: "github", Tool: "create_issue",
			Description: "Create a new issue in a GitHub repository.",
			Args:        []search.Arg{{Name: "title"}, {Name: "body"}}},
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

func ExampleDocFor() {
	tool := &mcp.Tool{
		Name:        "create_issue",
		Description: "Create a new issue in a GitHub repository.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"title": map[string]any{"type": "string", "description": "The issue's title."},
			"body":  map[string]any{"type": "string"},
		}},
	}
	d := search.DocFor("mcp__github__create_issue", "github", tool)
	fmt.Println(d.Name, d.Server, d.Tool)
	for _, a := range d.Args {
		fmt.Printf("%s: %q\n", a.Name, a.Description)
	}
	fmt.Println(search.NewIndex([]search.Doc{d}).Search("+github new ticket", 0)[0].Name)
	// Output:
	// mcp__github__create_issue github create_issue
	// body: ""
	// title: "The issue's title."
	// mcp__github__create_issue
}

func ExampleTokenize() {
	fmt.Println(search.Tokenize("getHTTPServer_v2-status"))
	fmt.Println(search.Stem("creating"), search.Stem("entries"))
	// Output:
	// [get http server gethttpserver v 2 v2 status]
	// creat entry
}
