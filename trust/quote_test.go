package trust

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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
		if r != ' ' && (!unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r)) {
			t.Fatalf("Quote(%q) = %q holds %U", s, q, r)
		}
	}
	back, err := unquote(q)
	if err != nil || back != s {
		t.Fatalf("Quote(%q) = %s reads back as %q (%v)", s, q, back, err)
	}
}
