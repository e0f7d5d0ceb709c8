package toolsurface

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultDescriptionCap is the default limit, in characters (runes), on a
// tool description a model sees.
const DefaultDescriptionCap = 2048

// Ellipsis marks text this package cut short.
const Ellipsis = "…"

// CapDescription returns s cut to at most max runes, the last of which is
// Ellipsis when anything was cut. It never splits a multi-byte character.
// If max <= 0, DefaultDescriptionCap is used. s is returned unchanged when
// it fits.
func CapDescription(s string, max int) string {
	if max <= 0 {
		max = DefaultDescriptionCap
	}
	if len(s) <= max { // bytes >= runes: fits without counting
		return s
	}
	// Walk max-1 runes; if anything follows the max-th rune, cut there.
	n := 0
	for i := range s {
		if n == max-1 {
			rest := s[i:]
			_, size := utf8.DecodeRuneInString(rest)
			if size == len(rest) {
				return s // exactly max runes
			}
			return s[:i] + Ellipsis
		}
		n++
	}
	return s
}

// NormalizeSchema turns whatever a server sent as an input schema into a
// JSON-Schema object a provider accepts as tool parameters. It accepts a
// map, a json.RawMessage or []byte, or any value that marshals to JSON
// (a *jsonschema.Schema, say), and never modifies its argument.
//
// The result always has "type": "object" and a "properties" object:
//   - nil, missing, `true`, `false`, undecodable JSON, or anything that is
//     not a JSON object becomes {"type":"object","properties":{}};
//   - a missing "type", or a type list that includes "object" (e.g.
//     ["object","null"]), becomes "object"; any other type means the
//     arguments could never be an object, so the schema is replaced by
//     the empty object schema;
//   - a missing or non-object "properties" becomes {};
//   - a "required" that is not an array is dropped, and non-string
//     entries are removed from one that is.
//
// Numbers are kept exactly (as json.Number). Provider-specific cleaning
// (dropping $schema and the like) is a separate step.
func NormalizeSchema(schema any) map[string]any {
	m, ok := decodeObject(schema)
	if !ok {
		return emptySchema()
	}
	switch t := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if t != "object" {
			return emptySchema()
		}
	case []any:
		hasObject := false
		for _, v := range t {
			if v == "object" {
				hasObject = true
			}
		}
		if !hasObject {
			return emptySchema()
		}
		m["type"] = "object"
	default:
		return emptySchema()
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		m["properties"] = map[string]any{}
	}
	if req, present := m["required"]; present {
		list, ok := req.([]any)
		if !ok {
			delete(m, "required")
		} else {
			kept := make([]any, 0, len(list))
			for _, v := range list {
				if s, ok := v.(string); ok {
					kept = append(kept, s)
				}
			}
			m["required"] = kept
		}
	}
	return m
}

func emptySchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// decodeObject returns a fresh copy of schema as a JSON object, going
// through JSON so the caller's value is never shared or mutated.
func decodeObject(schema any) (map[string]any, bool) {
	var raw []byte
	switch s := schema.(type) {
	case nil:
		return nil, false
	case json.RawMessage:
		raw = s
	case []byte:
		raw = s
	default:
		var err error
		if raw, err = json.Marshal(s); err != nil {
			return nil, false
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if dec.More() { // trailing garbage: not one JSON value
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// EstimateTokens estimates how many model tokens s costs: one token per 4
// bytes, rounded up. It is the same rule MAX_MCP_OUTPUT_TOKENS uses:
// cheap, tokenizer-free, and close enough for budgets and the status view.
func EstimateTokens(s string) int {
	return (len(s) + 3) / 4
}

// ToolBlockTokens estimates the tokens a list of tools costs in a model's
// tool block, as status shows per server: for each tool, the JSON of its
// name, description capped at DefaultDescriptionCap, and normalized input
// schema. It uses each tool's Name as given; namespaced names add a few
// tokens per tool. Nil entries are skipped.
func ToolBlockTokens(tools []*mcp.Tool) int {
	total := 0
	for _, t := range tools {
		if t == nil {
			continue
		}
		b, err := json.Marshal(struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"input_schema"`
		}{t.Name, CapDescription(t.Description, DefaultDescriptionCap), NormalizeSchema(t.InputSchema)})
		if err != nil {
			continue
		}
		total += EstimateTokens(string(b))
	}
	return total
}
