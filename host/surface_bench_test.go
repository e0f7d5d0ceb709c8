package host_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// The pure steps of every call the host routes and every result it hands a
// model: naming, routing a name back, the policy decision and the envelope.
//
//	go test ./host -run '^$' -bench 'ToolName|RouterResolve|Envelope|PolicyPermit' -benchmem

func BenchmarkToolName(b *testing.B) {
	for _, bc := range []struct{ name, server, tool string }{
		{"short", "github", "create_pull_request"},
		{"sanitized", "my.server", "tool with spaces/and:colons"},
		{"truncated", "a-rather-long-server-name", strings.Repeat("very_long_tool_name_", 4)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = toolsurface.ToolName(bc.server, bc.tool)
			}
		})
	}
}

// BenchmarkRouterResolve resolves names in a table of 20 servers × 50 tools.
func BenchmarkRouterResolve(b *testing.B) {
	r := toolsurface.NewRouter()
	var names []string
	for s := range 20 {
		server := fmt.Sprintf("server%02d", s)
		var tools []string
		for t := range 50 {
			tools = append(tools, fmt.Sprintf("tool_%02d", t))
		}
		if err := r.AddServer(server, tools); err != nil {
			b.Fatal(err)
		}
		for _, t := range tools {
			names = append(names, toolsurface.ToolName(server, t))
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, _, ok := r.Resolve(names[i%len(names)]); !ok {
			b.Fatal("not found")
		}
		i++
	}
}

// BenchmarkEnvelope wraps an echo-sized result and a 100 KB one.
func BenchmarkEnvelope(b *testing.B) {
	for _, bc := range []struct {
		name string
		text string
	}{
		{"echo", "hello switchboard"},
		{"100KB", strings.Repeat("line 000000 the quick brown fox jumps over the lazy dog\n", 100_000/56)},
	} {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bc.text}}}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				_ = toolsurface.Envelope("echo", "echo", res)
			}
		})
	}
}

// BenchmarkPolicyPermit is the policy decision of one call: PolicyPermit
// over user rules of a realistic size (allow a few servers, ask for one
// server's writes, deny a destructive tool, an argument rule).
func BenchmarkPolicyPermit(b *testing.B) {
	allow := []string{"mcp__echo", "mcp__github__get_*", "mcp__fs__read_text_file", `mcp__fs__write_file(path:"/tmp/**")`}
	for i := range 20 {
		allow = append(allow, fmt.Sprintf("mcp__server%02d", i))
	}
	p := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, allow,
		[]string{"mcp__github__create_*"}, []string{"mcp__echo__destructive", "mcp__github__delete_repository"})...)
	permit := host.PolicyPermit(p, nil)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		req  host.PermitRequest
	}{
		{"allow", host.PermitRequest{Tool: "mcp__echo__echo", Server: "echo", ToolName: "echo", Args: map[string]any{"text": "hi"}}},
		{"argument-rule", host.PermitRequest{Tool: "mcp__fs__write_file", Server: "fs", ToolName: "write_file", Args: map[string]any{"path": "/tmp/a/b.txt"}}},
		{"deny", host.PermitRequest{Tool: "mcp__echo__destructive", Server: "echo", ToolName: "destructive"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = permit(ctx, bc.req)
			}
		})
	}
}
