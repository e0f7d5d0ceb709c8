package policy

import (
	"fmt"
	"testing"
)

// TestNeedsArgs: a call needs its arguments decoded only when a rule with
// argument conditions could match its name, in any list; then Decide
// reads them. Without such a rule Decide's answer is the same whatever
// the arguments are, which is what lets the host skip decoding them.
func TestNeedsArgs(t *testing.T) {
	write, read, other := call("fs", "write_file"), call("fs", "read_file"), call("gh", "write_file")
	etc := map[string]any{"path": "/etc/passwd"}
	tmp := map[string]any{"path": "/tmp/x"}
	cases := []struct {
		name  string
		rules []Rule
		req   Request
		needs bool
	}{
		{"no rules", nil, write, false},
		{"name rules only", join(allow("mcp__fs"), deny("mcp__fs__delete"), ask("mcp__gh")), write, false},
		{"deny with args, its tool", join(allow("mcp__fs"), deny(`mcp__fs__write_file(path:"/etc/**")`)), write, true},
		{"deny with args, another tool", join(allow("mcp__fs"), deny(`mcp__fs__write_file(path:"/etc/**")`)), read, false},
		{"deny with args, another server", join(allow("mcp__gh"), deny(`mcp__fs__write_file(path:"/etc/**")`)), other, false},
		{"allow with args", allow(`mcp__fs__write_file(path:"/tmp/**")`), write, true},
		{"ask with args, wildcard", ask(`mcp__fs__*(path:"/etc/**")`), read, true},
		{"ineffective rule with args (project allow)", rulesOf(Allow, projectSrc, `mcp__fs__write_file(path:"/tmp/**")`), write, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := New(c.rules...)
			if got := p.NeedsArgs(c.req); got != c.needs {
				t.Fatalf("NeedsArgs = %v, want %v", got, c.needs)
			}
			// The same answer from a Policy not built by New.
			if got := (&Policy{rules: c.rules}).NeedsArgs(c.req); got != c.needs {
				t.Fatalf("uncompiled: NeedsArgs = %v, want %v", got, c.needs)
			}
			if c.needs {
				return
			}
			// Not needed: the arguments cannot change the decision.
			want := p.Decide(c.req)
			for _, args := range []map[string]any{nil, etc, tmp} {
				if got := p.Decide(c.req.with(args)); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("with %v: %v, without arguments %v", args, got, want)
				}
			}
		})
	}
	if (*Policy)(nil).NeedsArgs(write) {
		t.Error("a nil Policy needs arguments")
	}
}
