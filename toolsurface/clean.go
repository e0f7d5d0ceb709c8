package toolsurface

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CleanTool returns t as a model should read it (see CleanText): its
// title, description, annotations' title and every string of its input
// schema, keys included, cleaned. The findings name their field
// ("description", "inputSchema.properties.q.description"). When nothing
// is found t itself is returned; otherwise a copy, and t is not modified.
func CleanTool(t *mcp.Tool) (*mcp.Tool, []TextFinding) {
	if t == nil {
		return nil, nil
	}
	var all []TextFinding
	title, f := CleanText(t.Title)
	all = mergeFindings(all, "title", f)
	desc, f := CleanText(t.Description)
	all = mergeFindings(all, "description", f)
	var annTitle string
	if t.Annotations != nil {
		annTitle, f = CleanText(t.Annotations.Title)
		all = mergeFindings(all, "annotations.title", f)
	}
	schema, changed, f := cleanValue(t.InputSchema, "inputSchema")
	all = append(all, f...)
	if len(all) == 0 {
		return t, nil
	}
	c := *t
	c.Title, c.Description = title, desc
	if t.Annotations != nil {
		a := *t.Annotations
		a.Title = annTitle
		c.Annotations = &a
	}
	if changed {
		c.InputSchema = schema
	}
	return &c, all
}

// CleanPrompt returns p with its title, description and its arguments'
// titles and descriptions cleaned (CleanText); p itself when nothing is
// found.
func CleanPrompt(p *mcp.Prompt) (*mcp.Prompt, []TextFinding) {
	if p == nil {
		return nil, nil
	}
	var all []TextFinding
	title, f := CleanText(p.Title)
	all = mergeFindings(all, "title", f)
	desc, f := CleanText(p.Description)
	all = mergeFindings(all, "description", f)
	args := p.Arguments
	for i, a := range p.Arguments {
		if a == nil {
			continue
		}
		at, f1 := CleanText(a.Title)
		ad, f2 := CleanText(a.Description)
		if len(f1)+len(f2) == 0 {
			continue
		}
		field := "arguments." + a.Name
		all = mergeFindings(mergeFindings(all, field+".title", f1), field+".description", f2)
		if &args[0] == &p.Arguments[0] {
			args = append([]*mcp.PromptArgument(nil), p.Arguments...)
		}
		ca := *a
		ca.Title, ca.Description = at, ad
		args[i] = &ca
	}
	if len(all) == 0 {
		return p, nil
	}
	c := *p
	c.Title, c.Description, c.Arguments = title, desc, args
	return &c, all
}

// CleanPromptResult returns a rendered prompt with its description and
// the text of its messages cleaned (CleanText); r itself when nothing is
// found.
func CleanPromptResult(r *mcp.GetPromptResult) (*mcp.GetPromptResult, []TextFinding) {
	if r == nil {
		return nil, nil
	}
	var all []TextFinding
	desc, f := CleanText(r.Description)
	all = mergeFindings(all, "description", f)
	msgs := r.Messages
	for i, m := range r.Messages {
		if m == nil {
			continue
		}
		content, f := cleanContent(m.Content, "messages["+strconv.Itoa(i)+"]")
		if len(f) == 0 {
			continue
		}
		all = append(all, f...)
		if &msgs[0] == &r.Messages[0] {
			msgs = append([]*mcp.PromptMessage(nil), r.Messages...)
		}
		cm := *m
		cm.Content = content
		msgs[i] = &cm
	}
	if len(all) == 0 {
		return r, nil
	}
	c := *r
	c.Description, c.Messages = desc, msgs
	return &c, all
}

// CleanResult returns a tool result with the text of its content blocks
// (text, an embedded resource's text, a resource link's title and
// description), its structured content and its _meta cleaned
// (CleanText), every finding in field "result" (one per kind). An
// imitation of the envelope tag is defanged as Wrap would. r itself is
// returned when nothing is found.
func CleanResult(r *mcp.CallToolResult) (*mcp.CallToolResult, []TextFinding) {
	if r == nil {
		return nil, nil
	}
	var all []TextFinding
	content := r.Content
	for i, c := range r.Content {
		cc, f := cleanContent(c, "result")
		if len(f) == 0 {
			continue
		}
		all = append(all, f...)
		if &content[0] == &r.Content[0] {
			content = append([]mcp.Content(nil), r.Content...)
		}
		content[i] = cc
	}
	sc, scChanged, f := cleanValue(r.StructuredContent, "result")
	all = append(all, f...)
	meta, metaChanged, f := cleanValue(map[string]any(r.Meta), "result")
	all = append(all, f...)
	if len(all) == 0 {
		return r, nil
	}
	for i := range all {
		all[i].Field = "result" // a result is one text to the model
	}
	c := *r
	c.Content = content
	if scChanged {
		c.StructuredContent = sc
	}
	if m, ok := meta.(map[string]any); ok && metaChanged {
		c.Meta = m
	}
	return &c, mergeKinds(all)
}

// cleanContent cleans one content block; c itself when nothing is found.
func cleanContent(c mcp.Content, field string) (mcp.Content, []TextFinding) {
	switch c := c.(type) {
	case *mcp.TextContent:
		if c == nil {
			return c, nil
		}
		t, f := CleanText(c.Text)
		if f == nil {
			return c, nil
		}
		cc := *c
		cc.Text = t
		return &cc, mergeFindings(nil, field, f)
	case *mcp.EmbeddedResource:
		if c == nil || c.Resource == nil {
			return c, nil
		}
		t, f := CleanText(c.Resource.Text)
		if f == nil {
			return c, nil
		}
		res := *c.Resource
		res.Text = t
		cc := *c
		cc.Resource = &res
		return &cc, mergeFindings(nil, field, f)
	case *mcp.ResourceLink:
		if c == nil {
			return c, nil
		}
		t, f1 := CleanText(c.Title)
		d, f2 := CleanText(c.Description)
		if len(f1)+len(f2) == 0 {
			return c, nil
		}
		cc := *c
		cc.Title, cc.Description = t, d
		return &cc, mergeFindings(mergeFindings(nil, field, f1), field, f2)
	}
	return c, nil
}

// cleanValue cleans every string of a decoded JSON value, map keys
// included, and reports whether anything changed; v is never modified.
// A value that is not made of maps, slices and scalars (a struct, a
// json.RawMessage) is cleaned through its JSON encoding.
func cleanValue(v any, field string) (any, bool, []TextFinding) {
	switch x := v.(type) {
	case nil, bool, float64, json.Number, int, int64:
		return v, false, nil
	case string:
		s, f := CleanText(x)
		return s, f != nil, mergeFindings(nil, field, f)
	case map[string]any:
		var all []TextFinding
		var out map[string]any
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // findings in a stable order
		for _, k := range keys {
			ck, fk := CleanText(k)
			cv, changed, fv := cleanValue(x[k], field+"."+ck)
			all = append(mergeFindings(all, field+"."+ck, fk), fv...)
			if fk == nil && !changed {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(x))
				for k2, v2 := range x {
					out[k2] = v2
				}
			}
			delete(out, k)
			out[ck] = cv
		}
		if out == nil {
			return v, false, all
		}
		return out, true, all
	case []any:
		var all []TextFinding
		var out []any
		for i, e := range x {
			ce, changed, f := cleanValue(e, field+"["+strconv.Itoa(i)+"]")
			all = append(all, f...)
			if !changed {
				continue
			}
			if out == nil {
				out = append([]any(nil), x...)
			}
			out[i] = ce
		}
		if out == nil {
			return v, false, all
		}
		return out, true, all
	}
	b, err := json.Marshal(v)
	if err != nil || firstSuspect(string(b)) < 0 {
		return v, false, nil
	}
	var decoded any
	if json.Unmarshal(b, &decoded) != nil {
		return v, false, nil
	}
	out, changed, f := cleanValue(decoded, field)
	if !changed {
		return v, false, f
	}
	return out, true, f
}

// mergeKinds folds findings of one field and kind into one, adding their
// counts: a result's blocks are one "result" to report.
func mergeKinds(fs []TextFinding) []TextFinding {
	type key struct {
		field string
		kind  TextKind
	}
	idx := map[key]int{}
	var out []TextFinding
	for _, f := range fs {
		k := key{f.Field, f.Kind}
		if i, ok := idx[k]; ok {
			out[i].Count += f.Count
			if out[i].Hidden == "" {
				out[i].Hidden = f.Hidden
			}
			continue
		}
		idx[k] = len(out)
		out = append(out, f)
	}
	return out
}
