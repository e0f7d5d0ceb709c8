package toolsurface

import (
	"fmt"
	"strings"
)

// Pattern names MCP tools with the grammar of permission rules (see package
// policy):
// "mcp__server__tool" (one tool), "mcp__server__*" or "mcp__server" (all
// of a server's tools) and "mcp__*" (every MCP tool). A "*" may only stand
// for a whole last segment. Matching ignores case, and '-' and '.' count
// as '_'.
type Pattern struct {
	// Server is the server part as written; "" for mcp__*.
	Server string
	// Tool is the tool part as written; "" when the pattern covers all of
	// Server's tools.
	Tool string
}

// ParsePattern reads one tool pattern. It refuses, with a one-line error
// saying what is allowed, anything that is not an MCP tool pattern or
// puts "*" anywhere but a whole last segment (mcp__git*, mcp__github__get_*).
func ParsePattern(s string) (Pattern, error) {
	orig := s
	rest, ok := cutPrefixFold(s, Prefix)
	if !ok {
		return Pattern{}, fmt.Errorf("pattern %s is not an MCP tool pattern: write mcp__<server>, mcp__<server>__<tool>, mcp__<server>__* or mcp__*", quote(orig))
	}
	if rest == "*" {
		return Pattern{}, nil
	}
	server, tool, hasTool := strings.Cut(rest, Separator)
	switch {
	case server == "":
		return Pattern{}, fmt.Errorf("pattern %s names no server: write mcp__<server>[__<tool>]", quote(orig))
	case strings.Contains(server, "*"):
		return Pattern{}, fmt.Errorf("pattern %s: * may only replace a whole last segment, as in mcp__* or mcp__<server>__*", quote(orig))
	case server[0] == '_' || server[len(server)-1] == '_':
		// mcp___x or mcp__x___y: where the server ends and the separator
		// begins is ambiguous.
		return Pattern{}, fmt.Errorf("pattern %s is ambiguous: a server name in a pattern may not start or end with '_'", quote(orig))
	case !hasTool:
		tool = ""
	case tool == "":
		return Pattern{}, fmt.Errorf("pattern %s ends in __ without a tool: write mcp__%s__<tool> or mcp__%s__*", quote(orig), server, server)
	case tool == "*":
		tool = ""
	case strings.Contains(tool, "*"):
		return Pattern{}, fmt.Errorf("pattern %s: * may only replace a whole last segment, as in mcp__%s__*", quote(orig), server)
	}
	for _, part := range []string{server, tool} {
		for _, r := range part {
			if !legal(r) && r != '.' {
				return Pattern{}, fmt.Errorf("pattern %s holds %q: tool names use only letters, digits, '_', '-' and '.'", quote(orig), r)
			}
		}
	}
	return Pattern{Server: server, Tool: tool}, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// String renders the pattern in its canonical form (mcp__*, mcp__s__*,
// mcp__s__t).
func (p Pattern) String() string {
	switch {
	case p.Server == "":
		return Prefix + "*"
	case p.Tool == "":
		return Prefix + p.Server + Separator + "*"
	}
	return Prefix + p.Server + Separator + p.Tool
}

// Match reports whether the pattern covers tool of server (their original
// names, as servers send them).
func (p Pattern) Match(server, tool string) bool {
	if p.Server == "" {
		return true
	}
	full := foldName(SanitizePart(server) + Separator + SanitizePart(tool))
	if p.Tool == "" {
		return strings.HasPrefix(full, foldName(p.Server+Separator))
	}
	return full == foldName(p.Server+Separator+p.Tool)
}

// foldName is the comparison form of permission rules: lower case, '-' and
// '.' as '_'.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == '.':
			return '_'
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// Modifiers are the session's tool-loading modifiers (--tools;
// docs/configuration.md, Flags): which
// tools to defer or keep loaded, over what the configuration says.
type Modifiers struct {
	// Default is set when the list says "default": start from the
	// configuration. The configuration applies either way; the word is
	// accepted so that lists read as Claude Code's do.
	Default bool
	// Defer and NoDefer hold the patterns of Defer(…) and NoDefer(…), in
	// the order written.
	Defer, NoDefer []Pattern
}

// IsZero reports whether m changes nothing.
func (m Modifiers) IsZero() bool { return len(m.Defer) == 0 && len(m.NoDefer) == 0 }

// Decide says what the modifiers want for tool of server: deferred or not,
// and whether any modifier spoke at all (set is false when none matched,
// and the configuration decides). NoDefer beats Defer.
func (m Modifiers) Decide(server, tool string) (deferred, set bool) {
	for _, p := range m.NoDefer {
		if p.Match(server, tool) {
			return false, true
		}
	}
	for _, p := range m.Defer {
		if p.Match(server, tool) {
			return true, true
		}
	}
	return false, false
}

// String renders m so that ParseToolModifiers reads it back as m.
func (m Modifiers) String() string {
	var parts []string
	if m.Default {
		parts = append(parts, "default")
	}
	group := func(name string, ps []Pattern) {
		if len(ps) == 0 {
			return
		}
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = p.String()
		}
		parts = append(parts, name+"("+strings.Join(s, ",")+")")
	}
	group("Defer", m.Defer)
	group("NoDefer", m.NoDefer)
	return strings.Join(parts, ",")
}

// ParseToolModifiers reads a --tools value: a comma-separated list of
// "default", "Defer(PATTERN[,PATTERN…])" and "NoDefer(PATTERN[,PATTERN…])"
// (keywords in any case; patterns as ParsePattern; spaces around items
// are ignored, as are empty items). For example:
//
//	default,Defer(mcp__github__*),NoDefer(mcp__time__now)
//
// Anything else is an error of one line naming the offending item.
func ParseToolModifiers(s string) (Modifiers, error) {
	var m Modifiers
	items, err := splitTop(s)
	if err != nil {
		return Modifiers{}, err
	}
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.EqualFold(item, "default") {
			m.Default = true
			continue
		}
		open := strings.IndexByte(item, '(')
		if open < 0 || !strings.HasSuffix(item, ")") {
			return Modifiers{}, fmt.Errorf("--tools: unknown item %s: expected default, Defer(PATTERN) or NoDefer(PATTERN)", quote(item))
		}
		kw, inner := strings.TrimSpace(item[:open]), item[open+1:len(item)-1]
		var dst *[]Pattern
		switch {
		case strings.EqualFold(kw, "Defer"):
			dst = &m.Defer
		case strings.EqualFold(kw, "NoDefer"):
			dst = &m.NoDefer
		default:
			return Modifiers{}, fmt.Errorf("--tools: unknown modifier %s: expected Defer(PATTERN) or NoDefer(PATTERN)", quote(kw))
		}
		n := 0
		for _, ps := range strings.FieldsFunc(inner, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			p, err := ParsePattern(ps)
			if err != nil {
				return Modifiers{}, fmt.Errorf("--tools: %s: %w", kw, err)
			}
			*dst = append(*dst, p)
			n++
		}
		if n == 0 {
			return Modifiers{}, fmt.Errorf("--tools: %s() names no tools: write %s(mcp__<server>__<tool>)", kw, kw)
		}
	}
	return m, nil
}

// splitTop splits s at the commas outside parentheses and checks that
// parentheses balance and do not nest.
func splitTop(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			if depth > 0 {
				return nil, fmt.Errorf("--tools: nested parentheses at byte %d of %s", i+1, quote(s))
			}
			depth++
		case ')':
			if depth == 0 {
				return nil, fmt.Errorf("--tools: unmatched ) at byte %d of %s", i+1, quote(s))
			}
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("--tools: unclosed ( in %s", quote(s))
	}
	return append(out, s[start:]), nil
}
