package host_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// The pure steps of every call the host routes and every result it hands a
// model: naming, routing a name back, and the envelope.
//
//	go test ./host -run '^$' -bench 'ToolName|RouterResolve|Envelope' -benchmem

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
