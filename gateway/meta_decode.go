package gateway

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A _meta that holds a progress token is a new text with every call, and
// Claude Code's holds its call's ID too, next to the 2026-07-28 triple —
// the client's capabilities and info, the same on every call. Decoded
// whole with encoding/json it was ~30 allocations a call. decodeMeta
// reads the object member by member: strings, numbers and literals
// directly, object and array values from the cache by their text (decoded
// by encoding/json the first time, a deep copy handed out each time).
//
// It reads only what it reads exactly as json.Unmarshal into an mcp.Meta
// does (FuzzDecodeMeta compares the two on any text): a key or string
// with an escape or invalid UTF-8, a number float64 cannot hold, deep
// nesting, or anything that is not one well-formed object are left to
// encoding/json (handled false).

// metaValueMaxDepth bounds the nesting decodeMeta takes: encoding/json
// refuses 10,000 levels, counted from the whole text.
const metaValueMaxDepth = 1000

// decodeMeta decodes raw as json.Unmarshal into an mcp.Meta would, if
// handled; raw is then a JSON object it decoded without error.
func (c *metaCache) decodeMeta(raw []byte) (meta mcp.Meta, handled bool) {
	return decodeObject(raw, c.compositeValue)
}

// decodeObject decodes raw, a JSON object, as json.Unmarshal into a
// map[string]any would, if handled (see decodeMeta); composite decodes
// an object or array member value, given its text.
func decodeObject(raw []byte, composite func([]byte) (any, bool)) (m map[string]any, handled bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	i = skipSpace(raw, i+1)
	m = make(map[string]any, 8)
	if i < len(raw) && raw[i] == '}' {
		return m, skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		end, plain := scanPlainString(raw, i)
		if !plain {
			return nil, false
		}
		key := metaString(raw[i+1 : end-1])
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		v, end, ok := memberValue(raw, skipSpace(raw, i+1), composite)
		if !ok {
			return nil, false
		}
		m[key] = v // a key given twice: the last wins, as in encoding/json
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
			continue
		case '}':
			return m, skipSpace(raw, i+1) == len(raw)
		}
		return nil, false
	}
}

// memberValue decodes the value at raw[i:], returning it and where it
// ends.
func memberValue(raw []byte, i int, composite func([]byte) (any, bool)) (v any, end int, ok bool) {
	if i >= len(raw) {
		return nil, 0, false
	}
	switch b := raw[i]; {
	case b == '"':
		end, plain := scanPlainString(raw, i)
		if !plain {
			return nil, 0, false
		}
		return metaString(raw[i+1 : end-1]), end, true
	case b == '{' || b == '[':
		end, ok := scanComposite(raw, i)
		if !ok {
			return nil, 0, false
		}
		v, ok := composite(raw[i:end])
		return v, end, ok
	case b == '-' || b >= '0' && b <= '9':
		end, ok := scanNumber(raw, i)
		if !ok {
			return nil, 0, false
		}
		f, err := strconv.ParseFloat(string(raw[i:end]), 64)
		if err != nil {
			return nil, 0, false
		}
		return f, end, true
	}
	for _, lit := range [...]struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if n := len(lit.text); len(raw)-i >= n && string(raw[i:i+n]) == lit.text {
			return lit.v, i + n, true
		}
	}
	return nil, 0, false
}

// metaString is the string b holds, without a copy for the keys and the
// version every 2026-07-28 call's _meta holds.
func metaString(b []byte) string {
	switch string(b) {
	case "progressToken":
		return "progressToken"
	case metaProtocolVersion:
		return metaProtocolVersion
	case metaClientCapabilities:
		return metaClientCapabilities
	case metaClientInfo:
		return metaClientInfo
	case protocolMRT:
		return protocolMRT
	}
	return string(b)
}

// unmarshalValue is an object or array value decoded by encoding/json.
func unmarshalValue(text []byte) (v any, ok bool) {
	return v, json.Unmarshal(text, &v) == nil
}

// compositeValue is an object or array value decoded, from the cache when
// its text was decoded before.
func (c *metaCache) compositeValue(text []byte) (any, bool) {
	c.mu.Lock()
	v, hit := c.values[string(text)]
	c.mu.Unlock()
	if hit {
		return copyJSON(v), true
	}
	if json.Unmarshal(text, &v) != nil {
		return nil, false
	}
	if len(text) <= metaCacheMaxText {
		c.mu.Lock()
		if c.values == nil || len(c.values) >= metaCacheMax {
			c.values = make(map[string]any)
		}
		c.values[string(text)] = copyJSON(v)
		c.mu.Unlock()
	}
	return v, true
}

// scanPlainString returns the end (after the closing quote) of the string
// starting at raw[i], and whether it is plain: terminated, with no escape
// and no control byte, in valid UTF-8 — its bytes between the quotes are
// then its value.
func scanPlainString(raw []byte, i int) (end int, plain bool) {
	for j := i + 1; j < len(raw); j++ {
		switch b := raw[j]; {
		case b == '"':
			return j + 1, utf8.Valid(raw[i+1 : j])
		case b == '\\' || b < 0x20:
			return 0, false
		}
	}
	return 0, false
}

// scanComposite returns the end of the object or array starting at raw[i]
// by its brackets (strings skipped, as skipValue does, but no deeper than
// metaValueMaxDepth); whether the text is one well-formed value is for
// encoding/json to say.
func scanComposite(raw []byte, i int) (end int, ok bool) {
	depth := 0
	for j := i; j < len(raw); j++ {
		switch raw[j] {
		case '"':
			if j = skipString(raw, j); j < 0 {
				return 0, false
			}
			j-- // the loop's j++ lands after the string
		case '{', '[':
			if depth++; depth > metaValueMaxDepth {
				return 0, false
			}
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// scanNumber returns the end of the JSON number starting at raw[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(raw []byte, i int) (end int, ok bool) {
	digits := func(j int) int {
		for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
			j++
		}
		return j
	}
	if raw[i] == '-' {
		i++
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case i < len(raw) && raw[i] >= '1' && raw[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if i < len(raw) && raw[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}
