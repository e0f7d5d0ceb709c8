package toolsurface

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"
)

// DefaultSchemaBudget is the default limit, in characters (runes), on the
// text of one schema a model reads (a tool's input schema, its output
// schema): its descriptions, titles, defaults, examples and every other
// string but names, enum and const values and the keywords that say what
// a schema is, together. Each of them is also capped at
// DefaultDescriptionCap on its own, as a tool's description is.
const DefaultSchemaBudget = 16384

// KindCut marks text that was cut short because it was longer than its
// cap (CapDescription's, for one string of a schema) or than what was
// left of its schema's budget (DefaultSchemaBudget). CleanText never
// reports it; CleanTool does. Count is how many characters were cut.
const KindCut TextKind = "cut"

// KindOverBudget marks the strings of a schema cut because the schema's
// text as a whole was over DefaultSchemaBudget: one finding per schema,
// whose Count is how many characters were cut.
const KindOverBudget TextKind = "over-budget"

// capField cuts s, a text of field, to DefaultDescriptionCap, adding a
// KindCut finding to all when it does.
func capField(all []TextFinding, field, s string) (string, []TextFinding) {
	if len(s) <= DefaultDescriptionCap { // bytes >= runes
		return s, all
	}
	n := utf8.RuneCountInString(s)
	if n <= DefaultDescriptionCap {
		return s, all
	}
	return CapDescription(s, DefaultDescriptionCap),
		append(all, TextFinding{Kind: KindCut, Field: field, Count: n - DefaultDescriptionCap + 1, Action: KindCut.Action()})
}

// schemaNames are the keywords whose values are property names, which a
// call must send back exactly: never cut, never counted.
var schemaNames = map[string]bool{"required": true, "dependentRequired": true}

// schemaWords are the keywords whose string values say what a schema is
// rather than describe it (a type, a reference, a format, a pattern):
// capped on their own, never cut for the budget, so that a schema with
// much text is still the same schema.
var schemaWords = map[string]bool{
	"type": true, "$ref": true, "$schema": true, "$id": true, "$anchor": true,
	"$dynamicRef": true, "$dynamicAnchor": true, "format": true, "pattern": true,
	"contentEncoding": true, "contentMediaType": true,
}

// schemaData are the keywords whose values are data (JSON values, not
// schemas): every string in them is text, at any depth.
var schemaData = map[string]bool{"default": true, "examples": true}

// schemaValues are the keywords whose values are the values a call may
// send (JSON values, not schemas): each string in them is capped on its
// own, never cut for the schema's budget of prose. A value cut to "…"
// would be one the server never offered: a large enum (every time zone)
// would lose its last entries, and the model could no longer send them.
// They have a budget of their own, DefaultValuesBudget: a keyword whose
// values do not fit in what is left of it is dropped whole (KindDropped),
// so the schema says less — any string, where it listed some — but
// nothing wrong, and the server still checks what a call sends.
var schemaValues = map[string]bool{"enum": true, "const": true}

// DefaultValuesBudget is the default limit, in characters (runes), on the
// strings of one schema's enum and const values together. Every IANA time
// zone is about 9,000; a server cannot put megabytes of instructions into
// a thousand parameters' enums.
const DefaultValuesBudget = 65536

// KindDropped marks an enum or const keyword dropped from a schema
// because its values did not fit in the schema's DefaultValuesBudget;
// Count is how many characters its strings held.
const KindDropped TextKind = "dropped"

// dropped is what schemaCutter.values returns in a keyword's place to
// have object leave the keyword out.
var dropped = &struct{ byte }{}

// schemaMaps are the keywords whose values map names to schemas.
var schemaMaps = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true,
}

// schemaCutter cuts the text of one schema to its caps. It walks objects
// by sorted key, so that the same schema is always cut the same way.
type schemaCutter struct {
	max   int // per string, in runes
	left  int // of the budget
	vals  int // left of the values' budget (DefaultValuesBudget)
	over  int // runes cut for the budget
	finds []TextFinding
}

// capSchema returns schema (a decoded JSON value, or anything that encodes
// to one) with every string but names capped at DefaultDescriptionCap and
// the schema's text at DefaultSchemaBudget (see KindCut, KindOverBudget),
// what was cut reported under field, and whether anything was. schema is
// never modified.
func capSchema(schema any, field string) (any, bool, []TextFinding) {
	return capSchemaTo(schema, field, DefaultDescriptionCap, DefaultSchemaBudget, DefaultValuesBudget)
}

func capSchemaTo(schema any, field string, perString, budget, values int) (any, bool, []TextFinding) {
	v := schema
	switch schema.(type) {
	case nil, map[string]any, []any, string, bool, float64, json.Number:
	default:
		// A json.RawMessage, a struct: its JSON is what the model reads.
		b, err := json.Marshal(schema)
		if err != nil {
			return schema, false, nil
		}
		if !needsCut(b, perString) {
			return schema, false, nil
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			return schema, false, nil
		}
	}
	c := &schemaCutter{max: perString, left: budget, vals: values}
	out, changed := c.schema(v, field)
	if c.over > 0 {
		c.finds = append(c.finds, TextFinding{Kind: KindOverBudget, Field: field, Count: c.over, Action: KindOverBudget.Action()})
	}
	if !changed {
		return schema, false, nil
	}
	return out, true, c.finds
}

// needsCut reports, from its JSON, whether a schema may hold text to cut:
// one that is shorter than a string's cap cannot.
func needsCut(b []byte, perString int) bool { return len(b) > perString }

// schema cuts a value in a schema's place.
func (c *schemaCutter) schema(v any, field string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return c.object(x, field, func(k string, e any, f string) (any, bool) {
			switch {
			case schemaNames[k]:
				return e, false
			case schemaData[k]:
				return c.data(e, f)
			case schemaValues[k]:
				n := valueRunes(e, c.max)
				if n > c.vals {
					c.finds = append(c.finds, TextFinding{Kind: KindDropped, Field: f, Count: n, Action: KindDropped.Action()})
					return dropped, true
				}
				c.vals -= n
				return c.values(e, f)
			case schemaMaps[k]:
				m, ok := e.(map[string]any)
				if !ok {
					return c.schema(e, f)
				}
				return c.object(m, f, func(_ string, s any, f string) (any, bool) { return c.schema(s, f) })
			case schemaWords[k]:
				return c.words(e, f)
			}
			return c.schema(e, f)
		})
	case []any:
		return c.array(x, field, c.schema)
	case string:
		return c.text(x, field)
	}
	return v, false
}

// data cuts a JSON value that is data: every string is text.
func (c *schemaCutter) data(v any, field string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return c.object(x, field, func(_ string, e any, f string) (any, bool) { return c.data(e, f) })
	case []any:
		return c.array(x, field, c.data)
	case string:
		return c.text(x, field)
	}
	return v, false
}

// valueRunes counts the characters of the strings of v, a JSON value,
// each at most perString.
func valueRunes(v any, perString int) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range x {
			n += valueRunes(e, perString)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += valueRunes(e, perString)
		}
		return n
	case string:
		return min(utf8.RuneCountInString(x), perString)
	}
	return 0
}

// values caps each string of a JSON value that a call may send (an enum,
// a const) on its own, without the budget.
func (c *schemaCutter) values(v any, field string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return c.object(x, field, func(_ string, e any, f string) (any, bool) { return c.values(e, f) })
	case []any:
		return c.array(x, field, c.values)
	case string:
		return c.cut(x, field, c.max, false)
	}
	return v, false
}

// words caps a keyword's string (or list of strings, a "type" list) on
// its own, without the budget.
func (c *schemaCutter) words(v any, field string) (any, bool) {
	switch x := v.(type) {
	case string:
		return c.cut(x, field, c.max, false)
	case []any:
		return c.array(x, field, c.words)
	}
	return c.schema(v, field)
}

// text cuts a string of text to its cap and what is left of the budget.
func (c *schemaCutter) text(s, field string) (any, bool) {
	return c.cut(s, field, min(c.max, max(c.left, 1)), true)
}

func (c *schemaCutter) cut(s, field string, limit int, counted bool) (any, bool) {
	n := utf8.RuneCountInString(s)
	if counted {
		c.left -= min(n, limit)
	}
	if n <= limit {
		return s, false
	}
	out := CapDescription(s, limit)
	gone := n - utf8.RuneCountInString(out) + 1 // the ellipsis stands for what went
	if limit < c.max {
		c.over += gone
	} else {
		c.finds = append(c.finds, TextFinding{Kind: KindCut, Field: field, Count: gone, Action: KindCut.Action()})
	}
	return out, true
}

// object applies f to each entry of m, by sorted key, and returns a copy
// holding what changed (m itself when nothing did).
func (c *schemaCutter) object(m map[string]any, field string, f func(k string, v any, field string) (any, bool)) (any, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out map[string]any
	for _, k := range keys {
		cv, changed := f(k, m[k], field+"."+k)
		if !changed {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(m))
			for k2, v2 := range m {
				out[k2] = v2
			}
		}
		if cv == dropped {
			delete(out, k)
			continue
		}
		out[k] = cv
	}
	if out == nil {
		return m, false
	}
	return out, true
}

func (c *schemaCutter) array(a []any, field string, f func(any, string) (any, bool)) (any, bool) {
	return mapElems(a, func(i int, e any) (any, bool) { return f(e, field+"["+strconv.Itoa(i)+"]") })
}
