package testserver

import (
	"context"
	"flag"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The apps server has an MCP App (SEP-1865): "show" links the ui://
// resource ui://apps/view.html, for the model and its App alike; "buy" is
// the App's own (_meta.ui.visibility ["app"]: a button the person clicks,
// which the model must neither see nor call); "bought" says how many
// times "buy" ran.
func init() {
	register("apps", serverDef{
		doc:       "an MCP App: show (links ui://apps/view.html), buy (visibility [\"app\"]: the App's own), bought (how many buys ran)",
		inProcess: true,
		setup: func(_ *flag.FlagSet, p *proc) func(context.Context) error {
			p.build = newAppsServer
			return p.buildAndServe
		},
	})
}

func newAppsServer() *mcp.Server {
	s := mcp.NewServer(implementation("apps"), nil)
	const view = "ui://apps/view.html"
	s.AddResource(&mcp.Resource{URI: view, Name: "view", MIMEType: "text/html;profile=mcp-app"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: view, MIMEType: "text/html;profile=mcp-app",
				Text: "<!doctype html><button>Buy</button>"}}}, nil
		})
	var bought atomic.Int64
	mcp.AddTool(s, &mcp.Tool{Name: "show", Description: "Shows the shop.",
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": view}}},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text("the shop"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "buy", Description: "Buys the item (the App's Buy button).",
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": view, "visibility": []any{"app"}}}},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			bought.Add(1)
			return text("bought"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "bought", Description: "Says how many times buy ran."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("bought: %d", bought.Load())), nil, nil
		})
	return s
}
