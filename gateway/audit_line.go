package gateway

import (
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/host"
)

// The audit line written by hand: encoding/json's reflection over an
// AuditEntry was a quarter of an audit line's CPU, itself about a sixth of
// a call's in serve. appendEntry writes exactly the bytes json.Marshal
// writes for an entry (FuzzAuditLine compares the two; TestAuditLineEveryField
// fills every field by reflection, so a field added to AuditEntry or
// host.HookDecision and not written here fails it), and reports false for
// what it does not write the same way — a time outside years 0–9999, a
// number JSON cannot hold, an argument of a type no JSON decoding gives —
// where the caller uses encoding/json.

// appendEntry appends e's JSON object (no newline) to b.
func appendEntry(b []byte, e *AuditEntry) ([]byte, bool) {
	b = append(b, `{"time":`...)
	b, ok := appendTime(b, e.Time)
	if !ok {
		return b, false
	}
	if e.Principal != "" {
		b = appendKey(b, "principal")
		b = appendJSONString(b, e.Principal)
	}
	if len(e.Groups) > 0 {
		b = appendKey(b, "groups")
		b = append(b, '[')
		for i, g := range e.Groups {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, g)
		}
		b = append(b, ']')
	}
	b = appendOmit(b, "session", e.Session)
	b = appendKey(b, "tool")
	b = appendJSONString(b, e.Tool)
	b = appendOmit(b, "server", e.Server)
	b = appendOmit(b, "credential", e.Credential)
	b = appendOmit(b, "server_tool", e.ServerTool)
	b = appendOmit(b, "decision", e.Decision)
	b = appendOmit(b, "rule", e.Rule)
	b = appendOmit(b, "rule_source", e.RuleSource)
	b = appendKey(b, "asked")
	b = strconv.AppendBool(b, e.Asked)
	b = appendOmit(b, "answer", e.Answer)
	b = appendOmit(b, "tool_change", e.ToolChange)
	b = appendKey(b, "duration_ms")
	if b, ok = appendFloat(b, e.DurationMS); !ok {
		return b, false
	}
	b = appendKey(b, "result_bytes")
	b = strconv.AppendInt(b, int64(e.ResultBytes), 10)
	b = appendKey(b, "is_error")
	b = strconv.AppendBool(b, e.IsError)
	b = appendOmit(b, "error", e.Error)
	b = appendOmit(b, "args_hmac", e.ArgsHMAC)
	if len(e.Args) > 0 {
		b = appendKey(b, "args")
		if b, ok = appendValue(b, e.Args); !ok {
			return b, false
		}
	}
	if e.ArgsCut > 0 {
		b = appendKey(b, "args_cut")
		b = strconv.AppendInt(b, int64(e.ArgsCut), 10)
	}
	if len(e.Hooks) > 0 {
		b = appendKey(b, "hooks")
		b = append(b, '[')
		for i := range e.Hooks {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendHook(b, &e.Hooks[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	b = appendStrings(b, "findings", e.Findings)
	b = appendStrings(b, "secrets", e.Secrets)
	return append(b, '}'), true
}

func appendHook(b []byte, h *host.HookDecision) ([]byte, bool) {
	b = append(b, `{"hook":`...)
	b = appendJSONString(b, h.Hook)
	b = appendKey(b, "phase")
	b = appendJSONString(b, h.Phase)
	b = appendKey(b, "decision")
	b = appendJSONString(b, h.Decision)
	b = appendOmit(b, "reason", h.Reason)
	if h.Refused {
		b = append(b, `,"refused":true`...)
	}
	b = appendKey(b, "duration_ms")
	b, ok := appendFloat(b, h.DurationMS)
	return append(b, '}'), ok
}

// appendKey appends a comma and a key of the entry's own (a plain ASCII
// name, written as it is) and its colon.
func appendKey(b []byte, k string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// appendOmit appends the member k: s unless s is empty (omitempty).
func appendOmit(b []byte, k, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(appendKey(b, k), s)
}

func appendStrings(b []byte, k string, ss []string) []byte {
	if len(ss) == 0 {
		return b
	}
	b = appendKey(b, k)
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendTime writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, trailing zeros dropped), for the years and zone offsets it
// accepts.
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}

// appendFloat writes f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from
// 1e21, with a one-digit negative exponent unpadded.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7, as JavaScript writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendValue writes a value of what json.Unmarshal makes of JSON (maps
// with their keys sorted), and reports false for any other type.
func appendValue(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, v), true
	case bool:
		return strconv.AppendBool(b, v), true
	case float64:
		return appendFloat(b, v)
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendValue(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		var small [16]string
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendValue(b, v[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

const jsonHex = "0123456789abcdef"

// appendJSONString writes s as a JSON string the way encoding/json does with
// HTML escaping on (its default): `"` and `\` escaped, control bytes as
// \b \f \n \r \t or \u00XX, `<`, `>` and `&` as \u003c \u003e \u0026,
// invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
