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
// that could redraw the prompt), invalid UTF-8, and invisible or
// reordering format characters (U+202E and friends). So what the approval
// prompt shows is always what will run, byte for byte.
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
	if !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
		return false
	}
	return true
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
