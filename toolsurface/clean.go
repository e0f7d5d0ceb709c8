package toolsurface

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CleanTool returns t as a model should read it (see CleanText): its
// title, description, annotations' title and every string of its input
// and output schemas, keys included, cleaned; its titles and every string
// of its schemas but names (property names, "required") capped at
// DefaultDescriptionCap, each schema's text at DefaultSchemaBudget
// (KindCut, KindOverBudget). The findings name their field
// ("description", "inputSchema.properties.q.description"). When nothing
// is found t itself is returned; otherwise a copy, and t is not modified.
// The description itself is not capped here: each consumer caps it to its
// own limit (CapDescription).
func CleanTool(t *mcp.Tool) (*mcp.Tool, []TextFinding) {
	var all []TextFinding
	c, _ := mapTool(t, func(field, s string) (string, bool) {
		cs, f := CleanText(s)
		all = mergeFindings(all, field, f)
		if field != "description" { // each consumer caps it to its own limit
			cs, all = capField(all, field, cs)
		}
		return cs, cs != s || f != nil // kept only with a finding somewhere (below)
	}, func(field string, v any) (any, bool) {
		schema, changed, f := cleanValue(v, field)
		all = append(all, f...)
		schema, cut, f := capSchema(schema, field)
		all = append(all, f...)
		return schema, changed || cut
	})
	if len(all) == 0 {
		return t, nil
	}
	return c, all
}

// MapToolText applies f to every text of a tool definition a model reads
// besides its name: the title, the description, the annotations' title and
// every string value of the input and output schemas (their keys are
// parameter names, which a call must send back, and are left alone). The
// result is t itself when f changed nothing, else a copy; t is never
// modified.
func MapToolText(t *mcp.Tool, f func(string) (string, bool)) (*mcp.Tool, bool) {
	return mapTool(t, func(_, s string) (string, bool) { return f(s) },
		func(_ string, v any) (any, bool) { return mapJSON(v, f, false) })
}

// mapTool applies text to a tool's title, description and annotations'
// title and schema to its input and output schemas (each with the
// field's name): the walk of CleanTool and MapToolText. t itself when
// nothing changed, else a copy; t is never modified.
func mapTool(t *mcp.Tool, text func(field, s string) (string, bool), schema func(field string, v any) (any, bool)) (*mcp.Tool, bool) {
	if t == nil {
		return nil, false
	}
	title, c1 := text("title", t.Title)
	desc, c2 := text("description", t.Description)
	var annTitle string
	var c3 bool
	if t.Annotations != nil {
		annTitle, c3 = text("annotations.title", t.Annotations.Title)
	}
	in, c4 := schema("inputSchema", t.InputSchema)
	var out any
	var c5 bool
	if t.OutputSchema != nil {
		out, c5 = schema("outputSchema", t.OutputSchema)
	}
	if !c1 && !c2 && !c3 && !c4 && !c5 {
		return t, false
	}
	c := *t
	c.Title, c.Description = title, desc
	if c3 {
		a := *t.Annotations
		a.Title = annTitle
		c.Annotations = &a
	}
	if c4 {
		c.InputSchema = in
	}
	if c5 {
		c.OutputSchema = out
	}
	return &c, true
}

// MapPromptText applies f to a prompt's title, description and its
// arguments' titles and descriptions (not to names, which a request must
// send back). The result is p itself when f changed nothing, else a copy;
// p is never modified.
func MapPromptText(p *mcp.Prompt, f func(string) (string, bool)) (*mcp.Prompt, bool) {
	return mapPrompt(p, func(_, s string) (string, bool) { return f(s) })
}

// mapPrompt applies f, with the field's name, to a prompt's title,
// description and its arguments' titles and descriptions: the walk of
// CleanPrompt and MapPromptText. p itself when nothing changed, else a
// copy; p is never modified.
func mapPrompt(p *mcp.Prompt, f func(field, s string) (string, bool)) (*mcp.Prompt, bool) {
	if p == nil {
		return nil, false
	}
	title, c1 := f("title", p.Title)
	desc, c2 := f("description", p.Description)
	changed := c1 || c2
	args := p.Arguments
	for i, a := range p.Arguments {
		if a == nil {
			continue
		}
		field := "arguments." + a.Name
		at, a1 := f(field+".title", a.Title)
		ad, a2 := f(field+".description", a.Description)
		if !a1 && !a2 {
			continue
		}
		changed = true
		if &args[0] == &p.Arguments[0] {
			args = append([]*mcp.PromptArgument(nil), p.Arguments...)
		}
		ca := *a
		ca.Title, ca.Description = at, ad
		args[i] = &ca
	}
	if !changed {
		return p, false
	}
	c := *p
	c.Title, c.Description, c.Arguments = title, desc, args
	return &c, true
}

// MapJSONValues applies f to every string value of a JSON value (a
// decoded one, or anything that encodes to JSON), not to object keys. The
// result is v itself when f changed nothing; v is never modified.
func MapJSONValues(v any, f func(string) (string, bool)) (any, bool) { return mapJSON(v, f, false) }

// CleanPrompt returns p with its title, description and its arguments'
// titles and descriptions cleaned (CleanText), and all of them but its
// description (which each consumer caps to its own limit) cut to
// DefaultDescriptionCap (KindCut); p itself when nothing is found.
func CleanPrompt(p *mcp.Prompt) (*mcp.Prompt, []TextFinding) {
	var all []TextFinding
	c, _ := mapPrompt(p, func(field, s string) (string, bool) {
		cs, f := CleanText(s)
		all = mergeFindings(all, field, f)
		if field != "description" {
			cs, all = capField(all, field, cs)
		}
		return cs, cs != s || f != nil
	})
	if len(all) == 0 {
		return p, nil
	}
	return c, all
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

// MapPromptResultText applies f to every text of a rendered prompt a
// model reads: its description and every string of each message's
// content block (as MapResultText). The result is r itself when f changed
// nothing, else a copy sharing what did not change; r is never modified.
func MapPromptResultText(r *mcp.GetPromptResult, f func(string) (string, bool)) (*mcp.GetPromptResult, bool) {
	if r == nil {
		return nil, false
	}
	desc, changed := r.Description, false
	if desc != "" {
		if d, ok := f(desc); ok {
			desc, changed = d, true
		}
	}
	var msgs []*mcp.PromptMessage
	for i, m := range r.Messages {
		if m == nil {
			continue
		}
		content, ok := mapContent(m.Content, f)
		if !ok {
			continue
		}
		if msgs == nil {
			msgs = slices.Clone(r.Messages)
		}
		cm := *m
		cm.Content = content
		msgs[i] = &cm
	}
	if !changed && msgs == nil {
		return r, false
	}
	c := *r
	c.Description = desc
	if msgs != nil {
		c.Messages = msgs
	}
	return &c, true
}

// CleanResult returns a tool result with every string of its content
// blocks (text, URIs, names, MIME types, icons, _meta: all but binary
// data), its structured content and its _meta cleaned (CleanText), every finding in field "result" (one per kind). An
// imitation of the envelope tag is defanged as Wrap would. r itself is
// returned when nothing is found.
func CleanResult(r *mcp.CallToolResult) (*mcp.CallToolResult, []TextFinding) {
	var all []TextFinding
	out, _ := MapResultText(r, func(s string) (string, bool) {
		c, f := CleanText(s)
		all = mergeFindings(all, "result", f) // a result is one text to the model
		return c, f != nil
	})
	return out, mergeKinds(all)
}

// MapResultText applies f to every text of a tool result a model or a
// client can read or act on: every string of each content block (a text,
// a resource link's URI, name, title, description, MIME type and icons, an
// embedded resource's URI, MIME type and text, an image's or audio's MIME
// type, each block's _meta and annotations: all but binary data), every
// string of its structured content and of its _meta, map keys included. f returns the
// new text and whether it changed it. The result is r itself when f
// changed nothing, else a copy sharing what did not change; r is never
// modified.
func MapResultText(r *mcp.CallToolResult, f func(string) (string, bool)) (*mcp.CallToolResult, bool) {
	if r == nil {
		return nil, false
	}
	content := r.Content
	for i, c := range r.Content {
		cc, changed := mapContent(c, f)
		if !changed {
			continue
		}
		if &content[0] == &r.Content[0] {
			content = append([]mcp.Content(nil), r.Content...)
		}
		content[i] = cc
	}
	sc, scChanged := MapJSON(r.StructuredContent, f)
	meta, metaChanged := MapJSON(map[string]any(r.Meta), f)
	if !scChanged && !metaChanged && (len(content) == 0 || &content[0] == &r.Content[0]) {
		return r, false
	}
	c := *r
	c.Content = content
	if scChanged {
		c.StructuredContent = sc
	}
	if m, ok := meta.(map[string]any); ok && metaChanged {
		c.Meta = m
	}
	return &c, true
}

// mapContent applies f to every string of one content block a client can
// read or act on: a text's text; an image's or audio's MIME type; a
// resource link's URI, name, title, description, MIME type and icons; an
// embedded resource's URI, MIME type and text; and each block's _meta and
// annotations. Only binary data (base64: an image's, an audio's, a blob)
// is left as it is. c is never modified: a changed block is a copy.
func mapContent(c mcp.Content, f func(string) (string, bool)) (mcp.Content, bool) {
	// Each case maps copies of the fields and makes the new block only
	// when one changed: a text block, the common case, costs no
	// allocation when nothing is found.
	m := contentMapper{f: f}
	switch c := c.(type) {
	case *mcp.TextContent:
		if c == nil {
			return c, false
		}
		text, meta, ann := c.Text, c.Meta, c.Annotations
		m.str(&text)
		m.common(&meta, &ann)
		if m.changed {
			cc := *c
			cc.Text, cc.Meta, cc.Annotations = text, meta, ann
			return &cc, true
		}
	case *mcp.ImageContent:
		if c == nil {
			return c, false
		}
		mime, meta, ann := c.MIMEType, c.Meta, c.Annotations
		m.str(&mime)
		m.common(&meta, &ann)
		if m.changed {
			cc := *c
			cc.MIMEType, cc.Meta, cc.Annotations = mime, meta, ann
			return &cc, true
		}
	case *mcp.AudioContent:
		if c == nil {
			return c, false
		}
		mime, meta, ann := c.MIMEType, c.Meta, c.Annotations
		m.str(&mime)
		m.common(&meta, &ann)
		if m.changed {
			cc := *c
			cc.MIMEType, cc.Meta, cc.Annotations = mime, meta, ann
			return &cc, true
		}
	case *mcp.EmbeddedResource:
		if c == nil {
			return c, false
		}
		res, meta, ann := c.Resource, c.Meta, c.Annotations
		if res != nil {
			r := *res
			rm := contentMapper{f: f}
			rm.str(&r.URI)
			rm.str(&r.MIMEType)
			rm.str(&r.Text)
			rm.meta(&r.Meta)
			if rm.changed {
				res, m.changed = &r, true
			}
		}
		m.common(&meta, &ann)
		if m.changed {
			cc := *c
			cc.Resource, cc.Meta, cc.Annotations = res, meta, ann
			return &cc, true
		}
	case *mcp.ResourceLink:
		if c == nil {
			return c, false
		}
		cc := *c
		m.str(&cc.URI)
		m.str(&cc.Name)
		m.str(&cc.Title)
		m.str(&cc.Description)
		m.str(&cc.MIMEType)
		m.common(&cc.Meta, &cc.Annotations)
		m.icons(&cc.Icons)
		if m.changed {
			return &cc, true
		}
	}
	return c, false
}

// contentMapper applies f to the strings of one content block's copy,
// copying what it changes below it (a map, an annotation, an icon list)
// so that the original block is never written.
type contentMapper struct {
	f       func(string) (string, bool)
	changed bool
}

func (m *contentMapper) str(s *string) {
	if *s == "" {
		return
	}
	if t, ok := m.f(*s); ok {
		*s, m.changed = t, true
	}
}

func (m *contentMapper) meta(meta *mcp.Meta) {
	if len(*meta) == 0 {
		return
	}
	if out, ok := MapJSON(map[string]any(*meta), m.f); ok {
		if mm, isMap := out.(map[string]any); isMap {
			*meta, m.changed = mcp.Meta(mm), true
		}
	}
}

func (m *contentMapper) common(meta *mcp.Meta, ann **mcp.Annotations) {
	m.meta(meta)
	if *ann == nil {
		return
	}
	am := contentMapper{f: m.f}
	last := (*ann).LastModified
	am.str(&last)
	aud, audChanged := mapStrings((*ann).Audience, m.f)
	if am.changed || audChanged {
		a := **ann
		a.LastModified, a.Audience = last, aud
		*ann, m.changed = &a, true
	}
}

func (m *contentMapper) icons(icons *[]mcp.Icon) {
	var out []mcp.Icon
	for i, ic := range *icons {
		im := contentMapper{f: m.f}
		im.str(&ic.Source)
		im.str(&ic.MIMEType)
		theme := string(ic.Theme)
		im.str(&theme)
		ic.Theme = mcp.IconTheme(theme)
		if sizes, ok := mapStrings(ic.Sizes, m.f); ok {
			ic.Sizes, im.changed = sizes, true
		}
		if !im.changed {
			continue
		}
		if out == nil {
			out = slices.Clone(*icons)
		}
		out[i] = ic
	}
	if out != nil {
		*icons, m.changed = out, true
	}
}

// mapStrings applies f to each of list, returning a changed copy and
// true, or list itself and false.
func mapStrings[S ~string](list []S, f func(string) (string, bool)) ([]S, bool) {
	var out []S
	for i, v := range list {
		if v == "" {
			continue
		}
		if t, ok := f(string(v)); ok {
			if out == nil {
				out = slices.Clone(list)
			}
			out[i] = S(t)
		}
	}
	if out == nil {
		return list, false
	}
	return out, true
}

// MapJSON applies f to every string of a decoded JSON value, object keys
// included (MapJSONValues leaves keys alone): for what nothing sends back
// by name, such as _meta or a log message's data. The result is v itself
// when f changed nothing; v is never modified. A value that is not made
// of maps, slices and scalars (a struct, a json.RawMessage) goes through
// its JSON encoding.
func MapJSON(v any, f func(string) (string, bool)) (any, bool) { return mapJSON(v, f, true) }

// mapJSON applies f to every string of a JSON value, and to its objects'
// keys when keys is set; v itself when nothing changed, never modified.
func mapJSON(v any, f func(string) (string, bool), keys bool) (any, bool) {
	switch x := v.(type) {
	case nil, bool, float64, json.Number, int, int64:
		return v, false
	case string:
		s, changed := f(x)
		if !changed {
			return v, false // v is boxed already: no allocation
		}
		return s, true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			ck, kc := k, false
			if keys {
				ck, kc = f(k)
			}
			cv, vc := mapJSON(e, f, keys)
			if !kc && !vc {
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
			return v, false
		}
		return out, true
	case []any:
		out, changed := mapElems(x, func(_ int, e any) (any, bool) { return mapJSON(e, f, keys) })
		return out, changed
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v, false
	}
	var decoded any
	if json.Unmarshal(b, &decoded) != nil {
		return v, false
	}
	if out, changed := mapJSON(decoded, f, keys); changed {
		return out, true
	}
	return v, false
}

// cleanContent cleans one content block; c itself when nothing is found.
func cleanContent(c mcp.Content, field string) (mcp.Content, []TextFinding) {
	var all []TextFinding
	out, _ := mapContent(c, func(s string) (string, bool) {
		t, f := CleanText(s)
		all = mergeFindings(all, field, f)
		return t, f != nil
	})
	return out, all
}

// cleanValue cleans every string of a decoded JSON value, map keys
// included, naming each finding by its path below field, and reports
// whether anything changed; v is never modified.
func cleanValue(v any, field string) (any, bool, []TextFinding) {
	switch x := v.(type) {
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
		out, changed := mapElems(x, func(i int, e any) (any, bool) {
			ce, changed, f := cleanValue(e, field+"["+strconv.Itoa(i)+"]")
			all = append(all, f...)
			return ce, changed
		})
		return out, changed, all
	}
	var all []TextFinding
	out, changed := MapJSON(v, func(s string) (string, bool) {
		t, f := CleanText(s)
		all = mergeFindings(all, field, f)
		return t, f != nil
	})
	return out, changed, all
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

// mapElems is a with f applied to each element (given its index), and
// whether f changed any: a is copied at the first change, never written,
// and returned as it is when nothing changed.
func mapElems(a []any, f func(i int, e any) (any, bool)) ([]any, bool) {
	var out []any
	for i, e := range a {
		ce, changed := f(i, e)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]any(nil), a...)
		}
		out[i] = ce
	}
	if out == nil {
		return a, false
	}
	return out, true
}
