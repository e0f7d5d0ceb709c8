package toolsurface

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TextKind is a class of characters that make text read differently to a
// model than it looks to a person (docs/security.md, What the model
// reads). CleanText removes each class or makes it visible, as
// [TextKind.Action] says.
type TextKind string

const (
	// KindTag: Unicode tag characters (U+E0000–U+E007F). They are
	// invisible and spell ASCII (U+E0041 is "A"): a whole hidden sentence
	// fits in what renders as nothing. Removed; what they spelled is
	// reported. Kept only where they belong: a subdivision flag (U+1F3F4
	// and 2 to 6 tag letters or digits ending in U+E007F, as 🏴 England).
	KindTag TextKind = "tag"
	// KindBidi: bidirectional embeddings, overrides and isolates
	// (U+202A–U+202E, U+2066–U+2069), which reorder how text displays.
	// Made visible as "[U+202E]". The bidi marks LRM, RLM and ALM
	// (U+200E, U+200F, U+061C) are left alone: right-to-left text needs
	// them and they cannot reorder a run of text.
	KindBidi TextKind = "bidi"
	// KindZeroWidth: zero-width space, non-joiner and joiner, word joiner,
	// byte-order mark and the Mongolian vowel separator (U+200B–U+200D,
	// U+2060, U+FEFF, U+180E). Removed, except a single joiner or
	// non-joiner between two visible non-ASCII characters (an emoji
	// sequence, a Persian or Indic word).
	KindZeroWidth TextKind = "zero-width"
	// KindVariation: variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF,
	// Mongolian U+180B–U+180D, U+180F) in a run of two or more after one
	// character: each can carry a byte, so a run hides data behind one
	// emoji. Removed; the bytes they spelled are reported when they are
	// text. A single selector after a visible character (an emoji's
	// U+FE0F) is kept.
	KindVariation TextKind = "variation-selector"
	// KindInvisible: other characters that render as nothing: soft hyphen
	// (U+00AD), combining grapheme joiner (U+034F), Hangul fillers
	// (U+115F, U+1160, U+3164, U+FFA0), Khmer inherent vowels (U+17B4,
	// U+17B5), invisible operators (U+2061–U+2064), deprecated format
	// characters (U+206A–U+206F), interlinear annotation (U+FFF9–U+FFFB),
	// shorthand format controls (U+1BCA0–U+1BCA3) and musical formatting
	// (U+1D173–U+1D17A). Removed.
	KindInvisible TextKind = "invisible"
	// KindEnvelope: text imitating Switchboard's own envelope, an opening
	// or closing <mcp_response> tag in any spelling Defang knows. Made
	// visible: its '<' becomes "&lt;" (or a character reference).
	KindEnvelope TextKind = "envelope"
)

// TextKinds lists every kind, in the order findings are reported.
var TextKinds = []TextKind{KindTag, KindVariation, KindZeroWidth, KindInvisible, KindBidi, KindEnvelope}

// Action says what CleanText does with characters of kind k: "removed"
// or "made visible" ("cut" for KindCut and KindOverBudget, which
// CleanTool reports).
func (k TextKind) Action() string {
	switch k {
	case KindBidi, KindEnvelope:
		return "made visible"
	case KindCut, KindOverBudget:
		return "cut"
	case KindDropped:
		return "dropped"
	}
	return "removed"
}

// TextFinding is one kind of deceptive text found in one place.
type TextFinding struct {
	Kind TextKind `json:"kind"`
	// Field says where: "description", "title",
	// "inputSchema.properties.path.description", "result"…; "" for text
	// cleaned on its own.
	Field string `json:"field,omitempty"`
	// Count is how many characters (tags: how many tags) of the kind were
	// found there.
	Count int `json:"count"`
	// Action is Kind.Action(): "removed", "made visible" or "cut".
	Action string `json:"action"`
	// Hidden is the text that tag characters or variation selectors
	// spelled, when they spelled text (cut to 200 characters).
	Hidden string `json:"hidden,omitempty"`
}

// String renders the finding for people:
// `description: 31 tag characters removed (they spelled "Ignore all…")`.
func (f TextFinding) String() string {
	var what string
	switch f.Kind {
	case KindTag:
		what = "tag character"
	case KindVariation:
		what = "variation selector"
	case KindZeroWidth:
		what = "zero-width character"
	case KindInvisible:
		what = "invisible format character"
	case KindBidi:
		what = "bidirectional control"
	case KindEnvelope:
		what = "imitation of the <" + EnvelopeTag + "> envelope tag"
	case KindCut, KindOverBudget, KindDropped:
		what = "character"
	default:
		what = string(f.Kind)
	}
	if f.Count != 1 {
		if f.Kind == KindEnvelope {
			what = "imitations of the <" + EnvelopeTag + "> envelope tag"
		} else {
			what += "s"
		}
	}
	s := fmt.Sprintf("%d %s %s", f.Count, what, f.Action)
	if f.Hidden != "" {
		s += fmt.Sprintf(" (they spelled %q)", f.Hidden)
	}
	switch f.Kind {
	case KindCut:
		s += fmt.Sprintf(" (longer than %d characters)", DefaultDescriptionCap)
	case KindOverBudget:
		s += fmt.Sprintf(" (its text is over the schema's %d characters)", DefaultSchemaBudget)
	case KindDropped:
		s += fmt.Sprintf(" (the schema's enum and const values are over %d characters: the keyword is left out)", DefaultValuesBudget)
	}
	if f.Field != "" {
		s = f.Field + ": " + s
	}
	return s
}

// maxHidden bounds TextFinding.Hidden.
const maxHidden = 200

// CleanText returns s as a model should read it: tag characters,
// zero-width and other invisible characters and runs of variation
// selectors removed, bidirectional controls and imitations of the
// envelope tag made visible (see the kinds), and what it found, one
// finding per kind, in the order of TextKinds. Invalid UTF-8 becomes
// U+FFFD. Text with none of them is returned as it is, without
// allocating. CleanText is idempotent: its output holds none of them.
func CleanText(s string) (string, []TextFinding) {
	i := firstSuspect(s)
	if i < 0 {
		return s, nil
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		if i = firstSuspect(s); i < 0 {
			return s, nil
		}
	}
	var (
		b      strings.Builder
		counts [numKinds]int
		hidTag []byte
		hidVS  []byte
	)
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch kind := classify(r); kind {
		case "":
			b.WriteString(s[i : i+size])
			i += size
		case KindTag:
			if n := flagTags(s, i); n > 0 {
				b.WriteString(s[i : i+n]) // a subdivision flag's tags
				i += n
				continue
			}
			counts[kindIndex[KindTag]]++
			if r >= 0xE0020 && r <= 0xE007E && len(hidTag) < maxHidden {
				hidTag = append(hidTag, byte(r-0xE0000))
			}
			i += size
		case KindVariation:
			j, bytes := vsRun(s, i)
			prev, _ := utf8.DecodeLastRuneInString(s[:i])
			if len(bytes) == 1 && i > 0 && visible(prev) {
				b.WriteString(s[i:j]) // one selector after a character: an emoji's style
			} else {
				counts[kindIndex[KindVariation]] += len(bytes)
				if len(hidVS) < maxHidden {
					hidVS = append(hidVS, bytes...)
				}
			}
			i = j
		case KindZeroWidth:
			if (r == '\u200D' || r == '\u200C') && joins(s, i, size) {
				b.WriteString(s[i : i+size])
			} else {
				counts[kindIndex[KindZeroWidth]]++
			}
			i += size
		case KindInvisible:
			counts[kindIndex[KindInvisible]]++
			i += size
		case KindBidi:
			counts[kindIndex[KindBidi]]++
			fmt.Fprintf(&b, "[U+%04X]", r)
			i += size
		}
	}
	out := b.String()
	if strings.ContainsAny(out, "<\uFF1C\uFE64\u2039\u3008\u27E8\u2329") {
		var n int
		out, n = defang(out)
		counts[kindIndex[KindEnvelope]] = n
	}
	var findings []TextFinding
	for _, k := range TextKinds {
		n := counts[kindIndex[k]]
		if n == 0 {
			continue
		}
		f := TextFinding{Kind: k, Count: n, Action: k.Action()}
		switch k {
		case KindTag:
			f.Hidden = hiddenText(hidTag)
		case KindVariation:
			f.Hidden = hiddenText(hidVS)
		}
		findings = append(findings, f)
	}
	if len(findings) == 0 {
		return s, nil // only kept characters: nothing changed
	}
	return out, findings
}

// numKinds is len(TextKinds).
const numKinds = 6

// kindIndex numbers the kinds for CleanText's counters.
var kindIndex = map[TextKind]int{KindTag: 0, KindVariation: 1, KindZeroWidth: 2, KindInvisible: 3, KindBidi: 4, KindEnvelope: 5}

// firstSuspect returns the index of the first byte that may start a
// character CleanText changes (any non-ASCII byte, or '<'), or -1.
func firstSuspect(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '<' {
			return i
		}
	}
	return -1
}

// classify returns the kind of r, or "" for a character CleanText keeps.
func classify(r rune) TextKind {
	switch {
	case r < 0xAD:
		return ""
	case r >= 0xE0000 && r <= 0xE007F:
		return KindTag
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF,
		r >= 0x180B && r <= 0x180D, r == 0x180F:
		return KindVariation
	}
	switch r {
	case 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E:
		return KindZeroWidth
	case 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069:
		return KindBidi
	case 0x00AD, 0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x17B5,
		0x2061, 0x2062, 0x2063, 0x2064, 0xFFF9, 0xFFFA, 0xFFFB:
		return KindInvisible
	}
	switch {
	case r >= 0x206A && r <= 0x206F, r >= 0x1BCA0 && r <= 0x1BCA3, r >= 0x1D173 && r <= 0x1D17A:
		return KindInvisible
	}
	return ""
}

// visible reports whether r shows as something: not a space, control or
// format character, and not a character CleanText removes.
func visible(r rune) bool {
	return r != utf8.RuneError && !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r) &&
		classify(r) == ""
}

// joins reports whether the joiner or non-joiner at s[i:i+size] stands
// alone between two visible non-ASCII characters.
// A single variation selector may come between the joiner and the
// character before it (🏳️‍🌈 is U+1F3F3 U+FE0F U+200D U+1F308).
func joins(s string, i, size int) bool {
	before := s[:i]
	prev, n := utf8.DecodeLastRuneInString(before)
	if classify(prev) == KindVariation {
		before = before[:len(before)-n]
		prev, _ = utf8.DecodeLastRuneInString(before) // a second selector is not visible
	}
	next, _ := utf8.DecodeRuneInString(s[i+size:])
	return prev >= utf8.RuneSelf && next >= utf8.RuneSelf && visible(prev) && visible(next)
}

// vsRun returns the end of the run of variation selectors at s[i:] and the
// byte each one stands for (VS1–VS16: 0–15, VS17–VS256: 16–255; the
// Mongolian ones: 0).
func vsRun(s string, i int) (int, []byte) {
	var out []byte
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if classify(r) != KindVariation {
			break
		}
		switch {
		case r >= 0xFE00 && r <= 0xFE0F:
			out = append(out, byte(r-0xFE00))
		case r >= 0xE0100:
			out = append(out, byte(r-0xE0100+16))
		default:
			out = append(out, 0)
		}
		i += size
	}
	return i, out
}

// flagTags returns the length of the tag sequence at s[i:] when it
// completes a subdivision flag (U+1F3F4 before it; 2 to 6 tag letters or
// digits; U+E007F), else 0.
func flagTags(s string, i int) int {
	if prev, _ := utf8.DecodeLastRuneInString(s[:i]); prev != 0x1F3F4 {
		return 0
	}
	j, n := i, 0
	for j < len(s) && n <= 6 {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		switch {
		case r == 0xE007F:
			if n >= 2 {
				return j - i
			}
			return 0
		case r >= 0xE0061 && r <= 0xE007A, r >= 0xE0030 && r <= 0xE0039:
			n++
		default:
			return 0
		}
	}
	return 0
}

// hiddenText renders the bytes hidden characters spelled, when they are
// printable text, cut to maxHidden characters; "" otherwise.
func hiddenText(b []byte) string {
	if len(b) == 0 || !utf8.Valid(b) {
		return ""
	}
	s := string(b)
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return ""
		}
	}
	return CapDescription(s, maxHidden)
}

// mergeFindings adds fs, found in field, to all.
func mergeFindings(all []TextFinding, field string, fs []TextFinding) []TextFinding {
	for _, f := range fs {
		f.Field = field
		all = append(all, f)
	}
	return all
}
