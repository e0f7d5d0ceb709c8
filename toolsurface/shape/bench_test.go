package shape_test

import (
	"fmt"
	"testing"

	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

// BenchmarkShape shapes 100 tools (the npm reference servers' tools and the
// nasty schemas of the corpus, cycled) for each provider.
func BenchmarkShape(b *testing.B) {
	all := corpus(b)
	all = all[:len(all)-1] // leave out the 1 MB description: not a typical tool
	var tools []corpusTool
	for i := 0; len(tools) < 100; i++ {
		c := all[i%len(all)]
		c.Server = fmt.Sprintf("s%d", i/len(all))
		tools = append(tools, c)
	}
	in, _ := shapeInput(b, tools)
	for _, p := range shape.Providers() {
		b.Run(string(p), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := shape.Tools(p, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
