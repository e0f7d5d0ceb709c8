// Package termsafe makes text written by others safe to print on a
// terminal.
//
// Much of what Switchboard shows people comes from parties they do not
// control: a repository's .mcp.json (server commands, args, URLs, file
// paths) and the MCP servers themselves (tool, prompt and resource names
// and descriptions, error messages, stderr, tool results). A terminal acts
// on some characters instead of showing them: escape sequences (ESC, CSI,
// OSC: clear the screen, move the cursor back over a question already
// asked, set the window title, write the clipboard, make a link that lies),
// other C0 and C1 control characters, and Unicode formatting characters
// that reorder or hide text (U+202E RIGHT-TO-LEFT OVERRIDE, zero-width
// characters, the Hangul fillers and other default-ignorable characters
// that render as nothing, runs of variation selectors that can spell
// bytes behind one emoji). [Line] and [Text] replace each such character with a
// visible escape (\x1b, \u202e), so what the person reads is what is
// there, and leave every other string exactly as it is.
//
// Line is for one-line cells and messages: it escapes newlines and tabs
// too. Text is for bodies that are meant to span lines (tool results,
// prompt messages, resource contents): it keeps '\n', '\t' and the '\r' of
// a "\r\n" line end, and escapes everything else Line does.
//
// A backslash is left alone, so an escape cannot be told from the same
// characters typed literally; the guarantee is that nothing reaches the
// terminal that it would act on or hide, not that the mapping can be
// reversed. Both functions are pure, safe for concurrent use, and
// idempotent.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s with every character a terminal would act on or hide
// escaped (see the package doc), including '\n', '\r' and '\t': the
// result is one line. A string that holds none of them is returned as is.
func Line(s string) string { return clean(s, false) }

// Text is [Line] for multi-line text: '\n', '\t', and a '\r' directly
// followed by '\n', are kept.
func Text(s string) string { return clean(s, true) }

// Unsafe reports whether r is escaped by [Line]: a C0 or C1 control
// character, DEL, a Unicode format character (bidi overrides and isolates,
// zero-width characters, tag characters), a line or paragraph separator,
// a character that renders as nothing though Unicode calls it graphic
// (U+3164 HANGUL FILLER, U+034F COMBINING GRAPHEME JOINER: the other
// default-ignorable code points), a variation selector, or a character
// that is not graphic (unassigned, private use). [Line] and [Text] keep a
// single variation selector after a visible character (the U+FE0F of an
// emoji) and escape the others. Invalid UTF-8 is decoded as
// utf8.RuneError, which is not unsafe in itself: use [Line] on strings.
func Unsafe(r rune) bool {
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	// Cf holds U+200B–U+200F, U+202A–U+202E, U+2060–U+2064,
	// U+2066–U+2069, U+061C, U+FEFF and the tag characters U+E0000…;
	// IsGraphic excludes C0/C1 (Cc), Zl, Zp, Co and unassigned code points.
	return !unicode.IsGraphic(r) ||
		unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

func clean(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case keep(s, i, r, multiline):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < utf8.RuneSelf:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case r <= 0xffff:
			b.WriteString(`\u`)
			b.WriteString(pad(strconv.FormatInt(int64(r), 16), 4))
		default:
			b.WriteString(`\U`)
			b.WriteString(pad(strconv.FormatInt(int64(r), 16), 8))
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte of s that clean must change,
// or -1.
func firstUnsafe(s string, multiline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		if !keep(s, i, r, multiline) {
			return i
		}
		i += size
	}
	return -1
}

// keep reports whether the rune r at s[i] is printed as itself.
func keep(s string, i int, r rune, multiline bool) bool {
	if !Unsafe(r) {
		return true
	}
	if unicode.Is(unicode.Variation_Selector, r) {
		return loneSelector(s, i, r)
	}
	if !multiline {
		return false
	}
	switch r {
	case '\n', '\t':
		return true
	case '\r':
		return i+1 < len(s) && s[i+1] == '\n'
	}
	return false
}

// loneSelector reports whether the variation selector r at s[i] stands
// alone after a visible character, as an emoji's U+FE0F does. Each
// selector of a run can carry a byte, so a run hides data behind one
// character: all of its selectors are escaped.
func loneSelector(s string, i int, r rune) bool {
	prev, size := utf8.DecodeLastRuneInString(s[:i])
	if size == 0 || (prev == utf8.RuneError && size == 1) || Unsafe(prev) || unicode.IsSpace(prev) {
		return false
	}
	next, size := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
	return size == 0 || !unicode.Is(unicode.Variation_Selector, next)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

func pad(h string, n int) string {
	if len(h) >= n {
		return h
	}
	return strings.Repeat("0", n-len(h)) + h
}
