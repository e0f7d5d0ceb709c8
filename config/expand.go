package config

import (
	"os"
	"runtime"
	"strings"
)

// Expand replaces ${VAR} and ${VAR:-default} in s (docs/configuration.md,
// Environment expansion), reading
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
//   - On Windows, where HOME is usually unset, an unset HOME is
//     USERPROFILE (the folder os.UserHomeDir names there), so "${HOME}"
//     names the home directory on every system (mcp import writes it for
//     VS Code's ${userHome}). It is missing only when both are unset.
//
// Consequently a string holding no "${" is returned unchanged.
func Expand(s string, lookup func(string) (string, bool)) (out string, missing []string) {
	return expandOn(runtime.GOOS, s, lookup)
}

// expandOn is Expand as it is on the system goos (runtime.GOOS's values).
func expandOn(goos, s string, lookup func(string) (string, bool)) (out string, missing []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	e := expander{s: s, lookup: lookup, windows: goos == "windows", miss: make(map[string]bool), closeAt: matchBraces(s)}
	var b strings.Builder
	e.expand(&b, 0, len(s))
	if len(e.miss) > 0 {
		missing = sortedKeys(e.miss)
	}
	return b.String(), missing
}

type expander struct {
	s      string
	lookup func(string) (string, bool)
	// windows: an unset HOME is USERPROFILE (lookupVar).
	windows bool
	miss    map[string]bool
	// secret, if set, gives the value of ${secret:NAME}; when nil such a
	// reference is kept as written (see secretref.go).
	secret func(string) (string, error)
	// secretErr is secret's first error; badRef the first malformed
	// ${secret:…} reference.
	secretErr, badRef error
	// close maps the offset of each "{" that follows a "$" to the offset
	// of its balancing "}": computed once, it keeps expansion linear in
	// len(s) however placeholders nest or fail to close.
	closeAt map[int]int
}

// matchBraces pairs every "{" preceded by "$" (the brace of "${" and of
// the escape "$${") with the first later "}" at which as many of those
// have closed as opened since it. Other braces are plain text.
func matchBraces(s string) map[int]int {
	closeAt := make(map[int]int)
	var open []int
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '{' && s[i-1] == '$':
			open = append(open, i)
		case s[i] == '}' && len(open) > 0:
			closeAt[open[len(open)-1]] = i
			open = open[:len(open)-1]
		}
	}
	return closeAt
}

// expand writes the expansion of s[lo:hi] to b.
func (e *expander) expand(b *strings.Builder, lo, hi int) {
	s := e.s
	for i := lo; i < hi; {
		if s[i] != '$' {
			j := strings.IndexByte(s[i:hi], '$')
			if j < 0 {
				b.WriteString(s[i:hi])
				return
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		if strings.HasPrefix(s[i:hi], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:hi], "${") {
			b.WriteByte('$')
			i++
			continue
		}
		if strings.HasPrefix(s[i:hi], secretOpen) {
			name, end, err := parseSecretRef(s, i, hi)
			if err != nil {
				if e.badRef == nil {
					e.badRef = err
				}
				b.WriteString("${") // not a reference: kept as written
				i += 2
				continue
			}
			e.writeSecret(b, name, s[i:end])
			i = end
			continue
		}
		name, defLo, defHi, end := e.placeholder(i, hi)
		if end < 0 {
			b.WriteString("${")
			i += 2
			continue
		}
		if v, ok := e.lookupVar(name); ok {
			b.WriteString(v)
		} else if defLo >= 0 {
			e.expand(b, defLo, defHi)
		} else {
			b.WriteString(s[i:end])
			e.miss[name] = true
		}
		i = end
	}
}

// lookupVar is the value of the variable name: lookup's, but for an
// unset HOME on Windows, which is USERPROFILE (Expand).
func (e *expander) lookupVar(name string) (string, bool) {
	v, ok := e.lookup(name)
	if !ok && e.windows && name == "HOME" {
		return e.lookup("USERPROFILE")
	}
	return v, ok
}

// writeSecret writes the value of the secret name, or the reference as
// written when there is no secret lookup or it fails.
func (e *expander) writeSecret(b *strings.Builder, name, ref string) {
	if e.secret == nil {
		b.WriteString(ref)
		return
	}
	v, err := e.secret(name)
	if err != nil {
		if e.secretErr == nil {
			e.secretErr = err
		}
		b.WriteString(ref)
		return
	}
	b.WriteString(v)
}

// placeholder parses the placeholder at s[i:hi] (which begins with "${"):
// its name, its default s[defLo:defHi] (defLo < 0 when it has none) and
// the offset just past it. end < 0 means there is no placeholder.
func (e *expander) placeholder(i, hi int) (name string, defLo, defHi, end int) {
	s := e.s
	j := i + 2
	k := j
	for k < hi && isVarByte(s[k], k == j) {
		k++
	}
	if k == j {
		return "", -1, -1, -1
	}
	name = s[j:k]
	switch {
	case k < hi && s[k] == '}':
		return name, -1, -1, k + 1
	case strings.HasPrefix(s[k:hi], ":-"):
		// The name and ":-" hold no braces, so this "${" closes where
		// the default's own braces balance.
		if c, ok := e.closeAt[i+1]; ok && c < hi {
			return name, k + 2, c, c + 1
		}
	}
	return "", -1, -1, -1
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

// expandServer returns s with ${VAR} expanded in its fields (command, each args
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
