package toolsurface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvelopeTag is the element every MCP result is wrapped in.
const EnvelopeTag = "mcp_response"

// Envelope renders res with RenderContent and wraps it with Wrap:
//
//	<mcp_response server="S" tool="T" trust="untrusted">
//	payload
//	</mcp_response>
//
// A nil res is treated as an empty result.
func Envelope(server, tool string, res *mcp.CallToolResult) string {
	isError := res != nil && res.IsError
	return Wrap(server, tool, isError, RenderContent(res))
}

// Wrap puts payload in the envelope a model sees. It is the one place the
// envelope is written, so that later stages (truncation notes, the guide to
// a spilled large result) get the same guarantees:
//
//   - server and tool are XML-escaped (& < > " ' and control characters
//     become character references) and cut to 200 characters;
//   - an error result gets the attribute is_error="true" after trust;
//   - payload goes through Defang, so it can contain no opening or closing
//     mcp_response tag: the output has exactly one opening tag, at the
//     start, and one closing tag, at the very end;
//   - payload sits on its own lines between the tags.
func Wrap(server, tool string, isError bool, payload string) string {
	var b strings.Builder
	b.Grow(len(payload) + 128)
	b.WriteString("<" + EnvelopeTag + ` server="`)
	b.WriteString(escapeAttr(server))
	b.WriteString(`" tool="`)
	b.WriteString(escapeAttr(tool))
	b.WriteString(`" trust="untrusted"`)
	if isError {
		b.WriteString(` is_error="true"`)
	}
	b.WriteString(">\n")
	payload = Defang(payload)
	b.WriteString(payload)
	if payload != "" && !strings.HasSuffix(payload, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("</" + EnvelopeTag + ">")
	return b.String()
}

// maxAttrRunes bounds each attribute value so a 1,000-character tool name
// does not bloat every result.
const maxAttrRunes = 200

func escapeAttr(s string) string {
	s = CapDescription(strings.ToValidUTF8(s, "\uFFFD"), maxAttrRunes)
	if !strings.ContainsFunc(s, escapedInAttr) {
		return s // most names: nothing to escape, so nothing to copy
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r < 0x20 || r == 0x7f || isLT(r):
			fmt.Fprintf(&b, "&#x%X;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// escapedInAttr reports whether escapeAttr writes r as a reference.
func escapedInAttr(r rune) bool {
	return r == '&' || r == '<' || r == '>' || r == '"' || r == '\'' || r < 0x20 || r == 0x7f || isLT(r)
}

// Defang makes s safe to place inside an mcp_response element: every '<'
// (or look-alike: ＜ ﹤ ‹ 〈 ⟨ 〈 ˂ ᐸ ❬ ❮ ⧼) that begins something a model or parser
// could take for an mcp_response tag is replaced by a character reference
// ("&lt;", or "&#xFF1C;" and so on). Everything else is left alone, so code
// and HTML in results stay readable. Invalid UTF-8 becomes U+FFFD.
//
// "Begins a tag" is deliberately broad. After the '<' come any number of
// spaces, control and format (zero-width) characters and slashes; then
// "mcp", then any run of characters that are not letters or digits
// ('_', '-', spaces, nothing at all…), then "response". Letters match
// ignoring case, under Unicode simple case folding (ſ is s), in fullwidth
// form, in the styled forms of unwide (mathematical 𝚖𝚌𝚙, circled ⓜ…), as
// small capitals and as common Cyrillic/Greek look-alikes; zero-width
// characters and combining marks between letters are skipped. So </mcp_response>, < / MCP_Response >,
// <mcp_response/>, <mcp-response x="1">, <\u200bmcp_response> and
// ＜／ｍｃｐ＿ｒｅｓｐｏｎｓｅ＞ are all defanged, and because a tag can only
// start at such a character, no payload can close the envelope early.
// Defang is idempotent.
func Defang(s string) string {
	out, _ := defang(s)
	return out
}

// defang is Defang, also counting the tags it defanged.
func defang(s string) (string, int) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	last, n := 0, 0
	for i := 0; i < len(s); {
		c := s[i]
		// Fast path: only '<' and the lead bytes of the look-alikes
		// (U+02C2: CB; U+1438: E1; U+2039, U+2329, U+276C, U+276E,
		// U+27E8, U+29FC: E2; U+3008: E3; U+FE64, U+FF1C: EF) can start
		// a tag.
		if c != '<' && c != 0xCB && c != 0xE1 && c != 0xE2 && c != 0xE3 && c != 0xEF {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isLT(r) && tagFollows(s[i+size:]) {
			n++
			if last == 0 {
				b.Grow(len(s) + 16)
			}
			b.WriteString(s[last:i])
			if r == '<' {
				b.WriteString("&lt;")
			} else {
				fmt.Fprintf(&b, "&#x%X;", r)
			}
			last = i + size
		}
		i += size
	}
	if last == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

func isLT(r rune) bool {
	switch r {
	case '<', '\uFF1C', '\uFE64', '\u2039', '\u3008', '\u27E8', '\u2329',
		'\u02C2', '\u1438', '\u276C', '\u276E', '\u29FC': // ˂ ᐸ ❬ ❮ ⧼
		return true
	}
	return false
}

// tagFollows reports whether rest (the text after a '<') starts like the
// name of an mcp_response tag, as Defang documents.
func tagFollows(rest string) bool {
	i := 0
	// Leading spaces, controls, zero-width characters and slashes.
	for i < len(rest) {
		r, size := utf8.DecodeRuneInString(rest[i:])
		if !(isSlash(r) || unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			break
		}
		i += size
	}
	i, ok := matchWord(rest, i, "mcp")
	if !ok {
		return false
	}
	// Separator: anything that is not a letter or digit.
	for i < len(rest) {
		r, size := utf8.DecodeRuneInString(rest[i:])
		r = unwide(r)
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			break
		}
		i += size
	}
	_, ok = matchWord(rest, i, "response")
	return ok
}

func isSlash(r rune) bool {
	switch unwide(r) {
	case '/', '\\', '\u2044', '\u2215', '\u29F8':
		return true
	}
	return false
}

// matchWord matches the lower-case ASCII word at s[i:], letter by letter
// as Defang documents, and returns the index after it.
func matchWord(s string, i int, word string) (int, bool) {
	for _, want := range word {
		for {
			if i >= len(s) {
				return i, false
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
				continue // zero-width characters and combining marks inside the word
			}
			if !sameLetter(r, want) {
				return i, false
			}
			break
		}
	}
	return i, true
}

// unwide maps fullwidth ASCII forms (U+FF01–U+FF5E) to ASCII, and the
// styled forms of Latin letters to the plain letter: the mathematical
// alphanumeric letters (𝚖𝚌𝚙, 𝐦𝐜𝐩, 𝓂𝒸𝓅…: thirteen alphabets of 26
// capitals and 26 small letters from U+1D400), circled and parenthesized
// letters (ⓜ, Ⓜ, ⒨), and the squared and negative circled or squared
// capitals (🄼, 🅜, 🅼).
func unwide(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFEE0
	case r >= 0x1D400 && r <= 0x1D6A3:
		if off := (r - 0x1D400) % 52; off < 26 {
			return 'A' + off
		} else {
			return 'a' + off - 26
		}
	case r >= 0x24B6 && r <= 0x24CF:
		return 'A' + r - 0x24B6
	case r >= 0x24D0 && r <= 0x24E9:
		return 'a' + r - 0x24D0
	case r >= 0x249C && r <= 0x24B5:
		return 'a' + r - 0x249C
	case r >= 0x1F130 && r <= 0x1F149:
		return 'A' + r - 0x1F130
	case r >= 0x1F150 && r <= 0x1F169:
		return 'A' + r - 0x1F150
	case r >= 0x1F170 && r <= 0x1F189:
		return 'A' + r - 0x1F170
	}
	return r
}

// lookalikes lists characters commonly rendered like the letters of
// "mcp_response".
var lookalikes = map[rune]rune{
	'м': 'm', 'с': 'c', 'ϲ': 'c', 'р': 'p', 'ρ': 'p', 'г': 'r', 'е': 'e',
	'ѕ': 's', 'о': 'o', 'ο': 'o', 'օ': 'o', 'п': 'n', 'ո': 'n',
	// small capitals, and letter-like symbols
	'ᴍ': 'm', 'ᴄ': 'c', 'ᴘ': 'p', 'ʀ': 'r', 'ᴇ': 'e', 'ꜱ': 's', 'ᴏ': 'o', 'ɴ': 'n',
	'ⅿ': 'm', 'ⅽ': 'c', '℮': 'e', 'ℯ': 'e', 'ℴ': 'o', 'ℳ': 'm', 'ℛ': 'r', 'ℜ': 'r', 'ℝ': 'r', 'ℙ': 'p',
}

func sameLetter(r, want rune) bool {
	r = unwide(r)
	if r == want {
		return true
	}
	if l, ok := lookalikes[unicode.ToLower(r)]; ok && l == want {
		return true
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f == want {
			return true
		}
	}
	return false
}

// RenderContent renders a result's payload for a model, without the
// envelope and without defanging (Wrap does that). Blocks are joined with
// newlines, in order:
//
//   - text: as is;
//   - image, audio: one line "[image: image/png, 20.0 MiB]" giving the MIME
//     type and the decoded size; base64 never reaches the text;
//   - resource link: "[resource link: name=…, uri=…, mime=…, size=…]" with
//     title and description when set;
//   - embedded resource: "[resource: URI (mime)]" then its text, or for a
//     blob "[resource: URI (mime), 3.0 KiB binary, not shown]";
//   - anything else: "[unsupported content: TYPE]".
//
// Structured content is rendered as compact JSON, after the blocks, only
// when the result has no text block: servers are told to mirror it in a
// text block, so when one exists it is usually a duplicate. A result with
// nothing to show renders as "[empty result]".
func RenderContent(res *mcp.CallToolResult) string {
	if res == nil {
		return emptyResult
	}
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case nil:
			continue
		case *mcp.TextContent:
			if c == nil {
				continue
			}
			hasText = true
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			if c == nil {
				continue
			}
			parts = append(parts, mediaLine("image", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			if c == nil {
				continue
			}
			parts = append(parts, mediaLine("audio", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			if c == nil {
				continue
			}
			parts = append(parts, linkLine(c))
		case *mcp.EmbeddedResource:
			if c == nil {
				continue
			}
			parts = append(parts, embedded(c.Resource))
		default:
			parts = append(parts, "[unsupported content: "+contentType(c)+"]")
		}
	}
	if !hasText && res.StructuredContent != nil {
		parts = append(parts, structured(res.StructuredContent))
	}
	if len(parts) == 0 {
		return emptyResult
	}
	return strings.Join(parts, "\n")
}

const emptyResult = "[empty result]"

// maxMetaRunes bounds names, URIs and MIME types inside placeholder lines.
const maxMetaRunes = 512

// oneLine keeps server-sent metadata on one short line.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return CapDescription(s, maxMetaRunes)
}

func mediaLine(kind, mime string, size int) string {
	if mime == "" {
		mime = "unknown type"
	}
	return fmt.Sprintf("[%s: %s, %s]", kind, oneLine(mime), humanSize(int64(size)))
}

func linkLine(l *mcp.ResourceLink) string {
	fields := []string{"name=" + oneLine(l.Name), "uri=" + oneLine(l.URI)}
	if l.Title != "" {
		fields = append(fields, "title="+oneLine(l.Title))
	}
	if l.MIMEType != "" {
		fields = append(fields, "mime="+oneLine(l.MIMEType))
	}
	if l.Size != nil {
		fields = append(fields, "size="+humanSize(*l.Size))
	}
	if l.Description != "" {
		fields = append(fields, "description="+oneLine(l.Description))
	}
	return "[resource link: " + strings.Join(fields, ", ") + "]"
}

func embedded(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource: empty]"
	}
	head := "[resource: " + oneLine(r.URI)
	if r.MIMEType != "" {
		head += " (" + oneLine(r.MIMEType) + ")"
	}
	if len(r.Blob) > 0 {
		return head + ", " + humanSize(int64(len(r.Blob))) + " binary, not shown]"
	}
	return head + "]\n" + r.Text
}

func structured(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // Defang handles '<'; keep the JSON readable
	if err := enc.Encode(v); err != nil {
		return "[structured content that could not be encoded: " + oneLine(err.Error()) + "]"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// contentType names a content block's wire type without trusting it to
// marshal.
func contentType(c mcp.Content) (t string) {
	t = fmt.Sprintf("%T", c)
	defer func() { _ = recover() }()
	b, err := c.MarshalJSON()
	if err != nil {
		return t
	}
	var w struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &w) == nil && w.Type != "" {
		return oneLine(w.Type)
	}
	return t
}

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
