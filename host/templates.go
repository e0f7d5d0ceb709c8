package host

import (
	"context"
	"errors"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourceTemplate is one resource template (resources/templates/list) of
// one server: an RFC 6570 URI template from which the server builds the
// URIs of resources it does not list one by one. Read such a URI with
// ReadResource, naming the server.
type ResourceTemplate struct {
	Server   string
	Template *mcp.ResourceTemplate
}

// ResourceTemplates returns the resource templates of every connected
// server, sorted by server, then URI template (see Tools for the waiting
// rule). They are cached per server like its resources and invalidated with
// them: by the TTL, Refresh, a reconnect and
// notifications/resources/list_changed, which in MCP covers templates too.
// A server that offers resources but does not implement
// resources/templates/list (method not found) has no templates; that is
// not a warning. Their listings are cleaned as Resources' are.
func (h *Host) ResourceTemplates(ctx context.Context) ([]ResourceTemplate, []string, error) {
	out, warnings, err := gather(ctx, h, func(s *server) *listCache[*mcp.ResourceTemplate] { return s.templates },
		func(caps *mcp.ServerCapabilities) bool { return caps.Resources != nil },
		listTemplates,
		func(t *mcp.ResourceTemplate) string { return t.URITemplate },
		func(server string, t *mcp.ResourceTemplate) ResourceTemplate {
			return ResourceTemplate{Server: server, Template: t}
		}, nil)
	out, hidden := withoutSecretNamed(out, func(t ResourceTemplate) string { return t.Server },
		func(t ResourceTemplate) bool { return t.Template != nil && h.holdsSecret(t.Template.URITemplate) }, "resource template")
	return h.cleanTemplates(out), sortedWarnings(warnings, hidden), err // listings.go
}

// listTemplates lists a session's templates; a server without the method
// (templates are optional even for servers with resources) yields none.
func listTemplates(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[*mcp.ResourceTemplate, error] {
	return func(yield func(*mcp.ResourceTemplate, error) bool) {
		for t, err := range cs.ResourceTemplates(ctx, nil) {
			var rpcErr *jsonrpc.Error
			if err != nil && errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeMethodNotFound {
				return
			}
			if !yield(t, err) {
				return
			}
		}
	}
}
