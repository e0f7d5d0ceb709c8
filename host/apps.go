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

// AppOnly reports whether t is its App's own tool: _meta.ui.visibility
// lists who may call it ("model", "app"; both by default), and without
// "model" the tool is for the App's buttons, which a person clicks, not
// for the model to see or call (a purchase the App confirms, a refresh of
// its view). Switchboard renders no App, so such a tool is served to
// nobody: a model that could call it would do what the server meant only
// a person's click to do.
func AppOnly(t *mcp.Tool) bool {
	if t == nil {
		return false
	}
	ui, ok := t.Meta["ui"].(map[string]any)
	if !ok {
		return false
	}
	v, ok := ui["visibility"]
	if !ok || v == nil {
		return false
	}
	list, ok := v.([]any)
	if !ok {
		return true // not the array the extension defines: nobody's to call
	}
	for _, e := range list {
		if e == "model" {
			return false
		}
	}
	return true
}
