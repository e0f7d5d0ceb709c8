package policy

import (
	"fmt"
	"testing"
)

// benchPolicy is a realistic set of 27 user rules: a few servers allowed,
// 20 more allowed by name, reads of one server, a path-constrained write,
// one server's writes asked for, two destructive tools denied.
func benchPolicy() *Policy {
	allow := []string{"mcp__echo", "mcp__github__get_*", "mcp__fs__read_text_file", `mcp__fs__write_file(path:"/tmp/**")`}
	for i := range 20 {
		allow = append(allow, fmt.Sprintf("mcp__server%02d", i))
	}
	return New(RulesFrom(Source{Scope: ScopeUser, File: "/home/u/.switchboard/settings.json"}, allow,
		[]string{"mcp__github__create_*"}, []string{"mcp__echo__destructive", "mcp__github__delete_repository"})...)
}

var benchRequests = []struct {
	name string
	req  Request
}{
	{"allow", Request{Tool: "mcp__echo__echo", Server: "echo", ToolName: "echo", Args: map[string]any{"text": "hi"}}},
	{"allow-last-server", Request{Tool: "mcp__server19__do", Server: "server19", ToolName: "do"}},
	{"allow-folded", Request{Tool: "mcp__My-Server.07__Do-It", Server: "My-Server.07", ToolName: "Do-It"}},
	{"argument-rule", Request{Tool: "mcp__fs__write_file", Server: "fs", ToolName: "write_file", Args: map[string]any{"path": "/tmp/a/b.txt"}}},
	{"ask-rule", Request{Tool: "mcp__github__create_issue", Server: "github", ToolName: "create_issue"}},
	{"deny", Request{Tool: "mcp__echo__destructive", Server: "echo", ToolName: "destructive"}},
	{"no-rule", Request{Tool: "mcp__other__x", Server: "other", ToolName: "x"}},
}

// BenchmarkDecide is Policy.Decide over 27 rules.
//
//	go test ./policy -run '^$' -bench BenchmarkDecide -benchmem -count 5
func BenchmarkDecide(b *testing.B) {
	p := benchPolicy()
	for _, bc := range benchRequests {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.Decide(bc.req)
			}
		})
	}
}
