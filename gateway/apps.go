package gateway

import (
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// MCP Apps through the gateway. Two servers' Apps often share a ui:// URI
// (the ext-apps examples do), and the gateway serves every server's
// resources side by side, so a server's ui:// resources are served under
// a URI that names the server (AppURI), and its tools' _meta.ui links name
// that same URI: a client reads what a tool links to and gets the server's
// HTML, MIME type and _meta, untouched. Other resources keep their URIs.

// AppURI is the URI under which the gateway serves the ui:// resource uri
// of server: ui://<server>/<the rest of uri>. Other URIs are returned as
// they are. Server names ([A-Za-z0-9_.-]{1,64}) are valid URI host names.
func AppURI(server, uri string) string {
	if !host.IsUIResourceURI(uri) {
		return uri
	}
	return "ui://" + server + "/" + uri[len("ui://"):]
}

// toolAppMeta is the _meta a client sees for a tool of server: its MCP
// Apps keys (_meta.ui, the legacy "ui/resourceUri"), with the links naming
// the resource as the gateway serves it; nil for a tool without a UI.
// Other _meta keys are not served.
func toolAppMeta(server string, m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	if ui, ok := m["ui"].(map[string]any); ok {
		cp := maps.Clone(ui)
		if u, ok := cp["resourceUri"].(string); ok {
			cp["resourceUri"] = AppURI(server, u)
		}
		out = mcp.Meta{"ui": cp}
	}
	if u, ok := m[host.LegacyUIResourceKey].(string); ok {
		if out == nil {
			out = mcp.Meta{}
		}
		out[host.LegacyUIResourceKey] = AppURI(server, u)
	}
	return out
}

// appResult passes what an App reads of its tool's result — the
// structured content and the result's _meta — through to the client,
// beside the envelope the model reads in content. Only for tools that
// link a UI: for the others, the envelope is the whole result.
func appResult(out, res *mcp.CallToolResult) {
	out.StructuredContent = res.StructuredContent
	out.Meta = res.Meta
}

// servedContents names the contents of a read of an App resource by the
// URI the client asked for, as it was read from the server as upstream.
func servedContents(res *mcp.ReadResourceResult, upstream, served string) {
	if res == nil || upstream == served {
		return
	}
	for _, c := range res.Contents {
		if c != nil && c.URI == upstream {
			c.URI = served
		}
	}
}
