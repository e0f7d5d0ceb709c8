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
		b, n := s[i], 1
		var c rune = -1  // the character to write as \uXXXX, if any
		short := byte(0) // the letter of a short escape, if any
		switch {
		case b >= utf8.RuneSelf:
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
				c = r
			}
		case b == '"' || b == '\\':
			short = b
		case b == '\b':
			short = 'b'
		case b == '\f':
			short = 'f'
		case b == '\n':
			short = 'n'
		case b == '\r':
			short = 'r'
		case b == '\t':
			short = 't'
		case b < 0x20 || escapeHTML && (b == '<' || b == '>' || b == '&'):
			c = rune(b)
		}
		if short == 0 && c < 0 {
			i += n
			continue
		}
		dst = append(dst, s[start:i]...)
		if short != 0 {
			dst = append(dst, '\\', short)
		} else {
			dst = append(dst, '\\', 'u', hexDigits[c>>12&0xF], hexDigits[c>>8&0xF], hexDigits[c>>4&0xF], hexDigits[c&0xF])
		}
		i += n
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
