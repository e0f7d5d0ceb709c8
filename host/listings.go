package host

import (
	"strings"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// Resource listings are what a model reads about resources: a gateway's
// client lists them to its model (a tool that lists resources), and an
// agent reads `switchboard resources --json`. Their words — a name, a
// title, a description, a MIME type — are the server's as a tool's are,
// so they are cleaned and capped as a tool's (toolsurface.CleanResource)
// and the secret values Switchboard gave servers are replaced. A
// resource's URI is not changed (a read sends it back; one that holds a
// secret is not served: secretnames.go), and neither is anything a read
// returns: contents are data, passed byte for byte.

// cleanResources cleans the listings of resources in place.
func (h *Host) cleanResources(list []Resource) []Resource {
	known := 0
	for i, r := range list {
		c, f := toolsurface.CleanResource(r.Resource)
		h.logListingFindings(r.Server, r.Resource.URI, f)
		c, _ = toolsurface.MapResourceText(c, h.replaceKnown(&known))
		if meta, icons, ok := h.knownExtras(c.Meta, c.Icons, &known); ok {
			cc := *c
			cc.Meta, cc.Icons = meta, icons
			c = &cc
		}
		list[i].Resource = c
	}
	if known > 0 {
		h.log.Warn("a resource listing held a secret value Switchboard gave a server; it was replaced")
	}
	return list
}

// cleanTemplates cleans the listings of resource templates in place.
func (h *Host) cleanTemplates(list []ResourceTemplate) []ResourceTemplate {
	known := 0
	for i, t := range list {
		c, f := toolsurface.CleanResourceTemplate(t.Template)
		h.logListingFindings(t.Server, t.Template.URITemplate, f)
		c, _ = toolsurface.MapResourceTemplateText(c, h.replaceKnown(&known))
		if meta, icons, ok := h.knownExtras(c.Meta, c.Icons, &known); ok {
			cc := *c
			cc.Meta, cc.Icons = meta, icons
			c = &cc
		}
		list[i].Template = c
	}
	if known > 0 {
		h.log.Warn("a resource template listing held a secret value Switchboard gave a server; it was replaced")
	}
	return list
}

func (h *Host) logListingFindings(server, uri string, f []toolsurface.TextFinding) {
	if len(f) == 0 {
		return
	}
	kinds := make([]string, len(f))
	for i, x := range f {
		kinds[i] = x.String()
	}
	h.log.Info("deceptive or long text in a resource listing", "server", server, "uri", uri, "findings", strings.Join(kinds, "; "))
}
