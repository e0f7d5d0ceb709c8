package termsafe

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	for _, tc := range []struct {
		name, in, line, text string
	}{
		{"plain", "read_file: Read a file", "read_file: Read a file", "read_file: Read a file"},
		{"empty", "", "", ""},
		{"unicode", "café ☕ 日本語 — “quotes” a\u00a0b", "café ☕ 日本語 — “quotes” a\u00a0b", "café ☕ 日本語 — “quotes” a\u00a0b"},
		{"backslash kept", `C:\x1b\n`, `C:\x1b\n`, `C:\x1b\n`},
		{"CSI clear screen", "a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`},
		{"cursor up and erase", "ok\x1b[1A\x1b[2K", `ok\x1b[1A\x1b[2K`, `ok\x1b[1A\x1b[2K`},
		{"OSC title BEL", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"OSC 8 link ST", "\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;https://evil\x1b\click\x1b]8;;\x1b\`, `\x1b]8;;https://evil\x1b\click\x1b]8;;\x1b\`},
		{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\x07`, `\x1b]52;c;cm0gLXJmIH4=\x07`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"C1 OSC and NEL", "\u009d0;x\u0085", `\u009d0;x\u0085`, `\u009d0;x\u0085`},
		{"DEL and NUL", "a\x7fb\x00c", `a\x7fb\x00c`, `a\x7fb\x00c`},
		{"backspace overwrite", "rm -rf /\b\b\b\bls  ", `rm -rf /\x08\x08\x08\x08ls  `, `rm -rf /\x08\x08\x08\x08ls  `},
		{"newline tab", "a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"carriage return", "safe\rEVIL", `safe\rEVIL`, `safe\rEVIL`},
		{"CRLF", "a\r\nb", `a\r\nb`, "a\r\nb"},
		{"bidi override", "txt.\u202egpj.exe", `txt.\u202egpj.exe`, `txt.\u202egpj.exe`},
		{"bidi isolates marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a`, `\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a`},
		{"zero width", "git\u200bhub\ufeff", `git\u200bhub\ufeff`, `git\u200bhub\ufeff`},
		{"line separator", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"tag characters", "hi\U000E0041\U000E0042", `hi\U000e0041\U000e0042`, `hi\U000e0041\U000e0042`},
		{"invalid utf8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`, `\xed\xa0\x80`},
		{"hangul filler and other blanks", "ls\u3164\u115f\u1160\uffa0\u034f\u17b4x", `ls\u3164\u115f\u1160\uffa0\u034f\u17b4x`, `ls\u3164\u115f\u1160\uffa0\u034f\u17b4x`},
		{"emoji selector kept", "ok \u2764\ufe0f and \u263a\ufe0e", "ok \u2764\ufe0f and \u263a\ufe0e", "ok \u2764\ufe0f and \u263a\ufe0e"},
		{"selector run smuggling bytes", "\U0001F600\ufe01\U000E0100\U000E0142", "\U0001F600" + `\ufe01\U000e0100\U000e0142`, "\U0001F600" + `\ufe01\U000e0100\U000e0142`},
		{"selector after nothing visible", "\ufe0f a \ufe0f\n\ufe0f", `\ufe0f a \ufe0f\n\ufe0f`, "\\ufe0f a \\ufe0f\n\\ufe0f"},
		{"literal replacement char", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
			}
			if got := Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
			}
		})
	}
}

// checkSafe fails when out holds anything a terminal would act on or hide.
func checkSafe(t *testing.T, fn, in, out string, multiline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q: invalid UTF-8", fn, in, out)
	}
	for i, r := range out {
		if !Unsafe(r) {
			continue
		}
		if multiline && (r == '\n' || r == '\t' || r == '\r' && strings.HasPrefix(out[i+1:], "\n")) {
			continue
		}
		if unicode.Is(unicode.Variation_Selector, r) && loneSelector(out, i, r) {
			continue
		}
		t.Fatalf("%s(%q) = %q: holds %U at %d", fn, in, out, r, i)
	}
}

// safeAlready reports whether s holds nothing Line (or Text) changes.
func safeAlready(s string, multiline bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		if r == utf8.RuneError {
			continue // a literal U+FFFD
		}
		if unicode.Is(unicode.Variation_Selector, r) && loneSelector(s, i, r) {
			continue
		}
		if Unsafe(r) && !(multiline && (r == '\n' || r == '\t' || r == '\r' && strings.HasPrefix(s[i+1:], "\n"))) {
			return false
		}
	}
	return true
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{
		"", "plain text", "a\x1b[2Jb", "\x1b]8;;https://x\x1b\\y\x1b]8;;\x1b\\", "\u009b31m", "\u202e\u2066",
		"a\r\nb\rc\n\td", "\xff\xfe", "\U000E0041", "日本語\u200d", "\x7f\x00", "a\\x1b", "\u2764\ufe0f", "x\ufe0f\ufe0f", "\u3164",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, text := Line(s), Text(s)
		checkSafe(t, "Line", s, line, false)
		checkSafe(t, "Text", s, text, true)
		if strings.ContainsAny(line, "\n\r\t") {
			t.Fatalf("Line(%q) = %q: not one line", s, line)
		}
		if safeAlready(s, false) && line != s {
			t.Fatalf("Line(%q) = %q: changed safe text", s, line)
		}
		if safeAlready(s, true) && text != s {
			t.Fatalf("Text(%q) = %q: changed safe text", s, text)
		}
		if Line(line) != line || Text(text) != text {
			t.Fatalf("not idempotent on %q", s)
		}
	})
}
