package testserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The elicit server's questions reach a client on 2026-07-28 (input
// requests) and on 2025-11-25 (elicitation/create, sent by the SDK), and
// it counts the tools/call requests it handles.
func TestElicit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		args    []string
		calls   string // tools/call requests that reached the server
	}{
		// ask 2, ask_twice 3, ask_both 2, calls 1.
		{"", nil, "calls: 8"},
		// The SDK fulfils input requests of an older client within the
		// call, so those rounds never reach the server as requests (a
		// second question goes back to the client, which calls again).
		{legacy, nil, "calls: 5"},
		// A server that speaks only the older revision does the same for
		// a client that would speak 2026-07-28.
		{"", []string{"-protocol", legacy}, "calls: 5"},
	} {
		version := tc.version
		t.Run(fmt.Sprintf("protocol=%s,args=%q", version, tc.args), func(t *testing.T) {
			var (
				mu    sync.Mutex
				asked []string
			)
			client := &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					switch req.Params.Message {
					case "Your name?":
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
					case "Your colour?":
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colour": "teal"}}, nil
					case "First?":
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"first": "1"}}, nil
					case "Second?":
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
				},
			}
			cs, _ := connectWith(t, connectOpts{version: version, client: client}, "elicit", tc.args...)
			for _, c := range []struct{ tool, want string }{
				{"ask", "answer: yes"},
				{"ask_twice", "name: Ada, colour: teal"},
				{"ask_both", "first: 1, second: the user chose decline"},
			} {
				if got := textOf(call(t, cs, c.tool, nil)); got != c.want {
					t.Errorf("%s = %q, want %q", c.tool, got, c.want)
				}
			}
			if got := textOf(call(t, cs, "calls", nil)); got != tc.calls {
				t.Errorf("calls = %q, want %q", got, tc.calls)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 5 || asked[0] != "What is your favourite colour?" || asked[1] != "Your name?" || asked[2] != "Your colour?" {
				t.Errorf("questions (-want +got):\n%s", cmp.Diff([]string{"What is your favourite colour?", "Your name?", "Your colour?", "First?|Second?", "…"}, asked))
			}
		})
	}
}
