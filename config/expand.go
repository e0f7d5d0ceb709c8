package config

import (
	"os"
	"sort"
	"strings"
)

// Expand replaces ${VAR} and ${VAR:-default} in s (§1.6), reading
// variables with lookup (os.LookupEnv if nil). It returns the expanded
// string and the names that were unset and had no default, sorted and
// without duplicates. The rules, precisely:
//
//   - VAR must match [A-Z_][A-Z0-9_]*. A "${" not followed by such a name
//     and then "}" or ":-default}" is not a placeholder: it is kept as
//     written (so "${lower}", "${A-x}" and an unterminated "${A" stay as
//     they are, and are not reported missing), and scanning goes on right
//     after that "${".
//   - A variable set to the empty string is set.
//   - An unset variable without a default keeps its placeholder and is
//     reported missing.
//   - ${VAR:-default}: an unset VAR gives the default, which is itself
//     expanded (so "${A:-${B}}" falls back to B, and B is reported only
//     when A is unset). "${A:-}" gives "" and reports nothing. The default
//     ends at the "}" that balances its own "${" pairs.
//   - "$${" is an escaped "${": "$${X}" gives the literal "${X}". A "$$"
//     not followed by "{" is left alone, so "a$$b" stays "a$$b".
//   - Substituted values are never scanned again: a variable whose value
//     holds "${X}" puts exactly that text in the output.
//
// Consequently a string holding no "${" is returned unchanged.
func Expand(s string, lookup func(string) (string, bool)) (out string, missing []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var b strings.Builder
	miss := make(map[string]bool)
	expandInto(&b, s, lookup, miss)
	if len(miss) > 0 {
		missing = make([]string, 0, len(miss))
		for k := range miss {
			missing = append(missing, k)
		}
		sort.Strings(missing)
	}
	return b.String(), missing
}

func expandInto(b *strings.Builder, s string, lookup func(string) (string, bool), miss map[string]bool) {
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
		name, def, hasDef, end := placeholder(s, i)
		if end < 0 {
			b.WriteString("${")
			i += 2
			continue
		}
		if v, ok := lookup(name); ok {
			b.WriteString(v)
		} else if hasDef {
			expandInto(b, def, lookup, miss)
		} else {
			b.WriteString(s[i:end])
			miss[name] = true
		}
		i = end
	}
}

// placeholder parses the placeholder starting at s[i:] (which begins with
// "${"). It returns end < 0 when there is none.
func placeholder(s string, i int) (name, def string, hasDef bool, end int) {
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

func isVarByte(c byte, first bool) bool {
	return c == '_' || ('A' <= c && c <= 'Z') || (!first && '0' <= c && c <= '9')
}

// IsVarName reports whether name can be expanded as ${name}:
// [A-Z_][A-Z0-9_]*.
func IsVarName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isVarByte(name[i], i == 0) {
			return false
		}
	}
	return true
}

// expandServer returns s with §1.6's fields expanded (command, each args
// item, env values, url, header values; never keys) and its type
// inferred, plus the missing variables of all of them, sorted and unique.
// The result shares no slice or map with s.
func expandServer(s Server, lookup func(string) (string, bool)) (Server, []string) {
	miss := make(map[string]bool)
	exp := func(v string) string {
		out, m := Expand(v, lookup)
		for _, name := range m {
			miss[name] = true
		}
		return out
	}
	e := s
	e.Type = InferType(s)
	e.Command = exp(s.Command)
	e.URL = exp(s.URL)
	if s.Args != nil {
		e.Args = make([]string, len(s.Args))
		for i, a := range s.Args {
			e.Args[i] = exp(a)
		}
	}
	e.Env = expandMap(s.Env, exp)
	e.Headers = expandMap(s.Headers, exp)
	if s.EnvPassthrough != nil {
		e.EnvPassthrough = append([]string(nil), s.EnvPassthrough...)
	}
	if s.Tools != nil {
		e.Tools = make(map[string]ToolConfig, len(s.Tools))
		for k, v := range s.Tools {
			e.Tools[k] = v
		}
	}
	e.Enabled = copyBool(s.Enabled)
	e.DeferLoading = copyBool(s.DeferLoading)
	if len(miss) == 0 {
		return e, nil
	}
	return e, sortedKeys(miss)
}

func copyBool(p *bool) *bool {
	if p == nil {
		return nil
	}
	b := *p
	return &b
}

func expandMap(m map[string]string, exp func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) { // sorted: the same input always reports the same way
		out[k] = exp(m[k])
	}
	return out
}
