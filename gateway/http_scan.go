package gateway

import (
	"bytes"
	"encoding/json"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// scanCall reads a POST body that is exactly one tools/call in its plain
// form, in one pass and without allocating, as decodeMessages and
// plainParams would read it: the envelope's four members and the params'
// name, arguments and _meta, each raw value the very bytes of the body. It
// is strict where they are lenient, so that a body it takes is read the
// same way by the SDK's decoder (case-sensitive, last duplicate wins): any
// other member, a member twice, an escape in a member's name or in the
// method or tool name, a non-string method or name, a task, an answer to a
// question, or null arguments make it report false, and the body goes to
// the SDK. So does a body nested deeper than the SDK's decoder takes
// (1,000 levels, where encoding/json takes 10,000): the SDK refuses it,
// and a call sent on with such arguments ended the upstream server (a Go
// SDK server exits on a message it cannot decode), for every client.
// FuzzScanCall checks it against decodeMessages and plainParams.
func scanCall(body []byte) (m rpcMessage, p fastParams, ok bool) {
	if !json.Valid(body) || (len(body) > sdkMaxDepth && jsonl.NestsDeeper(body, sdkMaxDepth)) {
		return m, p, false
	}
	var seen [4]bool
	ok = members(body, func(key, val []byte) bool {
		i := -1
		switch string(key) {
		case "jsonrpc":
			i = 0
			if string(val) != `"2.0"` {
				return false
			}
			m.JSONRPC = "2.0"
		case "id":
			i = 1
			m.ID = val
		case "method":
			i = 2
			if string(val) != `"tools/call"` {
				return false
			}
			m.Method = "tools/call"
		case "params":
			i = 3
			m.Params = val
		}
		if i < 0 || seen[i] {
			return false
		}
		seen[i] = true
		return true
	})
	if !ok || seen != [4]bool{true, true, true, true} {
		return rpcMessage{}, fastParams{}, false
	}
	if p, ok = scanParams(m.Params); !ok {
		return rpcMessage{}, fastParams{}, false
	}
	return m, p, true
}

// sdkMaxDepth is the nesting the SDK's decoder takes in a message: it
// refuses a deeper one (its internal/json). Each level takes a byte, so a
// body of at most this many bytes cannot nest deeper.
const sdkMaxDepth = 1000

// scanParams reads a tools/call's params, raw, as plainParams would, when
// they are plain: a name (printable ASCII, no escape), arguments that are
// not null, and _meta, each at most once and nothing else. raw must be
// valid JSON, as every part of a decoded message is.
func scanParams(raw []byte) (p fastParams, ok bool) {
	var seen [3]bool
	ok = members(raw, func(key, val []byte) bool {
		i := -1
		switch string(key) {
		case "name":
			i = 0
			name, plain := plainString(val)
			if !plain {
				return false
			}
			p.Name = name
		case "arguments":
			i = 1
			if string(val) == "null" {
				return false
			}
			p.Arguments = val
		case "_meta":
			i = 2
			p.Meta = val
		}
		if i < 0 || seen[i] {
			return false
		}
		seen[i] = true
		return true
	})
	if !ok || !seen[0] {
		return fastParams{}, false
	}
	return p, true
}

// members calls f with each member of data, a valid JSON object (json.Valid
// holds for the text around it), in order, and reports false if data is not
// an object, a member's name holds an escape, or f returned false.
func members(data []byte, f func(key, val []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for i < len(data) && data[i] == '"' {
		end := bytes.IndexByte(data[i+1:], '"')
		if end < 0 {
			return false
		}
		key := data[i+1 : i+1+end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(data, i+end+2)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		start := skipSpace(data, i+1)
		stop := skipValue(data, start)
		if stop < 0 || !f(key, data[start:stop]) {
			return false
		}
		i = skipSpace(data, stop)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(data, i+1)
		default:
			return false
		}
	}
	return false
}

// skipValue returns the end of the JSON value at data[i:], which is
// valid: a string, a number, a literal, or an object or array whose
// brackets are counted outside strings. -1 if it runs out.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				if i = skipString(data, i); i < 0 {
					return -1
				}
				i-- // the loop's i++ lands after the string
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default: // a number, true, false or null
		for ; i < len(data); i++ {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// skipString returns the end of the JSON string that starts at data[i].
func skipString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plainString is the JSON string val as Go reads it, when it holds only
// printable ASCII and no escape; ok is false for anything else.
func plainString(val []byte) (s string, ok bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	for _, c := range val[1 : len(val)-1] {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
			return "", false
		}
	}
	return string(val[1 : len(val)-1]), true
}
