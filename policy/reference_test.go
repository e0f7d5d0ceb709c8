package policy

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// referenceDecide is Decide written plainly over Rule.Matches, the way it
// was before rules were compiled into lists: every rule tried, the best
// scope kept, reasons formatted on the spot. The compiled Decide must
// agree with it on every request.
func referenceDecide(p *Policy, req Request) Decision {
	tool := req.Tool
	if tool == "" {
		tool = mcpPrefix + req.Server + "__" + req.ToolName
	}
	var rules []Rule
	allowOff := ""
	if p != nil {
		rules, allowOff = p.rules, p.allowOff
	}
	first := func(list Action) *Rule {
		var best *Rule
		for i := range rules {
			r := &rules[i]
			if r.List != list || r.Problem() != "" || !r.Matches(req) {
				continue
			}
			if best == nil || scopeOrder[r.Source.Scope] < scopeOrder[best.Source.Scope] {
				best = r
			}
		}
		if best != nil {
			c := *best
			return &c
		}
		return nil
	}
	if r := first(Deny); r != nil {
		return Decision{Action: Deny, Rule: r, Reason: fmt.Sprintf("denied by rule %s", r)}
	}
	if r := first(Ask); r != nil {
		return Decision{Action: Ask, Rule: r, Reason: fmt.Sprintf("rule %s says to ask", r)}
	}
	if allowOff == "" {
		if r := first(Allow); r != nil {
			if req.Annotations.DestructiveHint {
				// Only a rule naming the tool exactly allows it.
				var exact *Rule
				for i := range rules {
					e := &rules[i]
					if e.List != Allow || e.Problem() != "" || !e.Pattern().NamesTool() || !e.Matches(req) {
						continue
					}
					if exact == nil || scopeOrder[e.Source.Scope] < scopeOrder[exact.Source.Scope] {
						exact = e
					}
				}
				if exact != nil {
					c := *exact
					return Decision{Action: Allow, Rule: &c, Reason: fmt.Sprintf("allowed by rule %s", exact)}
				}
				return Decision{Action: Ask, Rule: r, Suggest: tool, TightenedBy: "destructiveHint", Reason: fmt.Sprintf(
					"the tool declares destructiveHint: true, so it is asked for even though rule %s allows it: "+
						"a grant of a whole server does not cover a destructive tool; a rule naming the tool does", r)}
			}
			return Decision{Action: Allow, Rule: r, Reason: fmt.Sprintf("allowed by rule %s", r)}
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

// checkReference fails when Decide and referenceDecide disagree on req.
func checkReference(t *testing.T, p *Policy, req Request) {
	t.Helper()
	want := referenceDecide(p, req)
	got := p.Decide(req)
	type view struct {
		Action          Action
		Reason, Suggest string
		Rule            string // the rule's Text, List and Source; "" when none
	}
	see := func(d Decision) view {
		v := view{Action: d.Action, Reason: d.Reason, Suggest: d.Suggest}
		if d.Rule != nil {
			v.Rule = fmt.Sprintf("%q %s %+v", d.Rule.Text, d.Rule.List, d.Rule.Source)
		}
		return v
	}
	if diff := cmp.Diff(see(want), see(got)); diff != "" {
		t.Fatalf("Decide(%+v) differs from the reference (-want +got):\n%s", req, diff)
	}
}

// TestDecideMatchesReference runs the benchmark's 27 rules, rules of every
// scope, malformed and never-matching rules, and With over them, against
// the plain reference on requests named every way.
func TestDecideMatchesReference(t *testing.T) {
	mixed := join(
		rulesOf(Allow, projectSrc, "mcp__echo"), // ignored: a project's allow
		rulesOf(Ask, projectSrc, "mcp__echo__echo"),
		rulesOf(Ask, managedSrc, "mcp__echo__echo"),
		rulesOf(Deny, localSrc, `mcp__fs(path:"/etc/**")`),
		rulesOf(Deny, flagSrc, `mcp__fs(path:"/etc/**")`),
		allow("mcp__*", "mcp__git*", "mcp__fs(", "*", "Bash", "mcp__My-Server.07", `mcp__fs__write_file(path:"/tmp/**")`),
		allow("mcp__server07__do_it", "mcp__a__b"),
		deny("mcp__github__delete_repository"),
	)
	policies := map[string]*Policy{
		"bench": benchPolicy(),
		"mixed": New(mixed...),
		"with":  benchPolicy().With(mixed...),
		"nil":   nil,
		"empty": New(),
	}
	var reqs []Request
	for _, bc := range benchRequests {
		reqs = append(reqs, bc.req)
	}
	reqs = append(reqs,
		call("echo", "echo"), call("ECHO", "Echo"), call("my_server_07", "x"),
		call("fs", "write_file").with(map[string]any{"path": "/tmp/../etc/passwd"}),
		call("fs", "read").with(map[string]any{"path": "/etc/passwd"}),
		call("fs", "write_file").with(map[string]any{"path": 7}),
		Request{Tool: "mcp__a__b__c"}, Request{Tool: "mcp__a__b"}, Request{Server: "a", ToolName: "b"},
		Request{Tool: "mcp__x", Autopilot: true}, Request{Tool: "Bash"}, Request{},
		Request{Tool: "mcp__echo__echo", Annotations: Annotations{DestructiveHint: true}},
		Request{Tool: "mcp__echo__destructive", Annotations: Annotations{DestructiveHint: true}},
		Request{Tool: "mcp__github__delete_repository", Annotations: Annotations{DestructiveHint: true}},
		Request{Server: "fs", ToolName: "write_file", Args: map[string]any{"path": "/tmp/x"}, Annotations: Annotations{DestructiveHint: true}},
		Request{Tool: "mcp__server07__do_it", Server: "server07", ToolName: "do.it"},
		Request{Tool: "mcp__ünï__c0de", Server: "ünï", ToolName: "c0de"},
	)
	for name, p := range policies {
		t.Run(name, func(t *testing.T) {
			for _, req := range reqs {
				checkReference(t, p, req)
				req.Autopilot = !req.Autopilot
				checkReference(t, p, req)
			}
		})
	}
	off := benchPolicy()
	off.allowOff = "user settings cannot be used (bad JSON)"
	off.compile()
	for _, req := range reqs {
		checkReference(t, off, req)
	}
}
