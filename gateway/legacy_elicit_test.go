package gateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// An upstream server on a protocol before 2026-07-28 asks with
// elicitation/create, which the SDK hands the host without the call's
// context; the host attributes it to the one call in flight on that server
// (host/elicit.go), so it reaches the client that made the call, old or
// new.
func TestLegacyUpstreamQuestionReachesCaller(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", ""} {
		t.Run("client="+protocol, func(t *testing.T) {
			a := &answering{answer: func(string) *mcp.ElicitResult { return accept("answer", "teal") }}
			f := startWith(t, fixtureOpts{client: a.options(), prompter: gateway.Prompter{}, protocol: protocol, pipe: true},
				nil, stdio("alpha", "elicit", "-protocol", "2025-11-25"))
			ctx := ctxFor(t, 30*time.Second)
			res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": "Colour?"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); res.IsError || !strings.Contains(got, "answer: teal") {
				t.Errorf("ask through the gateway: isError %v, %q", res.IsError, got)
			}
			if asked := a.messages(); len(asked) != 1 || !strings.HasSuffix(asked[0], "Colour?") {
				t.Errorf("client was asked %q, want the server's question once", asked)
			}
		})
	}
}

// With two calls in flight on the server, nobody can say whose question an
// elicitation/create is: it is declined, and neither client sees it. The
// first call is held in flight by its own client, which does not answer
// until the second call has come back.
func TestLegacyUpstreamQuestionAmbiguousIsDeclined(t *testing.T) {
	entered := make(chan string, 4)
	release := make(chan struct{})
	holder := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			entered <- req.Params.Message
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "first"}}, nil
		},
	}
	f := startWith(t, fixtureOpts{client: holder, prompter: gateway.Prompter{}, protocol: "2025-11-25", pipe: true},
		nil, stdio("alpha", "elicit", "-protocol", "2025-11-25"))
	var otherAsked []string
	var mu sync.Mutex
	other := f.connect(t, true, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			otherAsked = append(otherAsked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "second"}}, nil
		},
	}, "2025-11-25")

	ctx := ctxFor(t, 30*time.Second)
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	first := make(chan result, 1)
	go func() {
		res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": "One?"}})
		first <- result{res, err}
	}()
	select {
	case q := <-entered:
		if !strings.HasSuffix(q, "One?") {
			t.Fatalf("the first client was asked %q", q)
		}
	case <-ctx.Done():
		t.Fatal("the first call's question never reached its client")
	}
	// The first call is in flight, its question unanswered: a second call
	// on the same server now asks too.
	res, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": "Two?"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); !strings.Contains(got, "the user chose decline") {
		t.Errorf("second call with two in flight: %q, want its question declined", got)
	}
	close(release)
	r := <-first
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := textOf(t, r.res); !strings.Contains(got, "answer: first") {
		t.Errorf("first call: %q", got)
	}
	select {
	case q := <-entered:
		t.Errorf("the first client was also asked %q", q)
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	if len(otherAsked) != 0 {
		t.Errorf("the second client was asked %q, want nothing (ambiguous)", otherAsked)
	}
}
