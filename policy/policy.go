package policy

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Scope says which settings a rule came from.
type Scope string

// The rule sources (docs/security.md, Where rules come from), and the
// session scope of rules an embedder
// or a command adds for one run.
const (
	ScopeManaged Scope = "managed" // <managed dir>/managed-settings.json
	ScopeFlag    Scope = "flag"    // --settings
	ScopeLocal   Scope = "local"   // ~/.switchboard/settings.json "projects"[<workspace>]
	ScopeUser    Scope = "user"    // ~/.switchboard/settings.json
	ScopeProject Scope = "project" // <root>/.switchboard/settings.json: deny and ask only
	ScopeSession Scope = "session" // handed in by an embedder or a command
	// ScopePrincipal rules apply to the calls of one principal (or the
	// members of one group) of a team gateway; see [Scoped].
	ScopePrincipal Scope = "principal"
)

// scopeOrder is the order rules are reported in when several match: the
// administrator's first, the repository's last.
var scopeOrder = map[Scope]int{ScopeManaged: 0, ScopeFlag: 1, ScopeSession: 2, ScopePrincipal: 2, ScopeLocal: 3, ScopeUser: 4, ScopeProject: 5}

// Source is where a rule was written.
type Source struct {
	Scope Scope `json:"scope"`
	// File is the settings file ("" for inline --settings or rules handed
	// in by code).
	File string `json:"file,omitempty"`
	// Principal is the principal or "group:<name>" a ScopePrincipal rule
	// is for.
	Principal string `json:"principal,omitempty"`
	// Profile is the settings profile whose "permissions" hold the rule
	// ("" for a rule of the settings' own "permissions"); see
	// [ProfileRules].
	Profile string `json:"profile,omitempty"`
}

// String names the source for people: "user settings /home/u/.switchboard/settings.json".
func (s Source) String() string {
	name := string(s.Scope) + " settings"
	switch s.Scope {
	case ScopeFlag:
		name = "--settings"
	case ScopeSession:
		name = "session rules"
	case ScopePrincipal:
		name = "gateway rules for " + s.Principal
		if s.File != "" {
			return name + " in " + s.File
		}
	}
	if s.Profile != "" {
		name = fmt.Sprintf("profile %q of %s", s.Profile, name)
	}
	if s.File != "" {
		return name + " " + s.File
	}
	return name
}

// Rule is one entry of a "permissions" list.
type Rule struct {
	// Text is the rule as written.
	Text string `json:"rule"`
	// List is the list it is in: allow, ask or deny.
	List   Action `json:"list"`
	Source Source `json:"source"`

	pat Pattern
	err error
}

// NewRule parses text as a rule of list from src. A malformed rule is kept
// (it matches nothing; see [Rule.Problem]).
func NewRule(list Action, text string, src Source) Rule {
	p, err := ParseRule(text)
	return Rule{Text: text, List: list, Source: src, pat: p, err: err}
}

// Pattern returns the parsed rule.
func (r Rule) Pattern() Pattern { return r.pat }

// Err returns why the rule is malformed, or nil.
func (r Rule) Err() error { return r.err }

// String renders the rule and its source: `"mcp__github" (allow, user settings …)`.
func (r Rule) String() string {
	return fmt.Sprintf("%q (%s, %s)", r.Text, r.List, r.Source)
}

// Problem returns why the rule can never take effect, or "": it is
// malformed, matches nothing by the grammar, is mcp__* in allow, or is an
// allow rule of the project's own settings.
func (r Rule) Problem() string {
	switch {
	case r.err != nil:
		return "malformed rule: " + r.err.Error()
	case r.pat.Never() != "":
		return r.pat.Never()
	case r.List == Allow && r.Source.Scope == ScopeProject:
		return "allow rules in the project's own settings are ignored: a repository may only tighten permissions (deny, ask); put the rule in your user or local settings"
	case r.List == Allow && r.pat.kind == kindAll:
		return "mcp__* has no effect in allow (it would allow every tool of every server); allow servers or tools one by one"
	}
	return ""
}

// effective reports whether the rule can decide anything: Problem() is
// "" (checked without building its message).
func (r *Rule) effective() bool {
	switch {
	case r.err != nil, r.pat.Never() != "":
		return false
	case r.List == Allow && (r.Source.Scope == ScopeProject || r.pat.kind == kindAll):
		return false
	}
	return true
}

// Matches reports whether the rule applies to req. Argument globs of allow
// rules must match both the value and, for a path, its cleaned form; those
// of deny and ask rules match either, so that "/tmp/../etc" neither slips
// past a deny of /etc/** nor into an allow of /tmp/**.
func (r Rule) Matches(req Request) bool {
	if !r.effective() {
		return false
	}
	fr := foldRequest(req)
	return r.matches(&fr, req.Args)
}

// matches is Matches for an effective rule and a folded request.
func (r *Rule) matches(fr *foldedRequest, args map[string]any) bool {
	if !r.pat.matchFolded(fr) {
		return false
	}
	strict := r.List == Allow
	for i := range r.pat.args {
		a := &r.pat.args[i]
		v, ok := args[a.key].(string)
		if !ok || !matchValue(a.re, v, strict) {
			return false
		}
	}
	return true
}

// matchValue matches one argument glob: for a path that cleaning changes,
// strict (allow) needs both forms to match, others either.
func matchValue(re *regexp.Regexp, v string, strict bool) bool {
	raw, clean, differ := cleanVariants(v)
	if !differ {
		return re.MatchString(raw)
	}
	if strict {
		return re.MatchString(raw) && re.MatchString(clean)
	}
	return re.MatchString(raw) || re.MatchString(clean)
}

// Annotations are the hints a server declares for a tool. They are
// untrusted: they can only make a decision stricter.
type Annotations struct {
	// ReadOnlyHint grants nothing; it is carried for completeness.
	ReadOnlyHint bool
	// DestructiveHint is true when the server explicitly declared
	// destructiveHint: true. A call allowed only by a broad grant
	// (mcp__server, mcp__server__*) is then asked for; an allow rule that
	// names the tool exactly still allows it: the user named that tool.
	DestructiveHint bool
}

// Request is one tool call to decide.
type Request struct {
	// Tool is the full name the model sees: mcp__<server>__<tool>.
	Tool string
	// Server and ToolName are the configured server name and the server's
	// own tool name. When Server is empty they are read from Tool.
	Server   string
	ToolName string
	// Args are the call's arguments (a JSON object, decoded).
	Args        map[string]any
	Annotations Annotations
	// Autopilot says the agent skips questions for its own tools. It does
	// not skip them for MCP tools: an MCP tool no rule allows is still
	// asked for.
	Autopilot bool
}

// Decision is the answer for one Request.
type Decision struct {
	Action Action `json:"action"`
	// Rule is the rule that decided, nil when none matched (the default
	// is ask). For a tool that declares destructiveHint and is allowed
	// only by a broad grant it is that allow rule, overridden.
	Rule *Rule `json:"rule,omitempty"`
	// Reason says in one line why.
	Reason string `json:"reason"`
	// Suggest is the rule that would allow the call without asking, for
	// messages: the tool's own name, e.g. mcp__github__merge_pull_request
	// (which allows a destructive tool too, since it names it). Empty when
	// no allow rule can help (a deny or ask rule decided).
	Suggest string `json:"suggest,omitempty"`
	// TightenedBy names the tool annotation that turned an allow into an
	// ask ("destructiveHint"), or is "".
	TightenedBy string `json:"tightenedBy,omitempty"`
}

// TightenedByDestructive is Decision.TightenedBy when a tool's
// destructiveHint kept a broad grant from allowing it.
const TightenedByDestructive = "destructiveHint"

// Policy is a set of rules from every source. A nil or empty Policy asks
// for every call. It is immutable and safe for concurrent use.
type Policy struct {
	rules    []Rule
	problems []Problem
	// allowOff, when set, is why every allow rule is off: a settings file
	// could not be read, so the deny rules it may hold are unknown.
	allowOff string
	// denyAll, when set, is why every MCP call is denied: the managed
	// settings, whose deny rules nobody else may lift, could not be read.
	denyAll string
	// lists are the effective rules by list, prepared once by compile.
	lists *ruleLists
}

// ruleLists are a Policy's effective rules of each list, each list in the
// order rules are reported in (scope, then source order), with their
// reasons rendered once: Decide takes the first that matches.
type ruleLists struct {
	deny, ask, allow []compiledRule
	// withArgs are the effective rules of every list that have argument
	// conditions: the only ones for which Decide reads Request.Args.
	withArgs []*Rule
}

type compiledRule struct {
	rule   *Rule
	reason string // the Decision's reason when this rule decides
	// destructive is the reason when an allow rule is overridden by the
	// tool's destructiveHint.
	destructive string
}

// compile prepares p.lists from p.rules; New, With and Load call it before
// the Policy is shared.
func (p *Policy) compile() {
	p.lists = compileRules(p.rules)
}

func compileRules(rules []Rule) *ruleLists {
	l := &ruleLists{}
	for i := range rules {
		r := &rules[i]
		if !r.effective() {
			continue
		}
		if r.pat.HasArgs() {
			l.withArgs = append(l.withArgs, r)
		}
		s := r.String()
		switch r.List {
		case Deny:
			l.deny = append(l.deny, compiledRule{rule: r, reason: "denied by rule " + s})
		case Ask:
			l.ask = append(l.ask, compiledRule{rule: r, reason: "rule " + s + " says to ask"})
		case Allow:
			l.allow = append(l.allow, compiledRule{rule: r, reason: "allowed by rule " + s,
				destructive: "the tool declares destructiveHint: true, so it is asked for even though rule " + s +
					" allows it: a grant of a whole server does not cover a destructive tool; a rule naming the tool does"})
		}
	}
	for _, list := range [][]compiledRule{l.deny, l.ask, l.allow} {
		sort.SliceStable(list, func(i, j int) bool {
			return scopeOrder[list[i].rule.Source.Scope] < scopeOrder[list[j].rule.Source.Scope]
		})
	}
	return l
}

// firstExact returns the first rule of list that names the request's tool
// exactly (mcp__server__tool, with or without argument conditions) and
// matches, or nil.
func firstExact(list []compiledRule, fr *foldedRequest, args map[string]any) *compiledRule {
	for i := range list {
		if list[i].rule.pat.NamesTool() && list[i].rule.matches(fr, args) {
			return &list[i]
		}
	}
	return nil
}

// first returns the first rule of list that matches, or nil.
func first(list []compiledRule, fr *foldedRequest, args map[string]any) *compiledRule {
	for i := range list {
		if list[i].rule.matches(fr, args) {
			return &list[i]
		}
	}
	return nil
}

// New returns a Policy of rules.
func New(rules ...Rule) *Policy {
	p := &Policy{rules: append([]Rule(nil), rules...)}
	p.compile()
	return p
}

// RulesFrom returns the rules of a settings document's "permissions"
// (as config.Settings.Permissions returns them) from src.
func RulesFrom(src Source, allow, ask, deny []string) []Rule {
	var out []Rule
	for _, l := range []struct {
		list  Action
		texts []string
	}{{Deny, deny}, {Ask, ask}, {Allow, allow}} {
		for _, t := range l.texts {
			out = append(out, NewRule(l.list, t, src))
		}
	}
	return out
}

// With returns a copy of p with more rules (session rules of a command or
// embedder). p may be nil.
func (p *Policy) With(rules ...Rule) *Policy {
	q := &Policy{}
	if p != nil {
		q.rules, q.problems, q.allowOff, q.denyAll = p.rules, p.problems, p.allowOff, p.denyAll
	}
	q.rules = append(append([]Rule(nil), q.rules...), rules...)
	q.compile()
	return q
}

// Rules returns every rule, in source order.
func (p *Policy) Rules() []Rule {
	if p == nil {
		return nil
	}
	return append([]Rule(nil), p.rules...)
}

// Decide returns the decision for req: the first matching deny rule
// denies; else the first matching ask rule asks; else a matching allow
// rule allows — but a tool that declares destructiveHint is allowed only
// by an allow rule that names it exactly (mcp__server__tool, with or
// without argument conditions); a broad grant (mcp__server,
// mcp__server__*) then asks; else ask. Among rules of one
// list the administrator's (managed) is reported first and the
// repository's (project) last.
func (p *Policy) Decide(req Request) Decision {
	if p != nil && p.denyAll != "" {
		return Decision{Action: Deny, Reason: "every MCP call is denied: " + p.denyAll}
	}
	var lists *ruleLists
	allowOff := ""
	if p != nil {
		lists, allowOff = p.lists, p.allowOff
		if lists == nil && len(p.rules) > 0 {
			lists = compileRules(p.rules) // not built by New, With or Load
		}
	}
	tool := req.Tool
	if tool == "" {
		tool = mcpPrefix + req.Server + "__" + req.ToolName
	}
	if lists != nil {
		fr := foldRequest(req)
		decided := func(a Action, c *compiledRule, reason string) Decision {
			r := *c.rule // the caller's copy
			return Decision{Action: a, Rule: &r, Reason: reason}
		}
		if c := first(lists.deny, &fr, req.Args); c != nil {
			return decided(Deny, c, c.reason)
		}
		if c := first(lists.ask, &fr, req.Args); c != nil {
			return decided(Ask, c, c.reason)
		}
		if allowOff == "" {
			if c := first(lists.allow, &fr, req.Args); c != nil {
				if !req.Annotations.DestructiveHint {
					return decided(Allow, c, c.reason)
				}
				// The annotation tightens broad grants only: a rule
				// naming the tool is the user's word about this tool.
				if e := firstExact(lists.allow, &fr, req.Args); e != nil {
					return decided(Allow, e, e.reason)
				}
				d := decided(Ask, c, c.destructive)
				d.Suggest, d.TightenedBy = tool, TightenedByDestructive
				return d
			}
		}
	}
	reason := "no permission rule allows " + tool
	if allowOff != "" {
		reason = "allow rules are off: " + allowOff
	}
	if req.Autopilot {
		reason += " (autopilot does not skip questions for MCP tools)"
	}
	d := Decision{Action: Ask, Reason: reason}
	if allowOff == "" {
		d.Suggest = tool
	}
	return d
}

// NeedsArgs reports whether Decide could read req's arguments: some
// effective rule with argument conditions (of any list) could match the
// call's name. When it is false, Decide gives the same Decision whatever
// req.Args holds, so a caller may leave them undecoded. req.Args is not
// read. The rules are found once, when the Policy is built (New, With,
// Load), so this costs a name match per such rule and nothing when there
// is none.
func (p *Policy) NeedsArgs(req Request) bool {
	if p == nil || p.denyAll != "" {
		return false
	}
	lists := p.lists
	if lists == nil {
		if len(p.rules) == 0 {
			return false
		}
		lists = compileRules(p.rules) // not built by New, With or Load
	}
	if len(lists.withArgs) == 0 {
		return false
	}
	fr := foldRequest(req)
	for _, r := range lists.withArgs {
		if r.pat.matchFolded(&fr) {
			return true
		}
	}
	return false
}

// Problem is something about the rules that keeps them from doing what
// their author meant: a settings file that cannot be read, a rule that can
// never match, an ignored allow rule, a rule naming a server that is not
// configured.
type Problem struct {
	// Rule is the rule concerned; nil for a file problem.
	Rule    *Rule
	Source  Source
	Message string
	// Fix says in one line what to do about it, in terms of the settings
	// (it names no command of any front end).
	Fix string
	// NoSuchServer reports a rule that names a server that is not
	// configured (checked only when Problems is given the servers), so a
	// front end can point at its own list of servers.
	NoSuchServer bool
}

// Problems returns every problem with the rules. servers are the names of
// the configured servers (nil skips the check that rules name one).
func (p *Policy) Problems(servers []string) []Problem {
	if p == nil {
		return nil
	}
	out := append([]Problem(nil), p.problems...)
	for i := range p.rules {
		r := p.rules[i]
		if msg := r.Problem(); msg != "" {
			out = append(out, Problem{Rule: &r, Source: r.Source, Message: msg, Fix: ruleFix(r)})
			continue
		}
		if servers == nil || r.pat.kind == kindAll {
			continue
		}
		named := false
		for _, s := range servers {
			if r.pat.NamesServer(s) {
				named = true
				break
			}
		}
		if !named {
			out = append(out, Problem{Rule: &r, Source: r.Source, NoSuchServer: true,
				Message: "it names a server that is not configured",
				Fix:     "check the server's name against the configured servers, or remove the rule"})
		}
	}
	return out
}

func ruleFix(r Rule) string {
	switch {
	case r.err != nil:
		return `write mcp__<server>__<tool>(name:"glob", …) with double-quoted globs`
	case r.List == Allow && r.Source.Scope == ScopeProject:
		return "move it to ~/.switchboard/settings.json (user) or its \"projects\" entry for this workspace (local)"
	case r.List == Allow && r.pat.kind == kindAll:
		return "list the servers to allow: mcp__<server>"
	case strings.TrimSpace(r.Text) == "*":
		return "write mcp__* in deny or ask, or mcp__<server>"
	case r.pat.kind == kindNone:
		return "use mcp__<server> (all its tools) or mcp__<server>__<tool>; * only as a whole last segment"
	}
	return ""
}

// Hint returns the one line that tells a person how to let the call of d
// run without asking: the allow rule to add to userFile (the user
// settings file, as the person should read it). It names no command or
// flag of a front end (the CLI adds its own). It is "" when no allow rule
// can help.
func (d Decision) Hint(userFile string) string {
	if d.Suggest == "" {
		switch {
		case d.Action == Deny && d.Rule != nil && d.Rule.Source.Profile != "":
			return fmt.Sprintf("remove %q from the \"permissions\" of %s (or of a profile it extends) to let it run, or run without that profile", d.Rule.Text, d.Rule.Source)
		case d.Action == Deny && d.Rule != nil:
			return fmt.Sprintf("remove %q from permissions.deny in %s to let it run", d.Rule.Text, d.Rule.Source)
		case d.Action == Ask && d.Rule != nil && d.Rule.List == Ask && d.Rule.Source.Profile != "":
			return fmt.Sprintf("run it where a person can answer, or remove %q from the \"permissions\" of %s (or of a profile it extends)", d.Rule.Text, d.Rule.Source)
		case d.Action == Deny:
			return "ask the administrator to fix the managed settings file"
		case d.Action == Ask && d.Rule != nil && d.Rule.List == Ask:
			return fmt.Sprintf("run it where a person can answer, or remove %q from permissions.ask in %s", d.Rule.Text, d.Rule.Source)
		case d.Action == Ask && d.Rule == nil:
			// No rule matched and no suggestion: allow rules are off.
			return "fix the settings file named above, or run it where a person can answer"
		case d.Action == Ask:
			return "run it where a person can answer the question"
		}
		return ""
	}
	return fmt.Sprintf("add %q to permissions.allow in %s", d.Suggest, userFile)
}
