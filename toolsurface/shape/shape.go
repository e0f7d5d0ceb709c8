package shape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// Provider names a model provider whose tool format Tools produces.
type Provider string

// The providers this package knows.
const (
	OpenAI    Provider = "openai"
	Anthropic Provider = "anthropic"
	Gemini    Provider = "gemini"
)

// Providers returns every Provider, in a fixed order.
func Providers() []Provider { return []Provider{OpenAI, Anthropic, Gemini} }

// ParseProvider reads a provider name, ignoring case and surrounding
// space. Anything else is an error naming the accepted values.
func ParseProvider(s string) (Provider, error) {
	p := Provider(strings.ToLower(strings.TrimSpace(s)))
	for _, known := range Providers() {
		if p == known {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown provider %s: use openai, anthropic or gemini", quote(s))
}

// quote keeps a one-line error readable when a server sends a
// 1,000-character name.
func quote(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// legalToolName reports whether name matches ^[a-zA-Z0-9_-]{1,64}$, the
// names every provider accepts. (As a regexp, the counted repetition cost
// every process of the binary a compile at start-up.)
func legalToolName(name string) bool {
	if len(name) < 1 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Tools converts tools to the tool definitions provider p accepts, one JSON
// object per tool, in order:
//
//   - OpenAI (Chat Completions): {"type":"function","function":{"name",
//     "description","parameters"}}
//   - Anthropic (Messages): {"name","description","input_schema"}
//   - Gemini: a function declaration {"name","description","parameters"}, to
//     be placed in tools[].functionDeclarations; a tool without parameters
//     has no "parameters" key, because Gemini rejects an object schema with
//     empty properties.
//
// Descriptions are capped at toolsurface.DefaultDescriptionCap and schemas
// cleaned with Schema. Tools never modifies its input. It fails on an
// unknown provider and on a name that is not ^[a-zA-Z0-9_-]{1,64}$ (make
// names with toolsurface.ToolName or a toolsurface.Router), naming the
// tool.
func Tools(p Provider, tools []toolsurface.Tool) ([]json.RawMessage, error) {
	if _, err := ParseProvider(string(p)); err != nil || string(p) != strings.ToLower(string(p)) {
		return nil, fmt.Errorf("unknown provider %s: use openai, anthropic or gemini", quote(string(p)))
	}
	out := make([]json.RawMessage, 0, len(tools))
	for i, t := range tools {
		if !legalToolName(t.Name) {
			return nil, fmt.Errorf("tool %d: name %s is not legal for model providers (want ^[a-zA-Z0-9_-]{1,64}$; build names with toolsurface.ToolName)", i, quote(t.Name))
		}
		desc := toolsurface.CapDescription(t.Description, toolsurface.DefaultDescriptionCap)
		params := Schema(p, t.InputSchema)
		var v any
		switch p {
		case OpenAI:
			v = map[string]any{"type": "function", "function": map[string]any{
				"name": t.Name, "description": desc, "parameters": params}}
		case Anthropic:
			v = map[string]any{"name": t.Name, "description": desc, "input_schema": params}
		case Gemini:
			decl := map[string]any{"name": t.Name, "description": desc}
			if props, _ := params["properties"].(map[string]any); len(props) > 0 {
				decl["parameters"] = params
			}
			v = decl
		}
		b, err := marshal(v)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", quote(t.Name), err)
		}
		out = append(out, b)
	}
	return out, nil
}

// marshal encodes v as compact JSON without HTML escaping (schemas often
// hold '<' and '&' in patterns and descriptions).
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// Schema returns the input schema of a tool cleaned for provider p: a
// fresh value (schema is never modified) that starts as
// toolsurface.NormalizeSchema's object schema and is then rewritten as
// follows.
//
// For every provider:
//   - "$schema" is dropped wherever a schema may stand;
//   - every "description" in the schema is capped at
//     toolsurface.DefaultDescriptionCap (a non-string description is
//     dropped);
//   - the root may not hold allOf, anyOf, oneOf, not, if/then/else, enum or
//     const (Anthropic and OpenAI reject them there): the properties of the
//     root's allOf/anyOf/oneOf branches are merged into the root's (the
//     root's own win), a property is required when the root requires it,
//     when any allOf branch does, or when every anyOf/oneOf branch does;
//     the rest is dropped;
//   - an object schema always has "properties".
//
// OpenAI and Anthropic (JSON Schema 2020-12 consumers) also get:
//   - a property whose schema is true becomes {}, and one whose schema is
//     false is removed, from properties and required (it may never be
//     sent); other boolean subschemas (additionalProperties: false) stay;
//   - a draft-04 "items" list (a tuple) becomes "prefixItems";
//   - draft-04 boolean exclusiveMinimum/exclusiveMaximum rewritten to the
//     numeric form: {"minimum":5,"exclusiveMinimum":true} becomes
//     {"exclusiveMinimum":5}; a false one is dropped;
//   - an array schema without "items" (or "prefixItems") gets "items": {}
//     (OpenAI rejects "array schema missing items").
//
// Gemini accepts a subset of OpenAPI 3.0 (its Schema message), so its
// schemas are rewritten into that subset, each rewrite keeping what the
// model needs to know:
//   - local "$ref"s ("#/$defs/X", "#/definitions/X", any JSON pointer into
//     the schema) are inlined; a recursive reference (or one nested deeper
//     than 8) becomes an untyped schema whose description says so;
//   - allOf branches are merged into their parent; oneOf becomes anyOf; a
//     {"type":"null"} branch of anyOf becomes "nullable": true, and an anyOf
//     left with one branch is merged into its parent;
//   - a type list such as ["string","null"] becomes "type":"string" plus
//     "nullable": true; several non-null types become an anyOf with one
//     branch per type, each taking the keywords that apply to it;
//   - "const": v becomes "enum": [v]; enum values are strings, so on a
//     string (or untyped) schema non-string values are written as JSON
//     text ("type":"string" is set) and null becomes "nullable"; on any
//     other type the enum is dropped and "(one of: …)" added to the
//     description;
//   - "format" is kept only where Gemini allows it (string: enum,
//     date-time; number: float, double; integer: int32, int64); another
//     format is dropped and "(format: uri)" added to the description;
//   - numeric exclusiveMinimum/exclusiveMaximum become minimum/maximum and
//     "(must be greater than N)" / "(less than N)" in the description; the
//     draft-04 boolean forms are dropped (minimum/maximum stay);
//   - "properties" and "required" appear only on object schemas, "items"
//     only on arrays; "required" names only listed properties; a tuple
//     "items" list becomes items: {anyOf: […]}; an array without items gets
//     items: {};
//   - an object schema below the root with no properties (a free-form
//     map) loses its type, since Gemini rejects an OBJECT with empty
//     properties, and its description says "(a JSON object)";
//   - every other keyword (additionalProperties, patternProperties,
//     $defs, examples, not, if/then/else, $id, $comment, ...) is dropped:
//     only type, format, title, description, nullable, enum, items,
//     properties, required, propertyOrdering, anyOf, minimum, maximum,
//     minItems, maxItems, minLength, maxLength, minProperties,
//     maxProperties, pattern, example and default are kept.
//
// An unknown provider gets the OpenAI/Anthropic cleaning.
func Schema(p Provider, schema any) map[string]any {
	root := toolsurface.NormalizeSchema(schema)
	if p == Gemini {
		g := &geminiCleaner{root: root}
		flattenRoot(root, g.deref)
		out, _ := g.clean(root, 0, true).(map[string]any)
		if out == nil {
			out = map[string]any{}
		}
		out["type"] = "object"
		if _, ok := out["properties"].(map[string]any); !ok {
			out["properties"] = map[string]any{}
		}
		return out
	}
	flattenRoot(root, func(v any) any { return resolveLocal(root, v) })
	out := cleanStandard(root, true).(map[string]any)
	out["type"] = "object"
	if _, ok := out["properties"].(map[string]any); !ok {
		out["properties"] = map[string]any{}
	}
	return out
}

// rootForbidden are the keywords no provider takes at the root of a tool's
// parameters.
var rootForbidden = []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "enum", "const"}

// flattenRoot merges the root's allOf/anyOf/oneOf branches into it and drops
// the root keywords providers reject. deref resolves a branch that is a
// $ref.
func flattenRoot(root map[string]any, deref func(any) any) {
	props, _ := root["properties"].(map[string]any)
	if _, ok := root["$ref"].(string); ok {
		if target, ok := deref(root).(map[string]any); ok {
			root["allOf"] = append([]any{target}, anyList(root["allOf"])...)
		}
		delete(root, "$ref")
	}
	required := map[string]bool{}
	var order []string
	addReq := func(name string) {
		if !required[name] {
			required[name] = true
			order = append(order, name)
		}
	}
	if list, ok := root["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				addReq(s)
			}
		}
	}
	// A property the root does not define takes its schema from the
	// branches; when branches disagree it gets all their schemas, under
	// allOf (every allOf branch applies) or anyOf (one alternative does).
	own := map[string]bool{}
	for k := range props {
		own[k] = true
	}
	type alt struct {
		schemas []any
		seen    map[string]bool
	}
	var (
		fromAll, fromAny = map[string]*alt{}, map[string]*alt{}
		names            []string
		named            = map[string]bool{}
	)
	collect := func(into map[string]*alt, branch map[string]any) {
		bp, _ := branch["properties"].(map[string]any)
		for _, k := range sortedKeys(bp) {
			if own[k] {
				continue
			}
			a := into[k]
			if a == nil {
				a = &alt{seen: map[string]bool{}}
				into[k] = a
			}
			if !named[k] {
				named[k] = true
				names = append(names, k)
			}
			key, _ := marshal(bp[k])
			if !a.seen[string(key)] {
				a.seen[string(key)] = true
				a.schemas = append(a.schemas, bp[k])
			}
		}
	}
	branches := func(key string) []map[string]any {
		list, _ := root[key].([]any)
		var out []map[string]any
		for _, b := range list {
			if m, ok := deref(b).(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	for _, b := range branches("allOf") {
		collect(fromAll, b)
		for _, r := range stringList(b["required"]) {
			addReq(r)
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		bs := branches(key)
		count := map[string]int{}
		for _, b := range bs {
			collect(fromAny, b)
			seen := map[string]bool{}
			for _, r := range stringList(b["required"]) {
				if !seen[r] {
					seen[r] = true
					count[r]++
				}
			}
		}
		// Deterministic order: the first branch's order.
		if len(bs) > 0 {
			for _, r := range stringList(bs[0]["required"]) {
				if count[r] == len(bs) {
					addReq(r)
				}
			}
		}
	}
	for _, k := range names {
		var schemas []any
		if a := fromAll[k]; a != nil {
			schemas = a.schemas
		}
		if a := fromAny[k]; a != nil {
			if len(a.schemas) == 1 {
				schemas = append(schemas, a.schemas[0])
			} else {
				schemas = append(schemas, map[string]any{"anyOf": a.schemas})
			}
		}
		switch len(schemas) {
		case 0:
		case 1:
			props[k] = schemas[0]
		default:
			props[k] = map[string]any{"allOf": schemas}
		}
	}
	for _, k := range rootForbidden {
		delete(root, k)
	}
	if len(order) > 0 {
		list := make([]any, len(order))
		for i, s := range order {
			list[i] = s
		}
		root["required"] = list
	} else if _, ok := root["required"]; ok {
		root["required"] = []any{}
	}
}

func anyList(v any) []any {
	list, _ := v.([]any)
	return list
}

func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// resolveLocal follows one local $ref ("#/..." JSON pointer into root) of
// v, if v is such a reference; otherwise it returns v.
func resolveLocal(root map[string]any, v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return v
	}
	if t, ok := lookupPointer(root, ref); ok {
		return t
	}
	return v
}

// lookupPointer resolves a local JSON pointer reference "#/a/b" in root.
func lookupPointer(root map[string]any, ref string) (any, bool) {
	if ref == "#" {
		return root, true
	}
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = root
	for _, part := range strings.Split(rest, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[part]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			var i int
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Keywords whose values are schemas, maps of schemas, or lists of schemas.
// Everything else (enum, const, default, examples, ...) is data and is
// never walked.
var (
	schemaKeys = []string{"items", "additionalProperties", "not", "if", "then", "else",
		"contains", "propertyNames", "additionalItems", "unevaluatedItems", "unevaluatedProperties"}
	schemaMapKeys  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaListKeys = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
)

// cleanStandard cleans one (sub)schema for JSON Schema 2020-12 consumers.
func cleanStandard(v any, root bool) any {
	switch s := v.(type) {
	case bool:
		return s // a boolean schema is valid JSON Schema
	case map[string]any:
		out := make(map[string]any, len(s))
		for k, val := range s {
			out[k] = val
		}
		delete(out, "$schema")
		capDesc(out)
		for _, k := range []string{"Minimum", "Maximum"} {
			ex := "exclusive" + k
			if b, ok := out[ex].(bool); ok {
				bound, has := out[strings.ToLower(k[:1])+k[1:]]
				if b && has {
					out[ex] = bound
					delete(out, strings.ToLower(k[:1])+k[1:])
				} else {
					delete(out, ex)
				}
			}
		}
		for _, k := range schemaKeys {
			if sub, ok := out[k]; ok {
				if k == "items" {
					if list, ok := sub.([]any); ok { // draft-04 tuple form
						delete(out, "items")
						if _, has := out["prefixItems"]; !has {
							out["prefixItems"] = cleanList(list)
						}
						continue
					}
				}
				out[k] = cleanStandard(sub, false)
			}
		}
		var dropped []string
		for _, k := range schemaMapKeys {
			if m, ok := out[k].(map[string]any); ok {
				cm := make(map[string]any, len(m))
				for name, sub := range m {
					if b, ok := sub.(bool); ok && k == "properties" {
						if !b {
							dropped = append(dropped, name)
							continue // a property that may never be sent
						}
						sub = map[string]any{}
					}
					cm[name] = cleanStandard(sub, false)
				}
				out[k] = cm
			} else if _, present := out[k]; present {
				if k == "properties" {
					out[k] = map[string]any{}
				} else {
					delete(out, k)
				}
			}
		}
		for _, k := range schemaListKeys {
			if list, ok := out[k].([]any); ok {
				out[k] = cleanList(list)
			} else {
				delete(out, k)
			}
		}
		checkStandardValues(out)
		if len(dropped) > 0 {
			var req []any
			for _, r := range anyList(out["required"]) {
				if !slices.Contains(dropped, fmt.Sprint(r)) {
					req = append(req, r)
				}
			}
			if len(req) > 0 {
				out["required"] = req
			} else {
				delete(out, "required")
			}
		}
		if it, ok := out["items"].(bool); ok && it {
			out["items"] = map[string]any{}
		}
		if hasType(out, "object") {
			if _, ok := out["properties"].(map[string]any); !ok {
				out["properties"] = map[string]any{}
			}
		}
		if hasType(out, "array") {
			_, items := out["items"]
			_, prefix := out["prefixItems"]
			if !items && !prefix {
				out["items"] = map[string]any{}
			}
		}
		return out
	default:
		return map[string]any{}
	}
}

func cleanList(list []any) []any {
	out := make([]any, len(list))
	for i, sub := range list {
		out[i] = cleanStandard(sub, false)
	}
	return out
}

// hasType reports whether m's "type" is t or a list holding t.
func hasType(m map[string]any, t string) bool {
	switch v := m["type"].(type) {
	case string:
		return v == t
	case []any:
		for _, x := range v {
			if x == t {
				return true
			}
		}
	}
	return false
}

func capDesc(m map[string]any) {
	if d, present := m["description"]; present {
		if s, ok := d.(string); ok {
			m["description"] = toolsurface.CapDescription(s, toolsurface.DefaultDescriptionCap)
		} else {
			delete(m, "description")
		}
	}
}

// geminiAllowed are the keywords of Gemini's Schema message.
var geminiAllowed = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "items": true, "properties": true, "required": true, "propertyOrdering": true,
	"anyOf": true, "minimum": true, "maximum": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "minProperties": true, "maxProperties": true,
	"pattern": true, "example": true, "default": true,
}

// geminiFormats are the formats Gemini accepts, per type.
var geminiFormats = map[string][]string{
	"string":  {"enum", "date-time"},
	"number":  {"float", "double"},
	"integer": {"int32", "int64"},
}

var geminiTypes = map[string]bool{
	"string": true, "number": true, "integer": true, "boolean": true, "array": true, "object": true,
}

// Keywords that belong to one type, moved into that type's branch when a
// type list is split into anyOf.
var typeKeywords = map[string][]string{
	"object":  {"properties", "required", "minProperties", "maxProperties", "propertyOrdering"},
	"array":   {"items", "minItems", "maxItems"},
	"string":  {"minLength", "maxLength", "pattern", "format", "enum"},
	"number":  {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "format"},
	"integer": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "format"},
}

// maxRefDepth bounds $ref inlining for Gemini.
const maxRefDepth = 8

// maxRefExpansions bounds the $refs inlined in one schema, so a schema
// whose definitions refer to each other many times over cannot blow up.
const maxRefExpansions = 200

// maxCleanWork bounds the subschemas cleaned for one Gemini schema once
// $refs are being inlined: past it, references are no longer expanded.
const maxCleanWork = 50000

type geminiCleaner struct {
	root     map[string]any
	stack    []string // $refs being inlined
	expanded int
	work     int
}

// deref resolves v if it is a local $ref, for flattenRoot.
func (g *geminiCleaner) deref(v any) any { return resolveLocal(g.root, v) }

// clean rewrites one (sub)schema into Gemini's subset. depth counts nested
// $ref expansions.
func (g *geminiCleaner) clean(v any, depth int, root bool) any {
	g.work++
	s, ok := v.(map[string]any)
	if !ok {
		return map[string]any{} // true, false, or garbage: untyped
	}
	m := make(map[string]any, len(s))
	for k, val := range s {
		m[k] = val
	}

	g.inlineRef(m, depth)
	g.mergeAllOf(m, depth)
	normalizeAlternatives(m)
	normalizeType(m)
	inferType(m)
	g.cleanAnyOf(m, depth)
	typ, _ := m["type"].(string)
	typ = cleanEnum(m, typ)
	cleanFormat(m, typ)
	exclusiveBounds(m)
	if typ == "object" {
		g.cleanObject(m, depth, root)
	} else {
		for _, k := range typeKeywords["object"] {
			delete(m, k)
		}
	}
	g.cleanArray(m, depth, typ == "array")

	for k := range m {
		if !geminiAllowed[k] {
			delete(m, k)
		}
	}
	capDesc(m)
	checkGeminiValues(m)
	return m
}

// inlineRef inlines m's $ref, keeping sibling keywords (the siblings
// win); a recursive, too deep or unresolvable one is described instead.
func (g *geminiCleaner) inlineRef(m map[string]any, depth int) {
	if ref, ok := m["$ref"].(string); ok {
		delete(m, "$ref")
		target, found := lookupPointer(g.root, ref)
		recursive := false
		for _, r := range g.stack {
			if r == ref {
				recursive = true
			}
		}
		switch {
		case !found:
			appendDesc(m, "(reference "+ref+" could not be resolved)")
		case recursive || depth >= maxRefDepth || g.expanded >= maxRefExpansions || g.work >= maxCleanWork:
			appendDesc(m, "(recursive: a value of the same shape as "+refName(ref)+", described above)")
		default:
			if tm, ok := target.(map[string]any); ok {
				g.expanded++
				g.stack = append(g.stack, ref)
				inlined, _ := g.clean(tm, depth+1, false).(map[string]any)
				g.stack = g.stack[:len(g.stack)-1]
				for k, val := range inlined {
					if _, have := m[k]; !have {
						m[k] = val
					}
				}
			}
		}
	}
}

// mergeAllOf merges every allOf branch into m.
func (g *geminiCleaner) mergeAllOf(m map[string]any, depth int) {
	if list, ok := m["allOf"].([]any); ok {
		delete(m, "allOf")
		for _, b := range list {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if _, isRef := bm["$ref"]; isRef {
				bm, _ = g.clean(bm, depth, false).(map[string]any)
			}
			mergeInto(m, bm)
		}
	}
	delete(m, "allOf")
}

// normalizeAlternatives turns oneOf into anyOf and const into enum.
func normalizeAlternatives(m map[string]any) {
	if list, ok := m["oneOf"].([]any); ok {
		any_, _ := m["anyOf"].([]any)
		m["anyOf"] = append(append([]any{}, any_...), list...)
	}
	delete(m, "oneOf")

	if c, ok := m["const"]; ok {
		if _, has := m["enum"]; !has {
			m["enum"] = []any{c}
		}
		delete(m, "const")
	}
}

// normalizeType keeps Gemini's types: "null" becomes nullable, a type
// list becomes anyOf branches, each with its own type's keywords.
func normalizeType(m map[string]any) {
	switch t := m["type"].(type) {
	case string:
		if t == "null" {
			delete(m, "type")
			m["nullable"] = true
		} else if !geminiTypes[t] {
			delete(m, "type")
		}
	case []any:
		var types []string
		for _, x := range t {
			xs, _ := x.(string)
			switch {
			case xs == "null":
				m["nullable"] = true
			case geminiTypes[xs]:
				types = append(types, xs)
			}
		}
		delete(m, "type")
		if len(types) == 1 {
			m["type"] = types[0]
		} else if len(types) > 1 {
			var branches []any
			for _, ty := range types {
				b := map[string]any{"type": ty}
				for _, k := range typeKeywords[ty] {
					if val, ok := m[k]; ok {
						b[k] = val
					}
				}
				branches = append(branches, b)
			}
			for _, ty := range types {
				for _, k := range typeKeywords[ty] {
					delete(m, k)
				}
			}
			prev, _ := m["anyOf"].([]any)
			m["anyOf"] = append(branches, prev...)
		}
	default:
		delete(m, "type")
	}
}

// inferType gives a schema without type or anyOf the type its keywords
// imply.
func inferType(m map[string]any) {
	if _, ok := m["type"]; !ok {
		if _, ok := m["anyOf"]; !ok {
			switch {
			case m["properties"] != nil:
				m["type"] = "object"
			case m["items"] != nil:
				m["type"] = "array"
			case m["enum"] != nil:
				m["type"] = "string"
			}
		}
	}
}

// cleanAnyOf cleans the anyOf branches, folds null branches into
// nullable and hoists a lone branch into m.
func (g *geminiCleaner) cleanAnyOf(m map[string]any, depth int) {
	if list, ok := m["anyOf"].([]any); ok {
		var kept []any
		for _, b := range list {
			cb, _ := g.clean(b, depth, false).(map[string]any)
			if isNullOnly(cb) {
				m["nullable"] = true
				continue
			}
			kept = append(kept, cb)
		}
		delete(m, "anyOf")
		switch len(kept) {
		case 0:
		case 1:
			mergeInto(m, kept[0].(map[string]any))
		default:
			m["anyOf"] = kept
		}
	}
}

// cleanEnum keeps enums of strings only (others are described) and
// returns the type, which an enum may make "string".
func cleanEnum(m map[string]any, typ string) string {
	if list, ok := m["enum"].([]any); ok {
		var vals []any
		var shown []string
		for _, x := range list {
			if x == nil {
				m["nullable"] = true
				continue
			}
			str, isStr := x.(string)
			if !isStr {
				b, _ := marshal(x)
				str = string(b)
			}
			vals = append(vals, str)
			shown = append(shown, str)
		}
		switch {
		case len(vals) == 0:
			delete(m, "enum")
		case typ == "" || typ == "string":
			m["type"] = "string"
			typ = "string"
			m["enum"] = vals
		default:
			delete(m, "enum")
			appendDesc(m, "(one of: "+strings.Join(shown, ", ")+")")
		}
	}
	return typ
}

// cleanFormat keeps only the formats Gemini knows for typ; others are
// described.
func cleanFormat(m map[string]any, typ string) {
	if f, ok := m["format"].(string); ok {
		allowed := false
		for _, a := range geminiFormats[typ] {
			if f == a {
				allowed = true
			}
		}
		if !allowed {
			delete(m, "format")
			appendDesc(m, "(format: "+f+")")
		}
	} else {
		delete(m, "format")
	}
}

// exclusiveBounds turns exclusive bounds into inclusive ones plus words.
func exclusiveBounds(m map[string]any) {
	for _, b := range []struct{ ex, bound, words string }{
		{"exclusiveMinimum", "minimum", "must be greater than"},
		{"exclusiveMaximum", "maximum", "must be less than"},
	} {
		switch x := m[b.ex].(type) {
		case json.Number, float64, int:
			if _, has := m[b.bound]; !has {
				m[b.bound] = x
			}
			appendDesc(m, fmt.Sprintf("(%s %v)", b.words, x))
		}
		delete(m, b.ex)
	}
}

// cleanObject cleans an object's properties and keeps required and
// propertyOrdering to those; an empty non-root object is described.
func (g *geminiCleaner) cleanObject(m map[string]any, depth int, root bool) {
	props, _ := m["properties"].(map[string]any)
	cp := make(map[string]any, len(props))
	for name, sub := range props {
		if b, ok := sub.(bool); ok && !b {
			continue
		}
		cp[name] = g.clean(sub, depth, false)
	}
	var req []any
	for _, r := range stringList(m["required"]) {
		if _, ok := cp[r]; ok {
			req = append(req, r)
		}
	}
	delete(m, "required")
	if len(req) > 0 {
		m["required"] = req
	}
	if order := stringList(m["propertyOrdering"]); len(order) > 0 {
		var kept []any
		for _, o := range order {
			if _, ok := cp[o]; ok {
				kept = append(kept, o)
			}
		}
		m["propertyOrdering"] = kept
	}
	m["properties"] = cp
	if len(cp) == 0 && !root {
		delete(m, "type")
		delete(m, "properties")
		delete(m, "propertyOrdering")
		delete(m, "minProperties")
		delete(m, "maxProperties")
		appendDesc(m, "(a JSON object)")
	}
}

// cleanArray cleans an array's items, or drops array keywords elsewhere.
func (g *geminiCleaner) cleanArray(m map[string]any, depth int, isArray bool) {
	if isArray {
		switch it := m["items"].(type) {
		case []any:
			if len(it) == 0 {
				m["items"] = map[string]any{}
			} else {
				m["items"] = g.clean(map[string]any{"anyOf": it}, depth, false)
			}
		case nil:
			m["items"] = map[string]any{}
		default:
			m["items"] = g.clean(it, depth, false)
		}
	} else {
		delete(m, "items")
		delete(m, "minItems")
		delete(m, "maxItems")
	}
}

// isNullOnly reports a branch that only admits null.
func isNullOnly(m map[string]any) bool {
	if m == nil {
		return false
	}
	_, typed := m["type"]
	_, alts := m["anyOf"]
	return !typed && !alts && m["nullable"] == true && m["enum"] == nil && m["properties"] == nil
}

// mergeInto copies b's keywords into m where m lacks them, merging
// properties and required.
func mergeInto(m, b map[string]any) {
	for k, val := range b {
		switch k {
		case "properties":
			bp, _ := val.(map[string]any)
			mp, ok := m["properties"].(map[string]any)
			if !ok {
				mp = map[string]any{}
			} else {
				cp := make(map[string]any, len(mp))
				for pk, pv := range mp {
					cp[pk] = pv
				}
				mp = cp
			}
			for pk, pv := range bp {
				if _, have := mp[pk]; !have {
					mp[pk] = pv
				}
			}
			m["properties"] = mp
		case "required":
			seen := map[string]bool{}
			var req []any
			for _, r := range append(stringList(m["required"]), stringList(val)...) {
				if !seen[r] {
					seen[r] = true
					req = append(req, r)
				}
			}
			m["required"] = req
		default:
			if _, have := m[k]; !have {
				m[k] = val
			}
		}
	}
}

// appendDesc adds a note to m's description.
func appendDesc(m map[string]any, note string) {
	d, _ := m["description"].(string)
	if strings.Contains(d, note) {
		return
	}
	if d != "" {
		d += " "
	}
	m["description"] = d + note
}

// refName is the last segment of a $ref, for notes.
func refName(ref string) string {
	if i := strings.LastIndex(ref, "/"); i >= 0 && i+1 < len(ref) {
		return ref[i+1:]
	}
	return ref
}

// checkGeminiValues drops keywords whose values Gemini cannot parse.
func checkGeminiValues(m map[string]any) {
	for _, k := range []string{"minimum", "maximum"} {
		if _, ok := m[k].(json.Number); !ok {
			delete(m, k)
		}
	}
	for _, k := range []string{"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"} {
		n, ok := m[k].(json.Number)
		if !ok {
			delete(m, k)
			continue
		}
		if i, err := n.Int64(); err != nil || i < 0 {
			delete(m, k)
		}
	}
	for _, k := range []string{"pattern", "title"} {
		if _, ok := m[k].(string); !ok {
			delete(m, k)
		}
	}
	if _, ok := m["nullable"].(bool); !ok {
		delete(m, "nullable")
	}
}

// sortedKeys returns m's keys in order, so that merges are deterministic.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var jsonTypes = map[string]bool{
	"string": true, "number": true, "integer": true, "boolean": true, "array": true, "object": true, "null": true,
}

// checkStandardValues drops keywords whose values the JSON Schema
// meta-schema forbids (a string "minimum", a negative "maxLength", a
// "required" that is not a list of names...), which Anthropic and OpenAI
// refuse with a 400.
func checkStandardValues(m map[string]any) {
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		if _, ok := m[k]; !ok {
			continue
		}
		n, ok := m[k].(json.Number)
		if !ok {
			delete(m, k)
			continue
		}
		if f, err := n.Float64(); err != nil || k == "multipleOf" && f <= 0 {
			delete(m, k)
		}
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"} {
		if _, ok := m[k]; !ok {
			continue
		}
		n, ok := m[k].(json.Number)
		if !ok {
			delete(m, k)
			continue
		}
		if i, err := n.Int64(); err != nil || i < 0 {
			delete(m, k)
		}
	}
	for _, k := range []string{"pattern", "format", "title", "$ref", "$id", "$comment", "$anchor"} {
		if _, ok := m[k]; ok {
			if _, isStr := m[k].(string); !isStr {
				delete(m, k)
			}
		}
	}
	for _, k := range []string{"uniqueItems", "readOnly", "writeOnly", "deprecated"} {
		if _, ok := m[k]; ok {
			if _, isBool := m[k].(bool); !isBool {
				delete(m, k)
			}
		}
	}
	if req, ok := m["required"]; ok {
		seen := map[string]bool{}
		var names []any
		for _, r := range stringList(req) {
			if !seen[r] {
				seen[r] = true
				names = append(names, r)
			}
		}
		if len(names) > 0 {
			m["required"] = names
		} else {
			delete(m, "required")
		}
	}
	if e, ok := m["enum"]; ok {
		if list, isList := e.([]any); !isList || len(list) == 0 {
			delete(m, "enum")
		}
	}
	switch t := m["type"].(type) {
	case nil:
	case string:
		if !jsonTypes[t] {
			delete(m, "type")
		}
	case []any:
		var kept []any
		seen := map[string]bool{}
		for _, x := range t {
			if xs, ok := x.(string); ok && jsonTypes[xs] && !seen[xs] {
				seen[xs] = true
				kept = append(kept, xs)
			}
		}
		if len(kept) > 0 {
			m["type"] = kept
		} else {
			delete(m, "type")
		}
	default:
		delete(m, "type")
	}
}
