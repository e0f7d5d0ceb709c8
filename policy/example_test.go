package policy_test

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/policy"
)

func Example() {
	user := policy.Source{Scope: policy.ScopeUser, File: "~/.switchboard/settings.json"}
	repo := policy.Source{Scope: policy.ScopeProject, File: ".switchboard/settings.json"}
	p := policy.New(
		policy.NewRule(policy.Allow, "mcp__github", user),
		policy.NewRule(policy.Allow, `mcp__fs__write_file(path:"/tmp/**")`, user),
		policy.NewRule(policy.Deny, "mcp__github__delete_repo", repo),
		policy.NewRule(policy.Allow, "mcp__fs", repo),   // a repository cannot allow
		policy.NewRule(policy.Allow, "mcp__git*", user), // matches nothing
	)
	for _, req := range []policy.Request{
		{Server: "github", ToolName: "merge_pull_request", Args: map[string]any{"repo": "myorg/api"}},
		{Server: "github", ToolName: "delete_repo"},
		{Server: "fs", ToolName: "write_file", Args: map[string]any{"path": "/tmp/notes.txt"}},
		{Server: "fs", ToolName: "write_file", Args: map[string]any{"path": "/etc/passwd"}},
		{Server: "github", ToolName: "close_issue", Annotations: policy.Annotations{DestructiveHint: true}},
	} {
		d := p.Decide(req)
		fmt.Printf("%s %s: %s\n", d.Action, req.ToolName, d.Reason)
	}
	for _, pr := range p.Problems([]string{"github", "fs"}) {
		fmt.Printf("problem: %s: %s\n", pr.Rule.Text, pr.Message)
	}
	// Output:
	// allow merge_pull_request: allowed by rule "mcp__github" (allow, user settings ~/.switchboard/settings.json)
	// deny delete_repo: denied by rule "mcp__github__delete_repo" (deny, project settings .switchboard/settings.json)
	// allow write_file: allowed by rule "mcp__fs__write_file(path:\"/tmp/**\")" (allow, user settings ~/.switchboard/settings.json)
	// ask write_file: no permission rule allows mcp__fs__write_file
	// ask close_issue: the tool declares destructiveHint: true, so it is asked for even though rule "mcp__github" (allow, user settings ~/.switchboard/settings.json) allows it: a grant of a whole server does not cover a destructive tool; a rule naming the tool does
	// problem: mcp__fs: allow rules in the project's own settings are ignored: a repository may only tighten permissions (deny, ask); put the rule in your user or local settings
	// problem: mcp__git*: * may replace only a whole last segment (mcp__<server>__*); this rule matches nothing
}

func ExampleDecision_Hint() {
	d := policy.New().Decide(policy.Request{Tool: "mcp__github__merge_pull_request"})
	fmt.Println(d.Action)
	fmt.Println(d.Hint("~/.switchboard/settings.json"))
	// Output:
	// ask
	// add "mcp__github__merge_pull_request" to permissions.allow in ~/.switchboard/settings.json
}
