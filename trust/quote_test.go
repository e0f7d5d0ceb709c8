package trust

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "''"},
		{"npx", "npx"},
		{"/usr/bin/node", "/usr/bin/node"},
		{"a=b,c:d@e%f+g", "a=b,c:d@e%f+g"},
		{"hello world", "'hello world'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"a;rm -rf /", "'a;rm -rf /'"},
		{"héllo", "'héllo'"},
		{"line\nbreak", `$'line\nbreak'`},
		{"\x1b[2Kok", `$'\x1b[2Kok'`},
		{"\r", `$'\r'`},
		{"evil\u202Etxt.exe", `$'evil\u202etxt.exe'`},
		{"zero\u200Bwidth", `$'zero\u200bwidth'`},
		{"bad\xffbyte", `$'bad\xffbyte'`},
		{"tab\t'q'\\", `$'tab\t\'q\'\\'`},
		{"nbsp\u00a0", `$'nbsp\u00a0'`},
		// What shows as nothing or as blank space is escaped too:
		// Hangul fillers, the combining grapheme joiner, Khmer's
		// invisible vowels, variation selectors, the braille blank.
		{"x\u3164y", `$'x\u3164y'`},
		{"x\u115fy\u1160z", `$'x\u115fy\u1160z'`},
		{"x\uffa0y", `$'x\uffa0y'`},
		{"x\u034fy", `$'x\u034fy'`},
		{"x\ufe00y\ufe0fz", `$'x\ufe00y\ufe0fz'`},
		{"x\U000E0100y\U000E01EFz", `$'x\U000e0100y\U000e01efz'`},
		{"x\u180by", `$'x\u180by'`},
		{"x\u2800y", `$'x\u2800y'`},
		{"x\u17b4y\u17b5z", `$'x\u17b4y\u17b5z'`},
		{"x\U0001D159y", `$'x\U0001d159y'`},
		// Visible text of other scripts, combining marks included, is not.
		{"he\u0301llo", "'he\u0301llo'"},
		{"한국어", "'한국어'"},
		{"हिन्दी", "'हिन्दी'"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if back, err := unquote(Quote(tc.in)); err != nil || back != tc.in {
			t.Errorf("unquote(Quote(%q)) = %q, %v", tc.in, back, err)
		}
	}
	if got := CommandLine("sh", []string{"-c", "touch $M; echo hi", ""}); got != `sh -c 'touch $M; echo hi' ''` {
		t.Errorf("CommandLine = %s", got)
	}
}

// unquote reads back one word in the three forms Quote writes.
func unquote(w string) (string, error) {
	switch {
	case strings.HasPrefix(w, "$'"):
		body := strings.TrimSuffix(strings.TrimPrefix(w, "$'"), "'")
		var b strings.Builder
		for i := 0; i < len(body); i++ {
			if body[i] != '\\' {
				b.WriteByte(body[i])
				continue
			}
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'':
				b.WriteByte(body[i])
			case 'x':
				v, err := strconv.ParseUint(body[i+1:i+3], 16, 8)
				if err != nil {
					return "", err
				}
				b.WriteByte(byte(v))
				i += 2
			case 'u', 'U':
				n := 4
				if body[i] == 'U' {
					n = 8
				}
				v, err := strconv.ParseUint(body[i+1:i+1+n], 16, 32)
				if err != nil {
					return "", err
				}
				b.WriteRune(rune(v))
				i += n
			default:
				return "", strconv.ErrSyntax
			}
		}
		return b.String(), nil
	case strings.HasPrefix(w, "'"):
		return strings.ReplaceAll(w[1:len(w)-1], `'\''`, "'"), nil
	}
	return w, nil
}

// checkQuoted is what every quoted word must satisfy: nothing a terminal
// acts on or hides, and it reads back to the input.
func checkQuoted(t *testing.T, s string) {
	q := Quote(s)
	if !utf8.ValidString(q) {
		t.Fatalf("Quote(%q) = %q is not valid UTF-8", s, q)
	}
	for _, r := range q {
		if r != ' ' && (!unicode.IsGraphic(r) || unicode.IsSpace(r) || defaultIgnorable(r) || blankGlyph[r]) {
			t.Fatalf("Quote(%q) = %q holds %U", s, q, r)
		}
	}
	back, err := unquote(q)
	if err != nil || back != s {
		t.Fatalf("Quote(%q) = %s reads back as %q (%v)", s, q, back, err)
	}
}

// defaultIgnorable approximates Unicode's Default_Ignorable_Code_Point
// property from the tables Go has (a superset: it keeps the
// prepended concatenation marks and U+FFF9–U+FFFB, which are Cf).
func defaultIgnorable(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// blankGlyph are graphic characters that print as blank space.
var blankGlyph = map[rune]bool{0x2800: true, 0x3164: true, 0xFFA0: true, 0x115F: true, 0x1160: true, 0x16FE4: true, 0x1D159: true}

// TestQuoteEscapesWhatToolsurfaceHides checks Quote against the other
// table of invisible characters, the one toolsurface.CleanText takes out
// of what a model reads: every character CleanText removes or marks, a
// command line shows escaped.
func TestQuoteEscapesWhatToolsurfaceHides(t *testing.T) {
	n := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		c := string(r)
		// Two in a row, between letters: a single variation selector
		// after a character, or a joiner between two non-ASCII ones, is
		// what CleanText keeps.
		if in := "a" + c + c + "b"; func() bool { out, _ := toolsurface.CleanText(in); return out == in }() {
			continue
		}
		n++
		if q := Quote(c); !strings.HasPrefix(q, "$'") || strings.ContainsRune(q, r) {
			t.Errorf("toolsurface hides %U but Quote shows it as %s", r, q)
		}
	}
	if n < 300 {
		t.Fatalf("toolsurface hides only %d characters: is the test still asking it?", n)
	}
}
