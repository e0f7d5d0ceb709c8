package policy_test

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/policy"
)

// Rules scoped to a principal and its groups join the settings' rules: a
// deny anywhere wins, and a principal's allow lets only its own calls run.
func TestScoped(t *testing.T) {
	base := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, []string{"mcp__fs__read"}, nil, []string{"mcp__prod"})...)
	s := policy.NewScoped(policy.Source{File: "/etc/gw.json"}, map[string]policy.Lists{
		"alice":     {Allow: []string{"mcp__github", "mcp__prod__query"}},
		"group:eng": {Deny: []string{"mcp__github__delete_repo"}, Allow: []string{"mcp__fs__write(path:\"/tmp/**\")"}},
		"bob":       {Deny: []string{"mcp__fs__read"}},
	})
	for _, tc := range []struct {
		who    string
		groups []string
		tool   string
		args   map[string]any
		want   policy.Action
	}{
		{"alice", []string{"eng"}, "mcp__github__get_me", nil, policy.Allow},
		{"alice", []string{"eng"}, "mcp__github__delete_repo", nil, policy.Deny}, // the group's deny beats her allow
		{"alice", []string{"eng"}, "mcp__prod__query", nil, policy.Deny},         // the settings' deny beats her allow
		{"alice", nil, "mcp__github__delete_repo", nil, policy.Allow},            // not in eng
		{"carol", []string{"eng"}, "mcp__github__get_me", nil, policy.Ask},       // alice's allow is hers
		{"carol", []string{"eng"}, "mcp__fs__write", map[string]any{"path": "/tmp/x"}, policy.Allow},
		{"carol", []string{"eng"}, "mcp__fs__write", map[string]any{"path": "/etc/x"}, policy.Ask},
		{"bob", nil, "mcp__fs__read", nil, policy.Deny}, // his deny beats the settings' allow
		{"group:eng", nil, "mcp__fs__write", map[string]any{"path": "/tmp/x"}, policy.Ask},
	} {
		d := base.With(s.For(tc.who, tc.groups)...).Decide(policy.Request{Tool: tc.tool, Args: tc.args})
		if d.Action != tc.want {
			t.Errorf("%s %v %s %v: %s (%s), want %s", tc.who, tc.groups, tc.tool, tc.args, d.Action, d.Reason, tc.want)
		}
	}
	d := base.With(s.For("bob", nil)...).Decide(policy.Request{Tool: "mcp__fs__read"})
	if d.Rule == nil || d.Rule.Source.Principal != "bob" || d.Reason != `denied by rule "mcp__fs__read" (deny, gateway rules for bob in /etc/gw.json)` {
		t.Errorf("bob's deny: %+v", d)
	}
	if (*policy.Scoped)(nil).For("x", nil) != nil || !(*policy.Scoped)(nil).Empty() {
		t.Error("a nil Scoped has rules")
	}
}
