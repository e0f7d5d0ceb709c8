package host

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps (SEP-1865, the extension io.modelcontextprotocol/ui): a server
// attaches an interactive UI to a tool by naming a ui:// resource in the
// tool's _meta; a client that renders Apps reads that resource (HTML of
// AppMIMEType) and shows it with the tool's result.
const (
	// UIExtension is the MCP Apps extension's identifier in capabilities.
	UIExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of an App's HTML resource.
	AppMIMEType = "text/html;profile=mcp-app"
	// LegacyUIResourceKey is the flat _meta key older Apps servers (and
	// the ext-apps SDK, for older hosts) set beside _meta.ui.resourceUri.
	LegacyUIResourceKey = "ui/resourceUri"
)

// UIResourceURI returns the ui:// resource a tool links to as its MCP App
// (_meta.ui.resourceUri, else the legacy _meta["ui/resourceUri"]), or ""
// when the tool has no UI. The URI is the server's own.
func UIResourceURI(t *mcp.Tool) string {
	if t == nil {
		return ""
	}
	if ui, ok := t.Meta["ui"].(map[string]any); ok {
		if u, ok := ui["resourceUri"].(string); ok && IsUIResourceURI(u) {
			return u
		}
	}
	if u, ok := t.Meta[LegacyUIResourceKey].(string); ok && IsUIResourceURI(u) {
		return u
	}
	return ""
}

// IsUIResourceURI reports whether uri is of the ui:// scheme (any case, as
// URI schemes are).
func IsUIResourceURI(uri string) bool {
	return len(uri) >= len("ui://") && strings.EqualFold(uri[:len("ui://")], "ui://")
}
