package testserver

import (
	"context"
	"flag"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LongToolNames are the tools of the longnames server: names that
// overflow 64 characters once a client and a gateway have put their
// prefixes before them (issue 16), two that share a long front, one that
// needs sanitizing, and one of 120 characters.
var LongToolNames = []string{
	"trigger-long-running-operation",
	"get_repository_branch_protection_required_status_checks_contexts",
	"get_repository_branch_protection_required_status_checks_contexts_v2",
	"search.issues.and.pull.requests.by.label",
	strings.Repeat("very_long_tool_name_", 6),
	"echo",
}

// The longnames server serves LongToolNames; each answers "<name>: <text>".
func init() {
	register("longnames", serverDef{
		doc:       "tools with long names (LongToolNames, or -names), each an echo answering \"<name>: <text>\"",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			names := fs.String("names", "", "serve these tools (comma-separated) instead of LongToolNames")
			p.build = func() *mcp.Server {
				s := mcp.NewServer(implementation("longnames"), nil)
				tools := LongToolNames
				if *names != "" {
					tools = strings.Split(*names, ",")
				}
				for _, n := range tools {
					mcp.AddTool(s, &mcp.Tool{Name: n, Description: "An echo with a long name; its answer starts with that name."},
						func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
							return text(n + ": " + in.Text), nil, nil
						})
				}
				return s
			}
			return p.buildAndServe
		},
	})
}
