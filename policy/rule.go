package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Action is what a decision or a rule list says about a call.
type Action string

// The three actions, which are also the names of the three rule lists.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// mcpPrefix starts every MCP tool name and every rule about one.
const mcpPrefix = "mcp__"

// patternKind is what a rule's name part covers.
type patternKind int

const (
	kindNone   patternKind = iota // matches nothing (see Pattern.never)
	kindAll                       // mcp__*
	kindServer                    // mcp__server__* (or mcp__server: see kindName)
	kindName                      // mcp__server or mcp__server__tool
)

// Pattern is a parsed rule text. The zero Pattern matches nothing.
type Pattern struct {
	text string
	kind patternKind
	// name is the folded text after "mcp__" (without a trailing "__*").
	name string
	// server and tool are name parsed (see ParseRule): the server segment
	// ends at the first "__"; tool is "" for a whole-server pattern.
	server, tool string
	args         []argMatch
	never        string // why a well-formed pattern matches nothing
}

// argMatch is one k:"glob" constraint of an argument rule.
type argMatch struct {
	key  string
	glob string
	re   *regexp.Regexp
}

// ParseRule parses a rule text (the grammar is in the package doc). A
// malformed rule (bad argument
// syntax, characters no tool name can hold) returns an error and a Pattern
// that matches nothing. A well-formed rule that can never match an MCP tool
// by the grammar (mcp__git*, mcp__github__get_*, a bare *, a rule for
// something other than an MCP tool) is not an error: its Pattern matches
// nothing and [Pattern.Never] says why.
//
// The name part is read as a (server, tool) pair, never as a joined string:
// after folding, the server segment is everything up to the first "__"
// after mcp__, and the tool the rest (mcp__a__b__c is server a, tool
// b__c). That reading is unambiguous because no server may have a name
// that holds "__" or ends in "_" once folded ([ServerNameProblem]): the
// host refuses such servers, so mcp__a__b__c can never mean server a__b,
// tool c — nor mcp__a__b__* all tools of a server a__b, which is why that
// rule matches nothing.
func ParseRule(text string) (Pattern, error) {
	p := Pattern{text: text}
	t := strings.TrimSpace(text)
	if t == "" {
		p.never = "the rule is empty"
		return p, errors.New("empty rule")
	}
	if !utf8.ValidString(t) {
		p.never = "the rule is not valid UTF-8"
		return p, errors.New("the rule is not valid UTF-8")
	}
	name := t
	if i := strings.IndexByte(t, '('); i >= 0 {
		name = t[:i]
		args, err := parseArgs(t[i+1:])
		if err != nil {
			p.never = "the rule is malformed"
			return p, fmt.Errorf("argument list: %w", err)
		}
		p.args = args
	} else if strings.IndexByte(t, ')') >= 0 {
		p.never = "the rule is malformed"
		return p, errors.New(`")" without "("`)
	}
	name = strings.TrimSpace(name)
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == '*') {
			p.never = "the rule is malformed"
			return p, fmt.Errorf("%q cannot appear in a tool name; rules use letters, digits, _, - and . (and * as a whole last segment)", r)
		}
	}
	if name == "*" {
		p.never = "a bare * has no effect on MCP tools; write mcp__* (in deny or ask) or mcp__<server>"
		return p, nil
	}
	f := fold(name)
	rest, ok := strings.CutPrefix(f, mcpPrefix)
	switch {
	case !ok:
		p.never = "it does not name an MCP tool; MCP rules start with mcp__"
	case rest == "*":
		p.kind = kindAll
	case rest == "" || rest == "__*":
		p.never = "it names no server; write mcp__<server> or mcp__<server>__<tool>"
	case strings.HasSuffix(rest, "__*") && !strings.Contains(rest[:len(rest)-3], "*"):
		p.kind, p.name, p.server = kindServer, rest[:len(rest)-3], rest[:len(rest)-3]
	case strings.Contains(rest, "*"):
		p.never = "* may replace only a whole last segment (mcp__<server>__*); this rule matches nothing"
	default:
		p.kind, p.name = kindName, rest
		p.server, p.tool, _ = strings.Cut(rest, "__")
	}
	if p.kind != kindNone && p.kind != kindAll {
		if why := foldedServerProblem(p.server); why != "" {
			p.kind, p.never = kindNone, "no server can be named "+p.server+" ("+why+"); this rule matches nothing"
		}
	}
	return p, nil
}

// ServerNameProblem says why a configured server name cannot be told apart
// from another server's tools in tool names (mcp__<server>__<tool>) and
// permission rules, or returns "". Rules fold case and count - and . as _
// (see the package doc), and read the server segment up to the first "__"; so, once
// folded, a server name must not hold "__" (server a__b's tool c and server
// a's tool b__c would both be mcp__a__b__c) nor end in "_" (server a_'s
// tool c and server a's tool _c would both be mcp__a___c). A host puts a
// server with such a name in error instead of starting it.
func ServerNameProblem(name string) string {
	return foldedServerProblem(fold(name))
}

func foldedServerProblem(f string) string {
	switch {
	case strings.Contains(f, "__"):
		return `its name holds "__" once - and . count as _, so its tools' names and rules could mean another server's tools`
	case strings.HasSuffix(f, "_"):
		return `its name ends in _ (or - or .), so its tools' names and rules could mean another server's tools`
	}
	return ""
}

// SameServerName reports whether server names a and b are one name to
// tool names and permission rules: equal once case is ignored and - and .
// count as _ (my-srv, my_srv, My.Srv). Two such servers never both run
// (ServerConflicts), so a tool that adds a server refuses a name that
// another configured server's equals this way.
func SameServerName(a, b string) bool {
	return fold(a) == fold(b)
}

// ServerConflicts returns, for every server of names that must not run,
// why: its name has a [ServerNameProblem], or another name equals it once
// folded (my-srv, my_srv and My.Srv are one server to every rule), in
// which case every server of that group is refused — a rule cannot say
// which one it meant, and refusing all of them (rather than, say, the
// later one by name order) leaves nothing for a repository to win by
// picking a name. The result depends only on the set of names, never on
// their order or on which server connected first.
func ServerConflicts(names []string) map[string]string {
	groups := map[string][]string{}
	for _, n := range names {
		f := fold(n)
		if !slices.Contains(groups[f], n) {
			groups[f] = append(groups[f], n)
		}
	}
	out := map[string]string{}
	for f, group := range groups {
		sort.Strings(group)
		for _, n := range group {
			if why := foldedServerProblem(f); why != "" {
				out[n] = fmt.Sprintf("server name %q cannot be used: %s; rename it", n, why)
				continue
			}
			if len(group) > 1 {
				out[n] = fmt.Sprintf("server names %s are one name to tool names and permission rules (case is ignored, - and . count as _); none of them runs until all but one are renamed",
					quoteAll(group))
			}
		}
	}
	return out
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// parseArgs parses `k:"v", k2:"v2")` — the text after "(" up to and
// including the final ")", which must end the rule.
func parseArgs(s string) ([]argMatch, error) {
	var out []argMatch
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for {
		skip()
		if i < len(s) && s[i] == ')' && len(out) == 0 {
			return nil, errors.New(`empty argument list; write (name:"glob")`)
		}
		// Key: bare word or quoted string.
		var key string
		if i < len(s) && s[i] == '"' {
			k, n, err := quoted(s[i:])
			if err != nil {
				return nil, err
			}
			key, i = k, i+n
		} else {
			start := i
			for i < len(s) && isKeyByte(s[i]) {
				i++
			}
			key = s[start:i]
		}
		if key == "" {
			return nil, errors.New(`expected an argument name, as in (path:"/tmp/**")`)
		}
		skip()
		if i >= len(s) || s[i] != ':' {
			return nil, fmt.Errorf(`expected ":" after argument name %q`, key)
		}
		i++
		skip()
		if i >= len(s) || s[i] != '"' {
			return nil, fmt.Errorf(`the value of %q must be a double-quoted glob, as in %s:"/tmp/**"`, key, key)
		}
		v, n, err := quoted(s[i:])
		if err != nil {
			return nil, err
		}
		i += n
		out = append(out, argMatch{key: key, glob: v, re: compileGlob(v)})
		skip()
		switch {
		case i < len(s) && s[i] == ',':
			i++
		case i < len(s) && s[i] == ')':
			if strings.TrimSpace(s[i+1:]) != "" {
				return nil, errors.New(`text after the closing ")"`)
			}
			return out, nil
		default:
			return nil, errors.New(`expected "," or ")" after an argument`)
		}
	}
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '$'
}

// quoted reads a JSON string at the start of s and returns its value and
// length.
func quoted(s string) (string, int, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			var v string
			if err := json.Unmarshal([]byte(s[:i+1]), &v); err != nil {
				return "", 0, fmt.Errorf("bad string %s: %v", s[:i+1], err)
			}
			return v, i + 1, nil
		}
	}
	return "", 0, errors.New(`unterminated string: missing closing "`)
}

// compileGlob turns a glob into an anchored regexp: ** matches anything,
// * anything but /, and every other character itself.
func compileGlob(g string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	for i := 0; i < len(g); {
		switch {
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(`.*`)
			i += 2
			for i < len(g) && g[i] == '*' { // *** is **
				i++
			}
		case g[i] == '*':
			b.WriteString(`[^/]*`)
			i++
		default:
			r, n := utf8.DecodeRuneInString(g[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteString(regexp.QuoteMeta(g[i : i+1]))
			} else {
				b.WriteString(regexp.QuoteMeta(g[i : i+n]))
			}
			i += n
		}
	}
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// fold maps a name onto the alphabet rules compare in: ASCII letters
// lower-cased, digits and _ kept, and every other character (-, ., and
// whatever a server's name holds that a tool name cannot) made _. A name
// already in that alphabet is returned as it is, without allocating.
func fold(s string) string {
	i := 0
	for i < len(s) && isFolded(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '*':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// isFolded reports whether fold keeps the byte c as it is.
func isFolded(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '*'
}

// Text returns the rule as written.
func (p Pattern) Text() string { return p.text }

// Never returns why the pattern can match no MCP tool, or "" when it can
// match some. A malformed rule's Pattern also never matches.
func (p Pattern) Never() string {
	if p.kind == kindNone && p.never == "" {
		return "the rule is malformed"
	}
	return p.never
}

// AllTools reports whether the pattern is mcp__* (with or without
// argument constraints).
func (p Pattern) AllTools() bool { return p.kind == kindAll }

// HasArgs reports whether the pattern constrains arguments.
func (p Pattern) HasArgs() bool { return len(p.args) > 0 }

// NamesTool reports whether the pattern names one tool exactly
// (mcp__server__tool, with or without argument conditions), as opposed to
// every tool of a server or of every server. Only such an allow rule
// allows a tool that declares destructiveHint.
func (p Pattern) NamesTool() bool { return p.kind == kindName && p.tool != "" }

// Server and Tool return the pattern's folded server and tool parts: for
// mcp__GitHub__get_me, "github" and "get_me". Tool is "" for a pattern of
// a whole server (or of every server), both are "" for one that never
// matches.
func (p Pattern) Server() string {
	if p.kind == kindNone {
		return ""
	}
	return p.server
}

// Tool: see [Pattern.Server].
func (p Pattern) Tool() string {
	if p.kind == kindNone {
		return ""
	}
	return p.tool
}

// NamesServer reports whether the pattern can match a tool of the named
// server: mcp__* names every server; a pattern that never matches names
// none.
func (p Pattern) NamesServer(server string) bool {
	s := fold(server)
	switch p.kind {
	case kindAll:
		return true
	case kindServer, kindName:
		return p.server == s
	}
	return false
}

// WholeServer reports whether the pattern covers every tool of the named
// server (mcp__server, mcp__server__*), as opposed to one of its tools.
func (p Pattern) WholeServer(server string) bool {
	return (p.kind == kindServer || p.kind == kindName) && p.tool == "" && p.server == fold(server)
}

// MatchName reports whether the pattern names req's tool, leaving its
// argument constraints aside.
func (p Pattern) MatchName(req Request) bool { return p.matchName(req) }

// Match reports whether the pattern matches the tool and arguments of req
// (Annotations and Autopilot play no part). Argument globs are matched
// against the value as given.
func (p Pattern) Match(req Request) bool {
	return p.matchName(req) && p.matchArgs(req.Args, func(re *regexp.Regexp, v string) bool { return re.MatchString(v) })
}

// matchName compares the name part with the request's server and tool, and
// with its full model-visible name (which may be a cut, hashed form).
func (p Pattern) matchName(req Request) bool {
	fr := foldRequest(req)
	return p.matchFolded(&fr)
}

// foldedRequest is a request's names folded once, for comparing with
// every rule of a policy.
type foldedRequest struct {
	server string // folded server name ("" when none)
	tool   string // folded tool name ("" when none)
	// shown is the tool part of the folded full (model-visible) name, when
	// that name starts with the folded server and "__": it differs from
	// tool when the name was cut to fit and ends in a hash.
	shown  string
	anyMCP bool // the request names an MCP tool (for mcp__*)
}

func foldRequest(req Request) foldedRequest {
	server, tool := req.Server, req.ToolName
	if server == "" {
		if rest, ok := strings.CutPrefix(req.Tool, mcpPrefix); ok {
			server, tool, _ = strings.Cut(rest, "__")
		}
	}
	fr := foldedRequest{
		server: fold(server),
		tool:   fold(tool),
		anyMCP: server != "" || strings.HasPrefix(req.Tool, mcpPrefix),
	}
	if full, ok := strings.CutPrefix(fold(req.Tool), mcpPrefix); ok && fr.server != "" {
		fr.shown, _ = strings.CutPrefix(full, fr.server+"__")
	}
	return fr
}

// matchFolded is matchName on a folded request: the pattern's server must
// be the request's server, and its tool (if any) the request's tool or the
// tool part of the name the model saw (a cut name, whose hash covers the
// server's and the tool's own names). The joined string is never compared
// as a whole, so no split of it can name another server.
func (p *Pattern) matchFolded(fr *foldedRequest) bool {
	switch p.kind {
	case kindAll:
		return fr.anyMCP
	case kindServer, kindName:
		if fr.server == "" || p.server != fr.server {
			return false
		}
		return p.tool == "" || (fr.tool != "" && p.tool == fr.tool) || (fr.shown != "" && p.tool == fr.shown)
	}
	return false
}

// matchArgs checks every argument constraint with match.
func (p Pattern) matchArgs(args map[string]any, match func(*regexp.Regexp, string) bool) bool {
	for _, a := range p.args {
		v, ok := args[a.key].(string)
		if !ok || !match(a.re, v) {
			return false
		}
	}
	return true
}

// cleanVariants returns the forms of an argument value a glob is tried
// against: the value, and for a path the cleaned path too, so that
// /tmp/../etc/passwd is not taken for a path under /tmp.
func cleanVariants(v string) (string, string, bool) {
	if !strings.Contains(v, "/") {
		return v, v, false
	}
	c := path.Clean(v)
	return v, c, c != v
}
