package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// On `serve --stdio` (Gateway.Run), the calls of a client on a protocol
// before 2026-07-28 that declared elicitation (VS Code's kind) take the
// fast path, and every question of such a call still reaches the client
// as an elicitation/create on its connection: the gateway's permission
// question, then the server's own, whether the server asks in its result
// (2026-07-28) or with elicitation/create (2025-11-25). A call nobody
// asks about takes the fast path too, without a question.
func TestStdioFastPathAsksOlderClient(t *testing.T) {
	for _, server := range [][]string{nil, {"-protocol", "2025-11-25"}} {
		t.Run(fmt.Sprint("server", server), func(t *testing.T) {
			a := &answering{answer: func(msg string) *mcp.ElicitResult {
				if strings.HasPrefix(msg, "[alpha] ") {
					return accept("answer", "teal")
				}
				return accept("decision", gateway.DecisionOnce)
			}}
			f := startWith(t, fixtureOpts{client: a.options(), permit: askingPermit("mcp__alpha__calls"), prompter: gateway.Prompter{}, protocol: "2025-11-25", run: true},
				nil, stdio("alpha", "elicit", server...))
			fast := func(what string, want int64, call func()) {
				t.Helper()
				before := gateway.FastCalls(f.g)
				call()
				if got := gateway.FastCalls(f.g) - before; got != want {
					t.Errorf("%s: %d calls on the fast path, want %d", what, got, want)
				}
			}

			fast("a call that asks", 1, func() {
				got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": "Colour?"}})
				if res.IsError || !strings.Contains(got, "answer: teal") {
					t.Errorf("ask: isError %v, %q", res.IsError, got)
				}
			})
			asked := a.messages()
			if len(asked) != 2 || strings.HasPrefix(asked[0], "[alpha] ") || !strings.Contains(asked[0], "alpha") || asked[1] != "[alpha] Colour?" {
				t.Errorf("the client was asked %q; want the gateway's permission question, then the server's", asked)
			}
			fast("an allowed call", 1, func() {
				if got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__calls", Arguments: map[string]any{}}); res.IsError || !strings.Contains(got, "calls: ") {
					t.Errorf("calls: isError %v, %q", res.IsError, got)
				}
			})
			if n := len(a.messages()); n != 2 {
				t.Errorf("%d questions in all, want the first call's 2", n)
			}
		})
	}
}

// A question to such a client that is still open when its call is
// cancelled is withdrawn: the client's dialog (its elicitation handler)
// is cancelled, as on the SDK's path.
func TestStdioFastPathWithdrawsQuestion(t *testing.T) {
	opened, closed := make(chan struct{}, 1), make(chan struct{}, 1)
	client := &mcp.ClientOptions{
		Capabilities: elicitCaps,
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			opened <- struct{}{}
			select {
			case <-ctx.Done():
				closed <- struct{}{}
				return nil, ctx.Err()
			case <-time.After(20 * time.Second):
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
		},
	}
	f := startWith(t, fixtureOpts{client: client, prompter: gateway.Prompter{}, protocol: "2025-11-25", run: true},
		nil, stdio("alpha", "elicit"))
	before := gateway.FastCalls(f.g)
	ctx, cancel := context.WithCancel(ctxFor(t, 30*time.Second))
	done := make(chan error, 1)
	go func() {
		_, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
		done <- err
	}()
	select {
	case <-opened:
	case <-time.After(20 * time.Second):
		t.Fatal("the server's question never reached the client")
	}
	if got := gateway.FastCalls(f.g) - before; got != 1 {
		t.Errorf("%d calls on the fast path, want 1", got)
	}
	cancel()
	<-done
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the call was cancelled, and its question was still open 10 s later")
	}
	// The connection goes on.
	if got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__calls", Arguments: map[string]any{}}); res.IsError || !strings.Contains(got, "calls: ") {
		t.Errorf("after the cancelled call: isError %v, %q", res.IsError, got)
	}
}
