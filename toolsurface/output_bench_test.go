package toolsurface_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// BenchmarkPresent presents a 5 MB text result: spilled to a real file
// under a temp dir (the default writer), truncated, and, for comparison,
// a small result that is only enveloped.
func BenchmarkPresent(b *testing.B) {
	big := textResult(strings.Repeat("line 000000 the quick brown fox jumps over the lazy dog\n", 5<<20/56))
	small := textResult("hello")
	for _, bc := range []struct {
		name string
		res  *mcp.CallToolResult
		opts func(b *testing.B) *toolsurface.OutputOptions
	}{
		{"5MB/spill", big, func(b *testing.B) *toolsurface.OutputOptions {
			return &toolsurface.OutputOptions{StateDir: b.TempDir()}
		}},
		{"5MB/truncate", big, func(*testing.B) *toolsurface.OutputOptions { return &toolsurface.OutputOptions{} }},
		{"small", small, func(*testing.B) *toolsurface.OutputOptions { return &toolsurface.OutputOptions{} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := bc.opts(b)
			b.ReportAllocs()
			b.SetBytes(int64(len(toolsurface.RenderContent(bc.res))))
			for b.Loop() {
				out := toolsurface.Present("bench", "tool", bc.res, opts)
				if out.Text == "" {
					b.Fatal("no output")
				}
			}
		})
	}
}
