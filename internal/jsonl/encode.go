package jsonl

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// appendRequest appends req as jsonrpc.EncodeMessage encodes it —
// {"jsonrpc":"2.0","id":…,"method":…,"params":…}, the params compacted,
// nothing HTML-escaped — without the reflection and the second buffer of
// the SDK's encoder (two thirds of what writing a call cost). ok is false
// if the params are not valid JSON, as EncodeMessage fails then too.
// FuzzAppendRequest checks it against EncodeMessage.
func appendRequest(dst []byte, req *jsonrpc.Request) (out []byte, ok bool) {
	if out, ok = AppendHead(dst, req.ID); !ok {
		return dst, false
	}
	if req.Method != "" {
		out = append(out, `,"method":`...)
		out = AppendString(out, req.Method, false)
	}
	if len(req.Params) > 0 {
		if out, ok = appendCompact(out, `,"params":`, req.Params); !ok {
			return dst, false
		}
	}
	return append(out, '}'), true
}

// appendResponse appends resp as jsonrpc.EncodeMessage encodes it when it
// carries a result: {"jsonrpc":"2.0","id":…,"result":…}, the result
// compacted. ok is false for an error answer or no result, which
// EncodeMessage writes, and for a result that is not valid JSON.
// FuzzAppendResponse checks it against EncodeMessage.
func appendResponse(dst []byte, resp *jsonrpc.Response) (out []byte, ok bool) {
	if resp.Error != nil || len(resp.Result) == 0 {
		return dst, false
	}
	if out, ok = AppendHead(dst, resp.ID); !ok {
		return dst, false
	}
	if out, ok = appendCompact(out, `,"result":`, resp.Result); !ok {
		return dst, false
	}
	return append(out, '}'), true
}

// appendCompact appends member (`,"name":`) and raw compacted, as the
// SDK's encoder writes a json.RawMessage: json.Compact, which also checks
// it. ok is false if raw is not valid JSON.
func appendCompact(dst []byte, member string, raw json.RawMessage) ([]byte, bool) {
	b := bytes.NewBuffer(append(dst, member...))
	if json.Compact(b, raw) != nil {
		return dst, false
	}
	return b.Bytes(), true
}

// appendHead appends a message's opening as EncodeMessage writes it: the
// version, then the ID if there is one.
func AppendHead(dst []byte, id jsonrpc.ID) ([]byte, bool) {
	out := append(dst, `{"jsonrpc":"2.0"`...)
	switch v := id.Raw().(type) {
	case nil:
	case int64:
		out = append(out, `,"id":`...)
		out = strconv.AppendInt(out, v, 10)
	case string:
		out = append(out, `,"id":`...)
		out = AppendString(out, v, false)
	default:
		return dst, false
	}
	return out, true
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as encoding/json encodes a string: \" \\ \b \f
// \n \r \t, other control characters as \u00XX, with escapeHTML also < >
// & as \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
// FuzzAppendString checks it against encoding/json.
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
