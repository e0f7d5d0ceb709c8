package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	userSrc    = Source{Scope: ScopeUser, File: "/home/u/.switchboard/settings.json"}
	projectSrc = Source{Scope: ScopeProject, File: "/repo/.switchboard/settings.json"}
	managedSrc = Source{Scope: ScopeManaged, File: "/etc/switchboard/managed-settings.json"}
	flagSrc    = Source{Scope: ScopeFlag}
	localSrc   = Source{Scope: ScopeLocal, File: "/home/u/.switchboard/settings.json"}
)

// call builds a request for server's tool, named as the host names it.
func call(server, tool string) Request {
	return Request{Tool: "mcp__" + server + "__" + tool, Server: server, ToolName: tool}
}

func (r Request) with(args map[string]any) Request { r.Args = args; return r }

func allow(t ...string) []Rule { return rulesOf(Allow, userSrc, t...) }
func ask(t ...string) []Rule   { return rulesOf(Ask, userSrc, t...) }
func deny(t ...string) []Rule  { return rulesOf(Deny, userSrc, t...) }

func rulesOf(list Action, src Source, texts ...string) []Rule {
	var out []Rule
	for _, t := range texts {
		out = append(out, NewRule(list, t, src))
	}
	return out
}

func join(sets ...[]Rule) []Rule {
	var out []Rule
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}

// TestPatternGrammar has a row for every pattern rule of the grammar
// (docs/security.md, Rules), the
// forms that match nothing included.
func TestPatternGrammar(t *testing.T) {
	merge := call("github", "merge_pull_request")
	for _, tc := range []struct {
		name  string
		rules []Rule
		req   Request
		want  Action
	}{
		// mcp__server ≡ mcp__server__*
		{"mcp__server allows every tool of the server", allow("mcp__github"), merge, Allow},
		{"mcp__server allows another tool too", allow("mcp__github"), call("github", "get_issue"), Allow},
		{"mcp__server does not reach another server", allow("mcp__github"), call("gitlab", "merge"), Ask},
		{"mcp__server is not a prefix match on the server", allow("mcp__git"), merge, Ask},
		{"mcp__server does not match a longer server name", allow("mcp__github"), call("github2", "x"), Ask},
		{"mcp__server__* equals mcp__server", allow("mcp__github__*"), merge, Allow},
		{"mcp__server__* does not reach another server", allow("mcp__github__*"), call("gitlab", "x"), Ask},
		// mcp__server__tool
		{"mcp__server__tool allows that tool", allow("mcp__github__merge_pull_request"), merge, Allow},
		{"mcp__server__tool not another tool", allow("mcp__github__merge_pull_request"), call("github", "get_issue"), Ask},
		{"mcp__server__tool not a tool with that prefix", allow("mcp__github__merge"), merge, Ask},
		{"mcp__server__tool denies that tool", join(allow("mcp__github"), deny("mcp__github__merge_pull_request")), merge, Deny},
		// mcp__*: deny and ask only
		{"mcp__* denies every MCP tool", deny("mcp__*"), merge, Deny},
		{"mcp__* asks for every MCP tool over an allow", join(allow("mcp__github"), ask("mcp__*")), merge, Ask},
		{"mcp__* in allow has no effect", allow("mcp__*"), merge, Ask},
		// * only as a whole last segment
		{"mcp__git* matches nothing in allow", allow("mcp__git*"), merge, Ask},
		{"mcp__git* matches nothing in deny", join(allow("mcp__github"), deny("mcp__git*")), merge, Allow},
		{"mcp__github__get_* matches nothing in allow", allow("mcp__github__get_*"), call("github", "get_issue"), Ask},
		{"mcp__github__get_* matches nothing in deny", join(allow("mcp__github"), deny("mcp__github__get_*")), call("github", "get_issue"), Allow},
		{"mcp__*__tool matches nothing", join(allow("mcp__github"), deny("mcp__*__merge_pull_request")), merge, Allow},
		{"mcp__* followed by more matches nothing", join(allow("mcp__github"), deny("mcp__*__*")), merge, Allow},
		{"* in the middle of a server name matches nothing", allow("mcp__gi*ub"), merge, Ask},
		{"mcp__github__* but not mcp__github__*x", allow("mcp__github__*x"), merge, Ask},
		// bare *
		{"bare * in allow has no effect on MCP tools", allow("*"), merge, Ask},
		{"bare * in deny has no effect on MCP tools", join(allow("mcp__github"), deny("*")), merge, Allow},
		{"bare * in ask has no effect on MCP tools", join(allow("mcp__github"), ask("*")), merge, Allow},
		// rules for other things
		{"a rule without mcp__ matches no MCP tool", join(allow("mcp__github"), deny("github")), merge, Allow},
		{"an agent's built-in tool rule matches no MCP tool", join(allow("mcp__github"), deny("Bash")), merge, Allow},
		{"mcp__ alone names no server", allow("mcp__"), merge, Ask},
		{"the empty rule matches nothing", allow(""), merge, Ask},
		// case-insensitive; - and . count as _
		{"rules are case-insensitive", allow("MCP__GitHub__Merge_Pull_Request"), merge, Allow},
		{"tool names are case-insensitive", allow("mcp__github__merge_pull_request"), call("GitHub", "Merge_Pull_Request"), Allow},
		{"- in a rule counts as _", allow("mcp__my-server__do-thing"), call("my_server", "do_thing"), Allow},
		{". in a rule counts as _", allow("mcp__my.server__do.thing"), call("my_server", "do_thing"), Allow},
		{"- in a server name counts as _", allow("mcp__my_server"), call("my-server", "x"), Allow},
		{". in a server name counts as _", allow("mcp__my_server"), call("my.server", "x"), Allow},
		{". and - in a tool name count as _", allow("mcp__s__a_b_c"), call("s", "a.b-c"), Allow},
		{"mcp-- counts as mcp__", allow("mcp--github"), merge, Allow},
		{"folding does not merge different letters", allow("mcp__my_server"), call("myserver", "x"), Ask},
		// names the host builds
		// A rule is read as (server, tool), the server ending at the first
		// "__": mcp__a__b is tool b of server a, never server a__b (whose
		// name the host refuses; see TestParsedPairMatching).
		{"a server whose name holds __", allow("mcp__a__b"), call("a__b", "c"), Ask},
		{"the server part of a __ name is not that server", allow("mcp__a"), call("a__b", "c"), Ask},
		{"the full model-visible name of a cut name",
			allow("mcp__a_very_long_server_name__a_very_long_tool_name_that_is_cut_1234abcd"),
			Request{Tool: "mcp__a_very_long_server_name__a_very_long_tool_name_that_is_cut_1234abcd", Server: "a_very_long_server_name", ToolName: "a_very_long_tool_name_that_is_cut_exactly_here"}, Allow},
		{"Tool alone is enough", allow("mcp__github"), Request{Tool: "mcp__github__merge_pull_request"}, Allow},
		{"Server and ToolName alone are enough", allow("mcp__github__merge_pull_request"), Request{Server: "github", ToolName: "merge_pull_request"}, Allow},
		// default
		{"no rule means ask", nil, merge, Ask},
		{"deny beats allow", join(allow("mcp__github"), deny("mcp__github")), merge, Deny},
		{"ask beats allow", join(allow("mcp__github__merge_pull_request"), ask("mcp__github")), merge, Ask},
		{"deny beats ask", join(ask("mcp__github"), deny("mcp__github__merge_pull_request")), merge, Deny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.rules...).Decide(tc.req)
			if d.Action != tc.want {
				t.Errorf("Decide = %s (%s), want %s", d.Action, d.Reason, tc.want)
			}
			if d.Reason == "" || strings.Contains(d.Reason, "\n") {
				t.Errorf("reason %q is not one line", d.Reason)
			}
		})
	}
}

func TestArgumentRules(t *testing.T) {
	merge := call("github", "merge_pull_request")
	write := call("fs", "write_file")
	repoRule := allow(`mcp__github__merge_pull_request(repo:"myorg/*")`)
	tmpRule := allow(`mcp__fs__write_file(path:"/tmp/**")`)
	for _, tc := range []struct {
		name  string
		rules []Rule
		req   Request
		want  Action
	}{
		{"matching string argument", repoRule, merge.with(map[string]any{"repo": "myorg/api"}), Allow},
		{"other value", repoRule, merge.with(map[string]any{"repo": "evil/api"}), Ask},
		{"* stays within a path segment", repoRule, merge.with(map[string]any{"repo": "myorg/api/x"}), Ask},
		{"the literal part must match", repoRule, merge.with(map[string]any{"repo": "myorgx/api"}), Ask},
		{"argument absent", repoRule, merge.with(map[string]any{"number": 3}), Ask},
		{"no arguments at all", repoRule, merge, Ask},
		{"argument not a string", repoRule, merge.with(map[string]any{"repo": []any{"myorg/api"}}), Ask},
		{"values are case-sensitive", repoRule, merge.with(map[string]any{"repo": "MyOrg/api"}), Ask},
		{"argument names are exact", repoRule, merge.with(map[string]any{"Repo": "myorg/api"}), Ask},
		{"** crosses /", tmpRule, write.with(map[string]any{"path": "/tmp/a/b/c.txt"}), Allow},
		{"** needs the prefix", tmpRule, write.with(map[string]any{"path": "/tmpfoo/x"}), Ask},
		{"** after / needs the /", tmpRule, write.with(map[string]any{"path": "/tmp"}), Ask},
		{".. does not climb out of an allowed tree", tmpRule, write.with(map[string]any{"path": "/tmp/../etc/passwd"}), Ask},
		{"a path that cleans inside stays allowed", tmpRule, write.with(map[string]any{"path": "/tmp/a/../b"}), Allow},
		{".. does not climb out of a denied tree",
			join(allow("mcp__fs"), deny(`mcp__fs__write_file(path:"/etc/**")`)), write.with(map[string]any{"path": "/tmp/../etc/passwd"}), Deny},
		{"a deny argument rule leaves other values allowed",
			join(allow("mcp__fs"), deny(`mcp__fs__write_file(path:"/etc/**")`)), write.with(map[string]any{"path": "/tmp/x"}), Allow},
		{"a deny argument rule does not match an absent argument",
			join(allow("mcp__fs"), deny(`mcp__fs__write_file(path:"/etc/**")`)), write, Allow},
		{"several pairs all match", allow(`mcp__gh__merge(repo:"myorg/*", branch:"main")`),
			call("gh", "merge").with(map[string]any{"repo": "myorg/a", "branch": "main"}), Allow},
		{"several pairs: one fails", allow(`mcp__gh__merge(repo:"myorg/*", branch:"main")`),
			call("gh", "merge").with(map[string]any{"repo": "myorg/a", "branch": "dev"}), Ask},
		{"argument rule on a whole server", allow(`mcp__gh(repo:"myorg/*")`),
			call("gh", "anything").with(map[string]any{"repo": "myorg/a"}), Allow},
		{"argument rule on mcp__* in ask", join(allow("mcp__gh"), ask(`mcp__*(repo:"prod/*")`)),
			call("gh", "x").with(map[string]any{"repo": "prod/db"}), Ask},
		{"quoted argument name", allow(`mcp__fs__w("the path":"/tmp/*")`), call("fs", "w").with(map[string]any{"the path": "/tmp/a"}), Allow},
		{"escaped quote in a value", allow(`mcp__s__t(q:"a\"b")`), call("s", "t").with(map[string]any{"q": `a"b`}), Allow},
		{"regexp characters are literal", allow(`mcp__s__t(q:"a.c")`), call("s", "t").with(map[string]any{"q": "abc"}), Ask},
		{"white space around pairs", allow(`mcp__s__t( q : "x" , r:"y" )`), call("s", "t").with(map[string]any{"q": "x", "r": "y"}), Allow},
		{"malformed: unquoted value", allow(`mcp__fs__write_file(path:/tmp/**)`), write.with(map[string]any{"path": "/tmp/x"}), Ask},
		{"malformed: missing )", allow(`mcp__fs__write_file(path:"/tmp/**"`), write.with(map[string]any{"path": "/tmp/x"}), Ask},
		{"malformed: empty list", allow(`mcp__fs__write_file()`), write, Ask},
		{"malformed: text after )", allow(`mcp__fs__write_file(path:"/tmp/**") x`), write.with(map[string]any{"path": "/tmp/x"}), Ask},
		{"malformed: no name", allow(`mcp__fs__write_file(:"x")`), write.with(map[string]any{"": "x"}), Ask},
		{"malformed deny matches nothing", join(allow("mcp__fs"), deny(`mcp__fs__write_file(path:/etc)`)), write.with(map[string]any{"path": "/etc"}), Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.rules...).Decide(tc.req)
			if d.Action != tc.want {
				t.Errorf("Decide = %s (%s), want %s", d.Action, d.Reason, tc.want)
			}
		})
	}
}

func TestAnnotationsOnlyTighten(t *testing.T) {
	destructive := call("fs", "delete")
	destructive.Annotations.DestructiveHint = true
	readOnly := call("fs", "read")
	readOnly.Annotations.ReadOnlyHint = true
	both := call("fs", "wipe")
	both.Annotations = Annotations{ReadOnlyHint: true, DestructiveHint: true}
	for _, tc := range []struct {
		name  string
		rules []Rule
		req   Request
		want  Action
	}{
		{"destructiveHint turns allow into ask", allow("mcp__fs"), destructive, Ask},
		{"destructiveHint with mcp__server__* asks", allow("mcp__fs__*"), destructive, Ask},
		{"an exact tool rule allows a destructive tool", allow("mcp__fs__delete"), destructive, Allow},
		{"an exact rule spelled otherwise still names the tool", allow("mcp__FS__Delete"), destructive, Allow},
		{"an exact rule with a matching argument condition allows it", allow(`mcp__fs__delete(path:"/tmp/**")`), destructive.with(map[string]any{"path": "/tmp/a"}), Allow},
		{"an exact rule whose argument condition fails: ask", allow(`mcp__fs__delete(path:"/tmp/**")`), destructive.with(map[string]any{"path": "/etc/a"}), Ask},
		{"broad then exact: the exact rule allows", allow("mcp__fs", "mcp__fs__delete"), destructive, Allow},
		{"an exact rule does not lift an ask rule", append(allow("mcp__fs__delete"), ask("mcp__fs")...), destructive, Ask},
		{"an exact rule does not lift a deny", append(allow("mcp__fs__delete"), deny("mcp__fs")...), destructive, Deny},
		{"an exact rule of the project's settings allows nothing", rulesOf(Allow, Source{Scope: ScopeProject}, "mcp__fs__delete"), destructive, Ask},
		{"destructiveHint does not loosen a deny", deny("mcp__fs"), destructive, Deny},
		{"destructiveHint and no rule: ask", nil, destructive, Ask},
		{"readOnlyHint grants nothing", nil, readOnly, Ask},
		{"readOnlyHint does not lift an ask rule", ask("mcp__fs"), readOnly, Ask},
		{"readOnlyHint does not lift a deny", deny("mcp__fs"), readOnly, Deny},
		{"readOnlyHint with an allow rule: allow", allow("mcp__fs"), readOnly, Allow},
		{"readOnlyHint does not cancel destructiveHint", allow("mcp__fs"), both, Ask},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.rules...).Decide(tc.req)
			if d.Action != tc.want {
				t.Errorf("Decide = %s (%s), want %s", d.Action, d.Reason, tc.want)
			}
		})
	}
	d := New(allow("mcp__fs")...).Decide(destructive)
	if d.Suggest != "mcp__fs__delete" || d.Rule == nil || d.TightenedBy != TightenedByDestructive || !strings.Contains(d.Reason, "destructiveHint") {
		t.Errorf("destructive decision = %+v; want the allow rule, a reason naming destructiveHint, tightenedBy, and the exact rule suggested", d)
	}
	if d := New(allow("mcp__fs__delete")...).Decide(destructive); d.TightenedBy != "" || d.Rule == nil || d.Rule.Text != "mcp__fs__delete" {
		t.Errorf("exact allow of a destructive tool = %+v", d)
	}
}

func TestSourcePriority(t *testing.T) {
	merge := call("github", "merge_pull_request")
	for _, tc := range []struct {
		name     string
		rules    []Rule
		want     Action
		wantFrom Scope
	}{
		{"project allow is ignored", rulesOf(Allow, projectSrc, "mcp__github"), Ask, ""},
		{"project allow of mcp__* is ignored", rulesOf(Allow, projectSrc, "mcp__*"), Ask, ""},
		{"project deny applies over a user allow", join(allow("mcp__github"), rulesOf(Deny, projectSrc, "mcp__github")), Deny, ScopeProject},
		{"project ask applies over a user allow", join(allow("mcp__github"), rulesOf(Ask, projectSrc, "mcp__github__merge_pull_request")), Ask, ScopeProject},
		{"managed deny wins over user and flag allows",
			join(allow("mcp__github"), rulesOf(Allow, flagSrc, "mcp__github"), rulesOf(Deny, managedSrc, "mcp__github")), Deny, ScopeManaged},
		{"managed deny is the one reported", join(deny("mcp__github"), rulesOf(Deny, managedSrc, "mcp__*")), Deny, ScopeManaged},
		{"a user deny beats a managed allow", join(rulesOf(Allow, managedSrc, "mcp__github"), deny("mcp__github")), Deny, ScopeUser},
		{"--settings allow", rulesOf(Allow, flagSrc, "mcp__github"), Allow, ScopeFlag},
		{"local allow", rulesOf(Allow, localSrc, "mcp__github"), Allow, ScopeLocal},
		{"managed allow", rulesOf(Allow, managedSrc, "mcp__github"), Allow, ScopeManaged},
		{"session allow", rulesOf(Allow, Source{Scope: ScopeSession}, "mcp__github"), Allow, ScopeSession},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.rules...).Decide(merge)
			if d.Action != tc.want {
				t.Errorf("Decide = %s (%s), want %s", d.Action, d.Reason, tc.want)
			}
			var from Scope
			if d.Rule != nil {
				from = d.Rule.Source.Scope
			}
			if from != tc.wantFrom {
				t.Errorf("decided by a rule from %q, want %q (%s)", from, tc.wantFrom, d.Reason)
			}
		})
	}
}

func TestAutopilot(t *testing.T) {
	req := call("github", "merge_pull_request")
	req.Autopilot = true
	if d := New().Decide(req); d.Action != Ask || !strings.Contains(d.Reason, "autopilot") {
		t.Errorf("autopilot, no rule: %+v; want ask, saying autopilot does not skip it", d)
	}
	if d := New(allow("mcp__github")...).Decide(req); d.Action != Allow {
		t.Errorf("autopilot, allowed: %+v", d)
	}
	if d := New(deny("mcp__github")...).Decide(req); d.Action != Deny {
		t.Errorf("autopilot, denied: %+v", d)
	}
	req.Annotations.DestructiveHint = true
	if d := New(allow("mcp__github")...).Decide(req); d.Action != Ask {
		t.Errorf("autopilot, allowed but destructive: %+v", d)
	}
}

func TestDecisionTexts(t *testing.T) {
	merge := call("github", "merge_pull_request")
	var nilPolicy *Policy
	d := nilPolicy.Decide(merge)
	want := Decision{Action: Ask, Reason: "no permission rule allows mcp__github__merge_pull_request", Suggest: "mcp__github__merge_pull_request"}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("nil policy (-want +got):\n%s", diff)
	}
	if got, want := d.Hint("~/.switchboard/settings.json"),
		`add "mcp__github__merge_pull_request" to permissions.allow in ~/.switchboard/settings.json`; got != want {
		t.Errorf("Hint = %s\nwant %s", got, want)
	}
	d = New(rulesOf(Deny, managedSrc, "mcp__github")...).Decide(merge)
	if d.Reason != `denied by rule "mcp__github" (deny, managed settings /etc/switchboard/managed-settings.json)` {
		t.Errorf("deny reason = %s", d.Reason)
	}
	if h := d.Hint("x"); !strings.Contains(h, `remove "mcp__github" from permissions.deny in managed settings`) {
		t.Errorf("deny hint = %s", h)
	}
	d = New(rulesOf(Ask, projectSrc, "mcp__github")...).Decide(merge)
	if h := d.Hint("x"); d.Suggest != "" || !strings.Contains(h, "permissions.ask in project settings /repo/.switchboard/settings.json") {
		t.Errorf("ask-rule decision %+v, hint %s", d, h)
	}
	// A profile's rule is named as the profile's: the settings' own
	// "permissions" do not hold it.
	profileSrc := Source{Scope: ScopeUser, File: "/home/u/.switchboard/settings.json", Profile: "review"}
	d = New(rulesOf(Deny, profileSrc, "mcp__github")...).Decide(merge)
	if d.Reason != `denied by rule "mcp__github" (deny, profile "review" of user settings /home/u/.switchboard/settings.json)` {
		t.Errorf("profile deny reason = %s", d.Reason)
	}
	if h := d.Hint("x"); h != `remove "mcp__github" from the "permissions" of profile "review" of user settings /home/u/.switchboard/settings.json (or of a profile it extends) to let it run, or run without that profile` {
		t.Errorf("profile deny hint = %s", h)
	}
	d = New(rulesOf(Ask, profileSrc, "mcp__github")...).Decide(merge)
	if h := d.Hint("x"); strings.Contains(h, "permissions.ask") || !strings.Contains(h, `of profile "review"`) {
		t.Errorf("profile ask hint = %s", h)
	}
}

func TestProblems(t *testing.T) {
	p := New(join(
		allow("mcp__github", "mcp__git*", "mcp__github__get_*", "*", "mcp__*", `mcp__fs(path:/tmp)`, "mcp__nosuch__tool", "Bash"),
		deny("mcp__*", "mcp__fs__write_file"),
		rulesOf(Allow, projectSrc, "mcp__fs"),
		rulesOf(Deny, projectSrc, "mcp__fs__delete"),
	)...)
	var got []string
	for _, pr := range p.Problems([]string{"github", "fs"}) {
		if pr.Fix == "" {
			t.Errorf("problem %q has no fix", pr.Message)
		}
		if strings.Contains(pr.Fix, "`switchboard") {
			t.Errorf("fix %q names a CLI command; the CLI adds those", pr.Fix)
		}
		if want := pr.Rule.Text == "mcp__nosuch__tool"; pr.NoSuchServer != want {
			t.Errorf("problem of %s: NoSuchServer = %v, want %v", pr.Rule.Text, pr.NoSuchServer, want)
		}
		got = append(got, pr.Rule.Text+" ("+string(pr.Source.Scope)+"): "+pr.Message)
	}
	want := []string{
		"mcp__git* (user): * may replace only a whole last segment (mcp__<server>__*); this rule matches nothing",
		"mcp__github__get_* (user): * may replace only a whole last segment (mcp__<server>__*); this rule matches nothing",
		"* (user): a bare * has no effect on MCP tools; write mcp__* (in deny or ask) or mcp__<server>",
		"mcp__* (user): mcp__* has no effect in allow (it would allow every tool of every server); allow servers or tools one by one",
		`mcp__fs(path:/tmp) (user): malformed rule: argument list: the value of "path" must be a double-quoted glob, as in path:"/tmp/**"`,
		"mcp__nosuch__tool (user): it names a server that is not configured",
		"Bash (user): it does not name an MCP tool; MCP rules start with mcp__",
		"mcp__fs (project): allow rules in the project's own settings are ignored: a repository may only tighten permissions (deny, ask); put the rule in your user or local settings",
	}
	// Deny rules come first in RulesFrom order, but New keeps the given order.
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Problems (-want +got):\n%s", diff)
	}
}

func TestPatternQueries(t *testing.T) {
	for _, tc := range []struct {
		rule         string
		server       string
		names, whole bool
	}{
		{"mcp__github", "GitHub", true, true},
		{"mcp__github__*", "github", true, true},
		{"mcp__github__merge", "github", true, false},
		{`mcp__github__merge(repo:"a/*")`, "github", true, false},
		{"mcp__*", "github", true, false},
		{"mcp__git*", "github", false, false},
		{"mcp__gitlab", "github", false, false},
	} {
		p, _ := ParseRule(tc.rule)
		if got := p.NamesServer(tc.server); got != tc.names {
			t.Errorf("%s NamesServer(%s) = %v", tc.rule, tc.server, got)
		}
		if got := p.WholeServer(tc.server); got != tc.whole {
			t.Errorf("%s WholeServer(%s) = %v", tc.rule, tc.server, got)
		}
	}
	p, _ := ParseRule(`mcp__github__merge(repo:"a/*")`)
	if !p.MatchName(call("github", "merge")) || p.Match(call("github", "merge")) {
		t.Errorf("MatchName must leave the argument constraint aside, Match must not")
	}
}
