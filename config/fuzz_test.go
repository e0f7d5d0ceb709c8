package config

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// validPos reports whether p is a real place in data: a line that exists
// and a column at most one past its last character.
func validPos(data []byte, p Position) bool {
	lines := bytes.Split(data, []byte("\n"))
	if p.Line < 1 || p.Line > len(lines) {
		return false
	}
	return p.Col >= 1 && p.Col <= utf8.RuneCount(lines[p.Line-1])+1
}

// FuzzLoadJSONC feeds arbitrary bytes to the parser every config file goes
// through. Properties: it never panics; every diagnostic and every server
// position is a real place in the input; a diagnostic naming a server
// names one that was returned (invalid servers are returned too); the
// cached position lookup agrees with [LineCol]; and
// when the document parses, the server names are exactly the keys a
// standard JSON decoder sees.
func FuzzLoadJSONC(f *testing.F) {
	for _, seed := range []string{
		``,
		`{}`,
		`{"mcpServers": {"a": {"command": "npx", "args": ["-y", "x"]}}}`,
		"{\n // c\n \"mcpServers\": {\"a\": {\"url\": \"https://h\",},}, /* x */\n}",
		`{"mcpServers": {"a": {"type": "sse"}, "b b": [], "c": {"timeout": -1, "env": {"A": 1}}}}`,
		`{"mcpServers": {"a": {"command": "x"}, "a": {"url": "ftp://x"}}}`,
		`{"mcpServers": {"ü": {"command": "\u00fc", "tools": {"t": {"defer_loading": 1}}}}}`,
		`{"mcpServers": `,
		`[1, 2]`,
		"{\"mcpServers\": {\"a\": {\"command\": \"x\"}}} // end",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "f.json"
		servers, positions, diags := ParseServers(file, data)
		for _, d := range diags {
			if d.File != file || !validPos(data, d.Position) {
				t.Fatalf("diagnostic with a bad position %+v in %q", d, data)
			}
			if d.Message == "" {
				t.Fatalf("diagnostic without a message: %+v", d)
			}
			if d.Server != "" {
				if _, ok := servers[d.Server]; !ok {
					t.Fatalf("diagnostic names server %q that was not returned", d.Server)
				}
			}
		}
		for name := range servers {
			p, ok := positions[name]
			if !ok || !validPos(data, p) {
				t.Fatalf("server %q has a bad position %+v", name, p)
			}
		}
		// The cached position lookup agrees with the plain one, for offsets
		// asked in any order.
		pd := &jsoncDoc{file: file, data: data}
		for i := 0; i < min(len(data), 64); i++ {
			off := (int(data[i])*7919 + i*104729) % (len(data) + 1)
			if got, want := pd.pos(off), posAt(file, data, off); got != want {
				t.Fatalf("pos(%d) = %v, want %v (data %q)", off, got, want, data)
			}
		}

		// Cross-check with a standard decoder when the document parses
		// (hujson alone, as Standardize sees it) and has an mcpServers object.
		std, err := hujson.Standardize(slices.Clone(data))
		if err != nil {
			return
		}
		// Keys are case-sensitive: decode into maps, not a struct, whose
		// field matching would accept "mCpServers".
		var doc map[string]json.RawMessage
		var mcpServers map[string]json.RawMessage
		if json.Unmarshal(std, &doc) != nil || json.Unmarshal(doc["mcpServers"], &mcpServers) != nil {
			return
		}
		var want []string
		for k := range mcpServers {
			want = append(want, k)
		}
		slices.Sort(want)
		if got := sortedKeys(servers); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("server names %q, a JSON decoder sees %q", got, want)
		}
	})
}

// FuzzExpand checks ${VAR} expansion (docs/configuration.md, Environment
// expansion). Properties:
//   - it never panics, and only ever looks up valid names ([A-Z_][A-Z0-9_]*);
//   - a string with no "${" is returned unchanged (nothing to expand);
//   - missing names are sorted, unique, valid, and each was written in s
//     as "${NAME";
//   - fixed point: when no variable is set and s has no default (":-")
//     and no escape ("$${"), every placeholder is kept as written, so the
//     output is s itself;
//   - it agrees with refExpandInto, a simpler quadratic expander;
//   - values are inserted verbatim and never re-scanned: p+"${V}"+q gives
//     p+value+q for any value, when p and q hold no '$'.
func FuzzExpand(f *testing.F) {
	for _, seed := range [][2]string{
		{"plain", "v"},
		{"${HOME}/x", "${HOME}"},
		{"${A:-${B:-c}}", ""},
		{"$${X} ${lower} ${A", "$$"},
		{"${A:-}${B:-$${C}}", "}"},
		{"${${A}}", "B}"},
		{"ü${Ä}${_1:-\x00}", "\xff"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, s, value string) {
		checkedLookup := func(env map[string]string) func(string) (string, bool) {
			return func(k string) (string, bool) {
				if !IsVarName(k) {
					t.Fatalf("looked up invalid name %q", k)
				}
				v, ok := env[k]
				return v, ok
			}
		}
		env := map[string]string{"V": value, "SET": "x", "EMPTY": ""}
		out, missing := Expand(s, checkedLookup(env))
		if !strings.Contains(s, "${") && (out != s || missing != nil) {
			t.Fatalf("Expand(%q) = %q, %q; want it unchanged", s, out, missing)
		}
		if !slices.IsSorted(missing) || len(slices.Compact(slices.Clone(missing))) != len(missing) {
			t.Fatalf("missing %q is not sorted and unique", missing)
		}
		for _, m := range missing {
			if !IsVarName(m) || !strings.Contains(s, "${"+m) {
				t.Fatalf("missing %q: not a name written in %q", m, s)
			}
			if _, set := env[m]; set {
				t.Fatalf("missing %q is set", m)
			}
		}

		if !strings.Contains(s, ":-") && !strings.Contains(s, "$${") {
			if out, _ := Expand(s, checkedLookup(nil)); out != s {
				t.Fatalf("with nothing set, Expand(%q) = %q; want it unchanged", s, out)
			}
		}

		// The linear expander agrees with the obvious quadratic one.
		var ref strings.Builder
		refMiss := make(map[string]bool)
		refExpandInto(&ref, s, checkedLookup(env), refMiss)
		if wantMissing := sortedKeys(refMiss); ref.String() != out || !slices.Equal(wantMissing, missing) && len(wantMissing)+len(missing) > 0 {
			t.Fatalf("Expand(%q) = %q, %q; the reference gives %q, %q", s, out, missing, ref.String(), wantMissing)
		}

		p := strings.ReplaceAll(s, "$", "")
		q := strings.ReplaceAll(value, "$", "")
		if out, missing := Expand(p+"${V}"+q, checkedLookup(env)); out != p+value+q || missing != nil {
			t.Fatalf("Expand(%q) with V=%q = %q, %q; want %q", p+"${V}"+q, value, out, missing, p+value+q)
		}
	})
}

// refExpandInto is the first, obviously correct and quadratic, expander:
// it looks for a default's closing brace by scanning forward each time.
// FuzzExpand checks that Expand agrees with it.
func refExpandInto(b *strings.Builder, s string, lookup func(string) (string, bool), miss map[string]bool) {
	for i := 0; i < len(s); {
		if s[i] != '$' {
			j := strings.IndexByte(s[i:], '$')
			if j < 0 {
				b.WriteString(s[i:])
				return
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte('$')
			i++
			continue
		}
		name, def, hasDef, end := refPlaceholder(s, i)
		if end < 0 {
			b.WriteString("${")
			i += 2
			continue
		}
		if v, ok := lookup(name); ok {
			b.WriteString(v)
		} else if hasDef {
			refExpandInto(b, def, lookup, miss)
		} else {
			b.WriteString(s[i:end])
			miss[name] = true
		}
		i = end
	}
}

// placeholder parses the placeholder starting at s[i:] (which begins with
// "${"). It returns end < 0 when there is none.
func refPlaceholder(s string, i int) (name, def string, hasDef bool, end int) {
	j := i + 2
	k := j
	for k < len(s) && isVarByte(s[k], k == j) {
		k++
	}
	if k == j {
		return "", "", false, -1
	}
	name = s[j:k]
	switch {
	case k < len(s) && s[k] == '}':
		return name, "", false, k + 1
	case strings.HasPrefix(s[k:], ":-"):
		start := k + 2
		depth := 0
		for p := start; p < len(s); {
			switch {
			case strings.HasPrefix(s[p:], "$${"):
				depth++
				p += 3
			case strings.HasPrefix(s[p:], "${"):
				depth++
				p += 2
			case s[p] == '}':
				if depth == 0 {
					return name, s[start:p], true, p + 1
				}
				depth--
				p++
			default:
				p++
			}
		}
	}
	return "", "", false, -1
}

// FuzzSecretRefs feeds arbitrary strings to the ${secret:NAME} parser and
// to expansion with secrets. Properties: it never panics; every name it
// returns is a valid secret name; expansion asks for exactly the secrets
// SecretRefs names (never one a variable's value spells out, since every
// variable here holds a reference to "Z"), each answer lands in the output
// unscanned, and a string naming no secret expands as Expand does.
func FuzzSecretRefs(f *testing.F) {
	for _, seed := range []string{
		"", "${secret:A}", "Bearer ${secret:gh.token}", "$${secret:A}", "$$${secret:A}",
		"${X:-${secret:B}}", "${secret:A:-x}", "${secret:my key}", "${secret:", "${secret:a}b}",
		"${secret:${secret:A}}", "${A:-${secret:B}${secret:C}}", "${secret:Z}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, _ := SecretRefs(s)
		named := map[string]bool{}
		for _, n := range names {
			if !ValidSecretName(n) {
				t.Fatalf("SecretRefs(%q) returned the invalid name %q", s, n)
			}
			named[n] = true
		}
		lookup := func(string) (string, bool) { return "${secret:Z}", true }
		asked := map[string]bool{}
		out, err := expandSecrets(s, lookup, func(name string) (string, error) {
			asked[name] = true
			return "<" + name + ">", nil
		})
		if err != nil {
			t.Fatalf("expandSecrets(%q): %v", s, err)
		}
		for n := range asked {
			if !named[n] {
				t.Fatalf("expandSecrets(%q) looked up %q, which SecretRefs does not name (%v)", s, n, names)
			}
		}
		plain, _ := Expand(s, lookup)
		if len(names) == 0 && out != plain {
			t.Fatalf("no secret named, yet expandSecrets(%q) = %q and Expand = %q", s, out, plain)
		}
	})
}
