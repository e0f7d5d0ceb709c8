package toolsurface

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CleanResource returns a resource listing as a model should read it: its
// name, title, description and MIME type cleaned (CleanText) and each cut
// to DefaultDescriptionCap (KindCut), as a tool's words are. Its URI is
// left as it is — a read sends it back — and so is everything a read
// returns: a resource's contents are data. r itself when nothing is
// found; r is never modified.
func CleanResource(r *mcp.Resource) (*mcp.Resource, []TextFinding) {
	if r == nil {
		return nil, nil
	}
	c := *r
	f := cleanListing(&c.Name, &c.Title, &c.Description, &c.MIMEType)
	if len(f) == 0 {
		return r, nil
	}
	return &c, f
}

// CleanResourceTemplate is CleanResource for a resource template: its
// URI template is left as it is.
func CleanResourceTemplate(t *mcp.ResourceTemplate) (*mcp.ResourceTemplate, []TextFinding) {
	if t == nil {
		return nil, nil
	}
	c := *t
	f := cleanListing(&c.Name, &c.Title, &c.Description, &c.MIMEType)
	if len(f) == 0 {
		return t, nil
	}
	return &c, f
}

// MapResourceText applies f to a resource listing's name, title,
// description and MIME type (not its URI). The result is r itself when f
// changed nothing, else a copy; r is never modified.
func MapResourceText(r *mcp.Resource, f func(string) (string, bool)) (*mcp.Resource, bool) {
	if r == nil {
		return nil, false
	}
	c := *r
	if !mapListing(f, &c.Name, &c.Title, &c.Description, &c.MIMEType) {
		return r, false
	}
	return &c, true
}

// MapResourceTemplateText is MapResourceText for a resource template (not
// its URI template).
func MapResourceTemplateText(t *mcp.ResourceTemplate, f func(string) (string, bool)) (*mcp.ResourceTemplate, bool) {
	if t == nil {
		return nil, false
	}
	c := *t
	if !mapListing(f, &c.Name, &c.Title, &c.Description, &c.MIMEType) {
		return t, false
	}
	return &c, true
}

// cleanListing cleans and caps a listing's name, title, description and
// MIME type in place, reporting each by its field's name.
func cleanListing(name, title, desc, mime *string) []TextFinding {
	var all []TextFinding
	for _, x := range []struct {
		field string
		s     *string
	}{{"name", name}, {"title", title}, {"description", desc}, {"mimeType", mime}} {
		if *x.s == "" {
			continue
		}
		cs, f := CleanText(*x.s)
		all = mergeFindings(all, x.field, f)
		*x.s, all = capField(all, x.field, cs)
	}
	return all
}

func mapListing(f func(string) (string, bool), fields ...*string) bool {
	changed := false
	for _, s := range fields {
		if *s == "" {
			continue
		}
		if t, ok := f(*s); ok {
			*s, changed = t, true
		}
	}
	return changed
}
