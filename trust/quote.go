package trust

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quote returns s as one POSIX shell word that a person can read safely on
// a terminal: unchanged when it holds only characters that need no
// quoting, in single quotes when it holds other printable text, and in
// $'…' form with \xHH, \uHHHH, \n, \t… escapes when it holds anything a
// terminal would act on or hide: control characters (escape sequences
// that could redraw the prompt), invalid UTF-8, reordering format
// characters (U+202E and friends), and every character that shows as
// nothing or as blank space though it is not a plain space (see [hidden]).
// So what the approval prompt shows is always what will run, byte for
// byte.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	plain, visible := true, true
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				visible = false
				break
			}
		}
		if !safeVisible(r) {
			visible = false
			break
		}
		if !plainRune(r) {
			plain = false
		}
	}
	switch {
	case !visible:
		return ansiQuote(s)
	case plain:
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CommandLine returns command and args as one line of shell words (see
// [Quote]): the literal command line.
func CommandLine(command string, args []string) string {
	words := make([]string, 0, 1+len(args))
	words = append(words, Quote(command))
	for _, a := range args {
		words = append(words, Quote(a))
	}
	return strings.Join(words, " ")
}

func plainRune(r rune) bool {
	return r < utf8.RuneSelf && (('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') ||
		strings.ContainsRune("_@%+=:,./-", r))
}

// safeVisible reports whether r can be printed as itself: a graphic
// character or a plain space, and not one that reorders or hides text.
func safeVisible(r rune) bool {
	if r == ' ' {
		return true
	}
	return unicode.IsGraphic(r) && !hidden(r)
}

// hidden reports whether r, though graphic or formatting, shows as
// nothing or as blank space: a format character (Cf: zero-width, bidi,
// tag and invisible-operator characters), a space other than U+0020, or
// one of Unicode's other default-ignorable code points (the combining
// grapheme joiner U+034F, the Hangul fillers U+115F, U+1160, U+3164 and
// U+FFA0, the Khmer vowels U+17B4 and U+17B5, the variation selectors
// U+180B–U+180F, U+FE00–U+FE0F and U+E0100–U+E01EF), or a character whose
// glyph is blank (the braille blank U+2800, U+16FE4, U+1D159). Each can
// make two different words read the same.
func hidden(r rune) bool {
	switch r {
	case 0x2800, 0x16FE4, 0x1D159:
		return true
	}
	return unicode.IsSpace(r) || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// ansiQuote writes s in bash's $'…' form.
func ansiQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case safeVisible(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
