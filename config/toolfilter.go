package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// ToolLayer is one place that filters a server's tools: "enabledTools"
// (when not empty, only the tools matching one of its globs are shown) and
// "disabledTools" (the tools matching one of its globs are hidden; it wins
// over enabledTools). Where says which layer and file, for messages.
type ToolLayer struct {
	Where    string   `json:"where"`
	Enabled  []string `json:"enabledTools,omitempty"`
	Disabled []string `json:"disabledTools,omitempty"`
	// Scope is "local" or "user" for a layer of the user's own file
	// ("toolFilters" under the workspace's "projects" entry, or at its
	// top), the layers `switchboard mcp tools enable|disable [--scope]`
	// edit; "" for the others.
	Scope string `json:"scope,omitempty"`
}

// ToolFilter is every layer that filters one server's tools, in the order
// they are reported: the definition's own fields, then the managed file's,
// the user's local layer for the workspace and the repository's workspace
// file (each under "toolFilters" → the server's name). Every layer can only
// hide: a tool is shown when each layer lets it through, so a repository's
// workspace file can narrow what the model sees but never bring back a
// tool the user or an administrator hid.
type ToolFilter []ToolLayer

// Hidden reports whether the tool named tool is hidden, and why: the
// layer and the glob (or the enabledTools list it is not on). Safe for
// concurrent use; the zero ToolFilter hides nothing.
func (f ToolFilter) Hidden(tool string) (bool, string) {
	l, glob := f.HiddenBy(tool)
	switch {
	case l == nil:
		return false, ""
	case glob != "":
		return true, fmt.Sprintf("disabledTools %q in %s", glob, l.Where)
	}
	return true, fmt.Sprintf("not in enabledTools %s in %s", quoteGlobs(l.Enabled), l.Where)
}

// HiddenBy returns the first layer that hides the tool named tool, and the
// disabledTools glob that does ("" when the layer's enabledTools leaves it
// out); nil when no layer hides it. Safe for concurrent use.
func (f ToolFilter) HiddenBy(tool string) (layer *ToolLayer, glob string) {
	for i := range f {
		l := &f[i]
		for _, g := range l.Disabled {
			if GlobMatch(g, tool) {
				return l, g
			}
		}
		if len(l.Enabled) > 0 && !slices.ContainsFunc(l.Enabled, func(g string) bool { return GlobMatch(g, tool) }) {
			return l, ""
		}
	}
	return nil, ""
}

// IsZero reports whether f filters nothing.
func (f ToolFilter) IsZero() bool {
	for _, l := range f {
		if len(l.Enabled) > 0 || len(l.Disabled) > 0 {
			return false
		}
	}
	return true
}

func quoteGlobs(gs []string) string {
	q := make([]string, len(gs))
	for i, g := range gs {
		q[i] = fmt.Sprintf("%q", g)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// GlobMatch reports whether name matches the glob g, in which '*' stands
// for any run of characters (none included) and every other character for
// itself. Matching is exact otherwise: tool names are case-sensitive.
func GlobMatch(g, name string) bool {
	// The classic two-pointer match with backtracking to the last '*'.
	gi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(name) {
		switch {
		case gi < len(g) && g[gi] == '*':
			star, mark = gi, ni
			gi++
		case gi < len(g) && g[gi] == name[ni]:
			gi++
			ni++
		case star >= 0:
			gi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for gi < len(g) && g[gi] == '*' {
		gi++
	}
	return gi == len(g)
}

// globList reads an array of tool-name globs.
func (d *jsoncDoc) globList(v *hujson.Value, server, key string, diags *[]Diagnostic) []string {
	list := d.stringArray(v, server, key, diags)
	out := list[:0]
	for _, g := range list {
		if g == "" {
			*diags = append(*diags, Diagnostic{
				Severity: SeverityWarning, Position: d.pos(v.StartOffset), Server: server, Field: key,
				Message: "an empty glob matches no tool; it is ignored", Fix: `write a tool name, or a glob such as "delete_*"`,
			})
			continue
		}
		out = append(out, g)
	}
	return out
}

// toolFilters reads a "toolFilters" object of obj: server name →
// {"enabledTools": […], "disabledTools": […]}. where names the layer.
func (l *loader) toolFilters(doc *jsoncDoc, obj *hujson.Object, where, scope string) {
	m := lookupMember(obj, "toolFilters")
	if m == nil || isNull(&m.Value) {
		return
	}
	servers, ok := m.Value.Value.(*hujson.Object)
	if !ok {
		l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
			Severity: SeverityError, Position: doc.pos(m.Value.StartOffset), Field: "toolFilters",
			Message: "must be an object keyed by server name, not " + kindName(&m.Value),
			Fix:     `write "toolFilters": { "github": { "disabledTools": ["delete_*"] } }`,
		})
		return
	}
	for i := range servers.Members {
		sm := &servers.Members[i]
		name := memberName(sm)
		fo, ok := sm.Value.Value.(*hujson.Object)
		if !ok {
			l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
				Severity: SeverityError, Position: doc.pos(sm.Value.StartOffset), Server: name, Field: "toolFilters",
				Message: "must be an object, not " + kindName(&sm.Value),
				Fix:     `write { "enabledTools": […], "disabledTools": […] }`,
			})
			continue
		}
		layer := ToolLayer{Where: where, Scope: scope}
		for j := range fo.Members {
			fm := &fo.Members[j]
			switch key := memberName(fm); key {
			case "enabledTools":
				layer.Enabled = doc.globList(&fm.Value, name, key, &l.res.Diagnostics)
			case "disabledTools":
				layer.Disabled = doc.globList(&fm.Value, name, key, &l.res.Diagnostics)
			default:
				l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
					Severity: SeverityWarning, Position: doc.pos(fm.Name.StartOffset), Server: name, Field: "toolFilters." + key,
					Message: "unknown field; it is ignored", Fix: `use "enabledTools" or "disabledTools"`,
				})
			}
		}
		if l.filters == nil {
			l.filters = map[string]ToolFilter{}
		}
		l.filters[name] = append(l.filters[name], layer)
	}
}

// serverFilter is the ToolFilter of a resolved server: its definition's
// own fields first, then the layers read from files.
func (l *loader) serverFilter(rs *ResolvedServer, label string) ToolFilter {
	var f ToolFilter
	if w := rs.Written; len(w.EnabledTools) > 0 || len(w.DisabledTools) > 0 {
		f = append(f, ToolLayer{Where: label, Enabled: w.EnabledTools, Disabled: w.DisabledTools})
	}
	return append(f, l.filters[rs.Name]...)
}
