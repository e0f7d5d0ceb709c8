package toolsurface_test

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func ExamplePresent() {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: strings.Repeat("0123456789", 8)},
		&mcp.ImageContent{Data: make([]byte, 3000), MIMEType: "image/png"},
	}}
	// A result with an image is truncated, never written to a file.
	out := toolsurface.Present("db", "query", res, &toolsurface.OutputOptions{MaxTokens: 10})
	fmt.Println(out.Text)
	fmt.Println(out.Fallback)
	// Output:
	// <mcp_response server="db" tool="query" trust="untrusted">
	// 0123456789012345678901234567890123456789
	// [OUTPUT TRUNCATED - exceeded 10 token limit]
	// [Dropped 1 image block due to size limit]
	// </mcp_response>
	// the result holds images or audio
}
