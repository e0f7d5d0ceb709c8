package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// Over HTTP, the calls of a session on 2025-11-25 whose client declared
// elicitation (VS Code's kind) take the fast path; one that asks is handed
// over to the SDK's handler at its first question, and the client gets
// every question on the call's stream and the answer after them, as from
// the SDK alone (the same gateway's SDKOnly endpoint, side by side): the
// gateway's permission question, then the server's own, whether the
// server asks in its result (2026-07-28) or with elicitation/create
// (2025-11-25). A call that asks nothing is never handed over.
func TestFastPathHandsOverQuestions(t *testing.T) {
	for _, server := range [][]string{nil, {"-protocol", "2025-11-25"}} {
		t.Run(fmt.Sprint("server", server), func(t *testing.T) {
			sb := openSB(t, []config.ResolvedServer{stdio("alpha", "elicit", server...)}, func(ho *host.Options) {
				ho.Permit, ho.Prompter = askingPermit("mcp__alpha__calls"), gateway.Prompter{}
			})
			g, fastURL, sdkURL := syncedEndpoints(t, sb)
			ctx := ctxFor(t, 60*time.Second)
			type outcome struct {
				answers    []string
				asked      []string
				fast, over int64
			}
			run := func(url string) outcome {
				a := &answering{answer: func(msg string) *mcp.ElicitResult {
					if strings.HasPrefix(msg, "[alpha] ") {
						return accept("answer", "teal")
					}
					return accept("decision", gateway.DecisionOnce)
				}}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "asked", Version: "1"}, a.options()).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				var o outcome
				fast, over := gateway.FastCalls(g), gateway.HandedOver(g)
				for _, c := range []*mcp.CallToolParams{
					{Name: "alpha__ask", Arguments: map[string]any{"question": "Colour?"}},
					{Name: "alpha__calls", Arguments: map[string]any{}},
				} {
					got, res := callText(t, cs, c)
					o.answers = append(o.answers, fmt.Sprintf("isError %v: %s", res.IsError, got))
				}
				o.fast, o.over = gateway.FastCalls(g)-fast, gateway.HandedOver(g)-over
				o.asked = a.messages()
				return o
			}
			sdk := run(sdkURL)
			if sdk.fast != 0 || sdk.over != 0 || len(sdk.asked) != 2 || !strings.Contains(sdk.answers[0], "answer: teal") {
				t.Fatalf("the SDK's endpoint: %+v", sdk)
			}
			fast := run(fastURL)
			if fast.fast != 2 || fast.over != 1 {
				t.Errorf("fast endpoint: %d calls on the fast path, %d handed over; want 2 and 1", fast.fast, fast.over)
			}
			// The server counts its calls: the fast endpoint's run made as
			// many as the SDK's, none twice.
			sdkCalls, fastCalls := callsOf(t, sdk.answers[1]), callsOf(t, fast.answers[1])
			if fastCalls != 2*sdkCalls {
				t.Errorf("the server's calls: %d after the SDK's run, %d after the fast one; want twice as many", sdkCalls, fastCalls)
			}
			fast.answers[1], sdk.answers[1] = "", ""
			if strings.Join(fast.answers, "\n") != strings.Join(sdk.answers, "\n") || strings.Join(fast.asked, "\n") != strings.Join(sdk.asked, "\n") {
				t.Errorf("fast endpoint: answers %q, asked %q\nthe SDK's: answers %q, asked %q", fast.answers, fast.asked, sdk.answers, sdk.asked)
			}
		})
	}
}

// A handed-over call whose question is still open when the call times
// out withdraws the question (the client's dialog, its elicitation
// handler, is cancelled) before its answer, which says it timed out, as
// on the SDK's endpoint; a client that cancels a handed-over call has it
// cancelled; and the session goes on.
func TestFastPathHandedOverCallEnds(t *testing.T) {
	srv := stdio("alpha", "elicit")
	srv.Effective.Timeout = 800 // ms
	sb := openSB(t, []config.ResolvedServer{srv}, func(ho *host.Options) { ho.Prompter = gateway.Prompter{} })
	g, fastURL, sdkURL := syncedEndpoints(t, sb)
	ctx := ctxFor(t, 60*time.Second)
	for _, ep := range []struct{ name, url string }{{"sdk", sdkURL}, {"fast", fastURL}} {
		t.Run(ep.name, func(t *testing.T) {
			opened, closed := make(chan struct{}, 4), make(chan struct{}, 4)
			quit := make(chan struct{}) // the test is over: open dialogs give up
			client := &mcp.ClientOptions{
				Capabilities: elicitCaps,
				ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					opened <- struct{}{}
					select {
					case <-ctx.Done(): // nobody answers; the dialog closes when withdrawn
						closed <- struct{}{}
						return nil, ctx.Err()
					case <-quit:
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
				},
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "ends", Version: "1"}, client).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: ep.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			defer close(quit)
			over := gateway.HandedOver(g)

			got, res := callText(t, cs, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
			if !res.IsError || !strings.Contains(got, "timed out") {
				t.Errorf("a call whose question nobody answers: isError %v, %q; want its timeout", res.IsError, got)
			}
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("the call timed out, and its question was still open 5 s later")
			}

			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
				done <- err
			}()
			select {
			case <-opened:
			case <-time.After(20 * time.Second):
				t.Fatal("the second call's question never reached the client")
			}
			<-opened // the first call's
			cancel()
			if err := <-done; err == nil {
				t.Error("a cancelled call answered")
			}
			if want := map[string]int64{"sdk": 0, "fast": 2}[ep.name]; gateway.HandedOver(g)-over != want {
				t.Errorf("%d calls handed over, want %d", gateway.HandedOver(g)-over, want)
			}
			if got, res := callText(t, cs, &mcp.CallToolParams{Name: "alpha__calls", Arguments: map[string]any{}}); res.IsError || !strings.Contains(got, "calls: ") {
				t.Errorf("after the cancelled call: isError %v, %q", res.IsError, got)
			}
		})
	}
}

// callsOf reads the count of the elicit server's calls tool's answer.
func callsOf(t *testing.T, answer string) int {
	t.Helper()
	_, after, ok := strings.Cut(answer, "calls: ")
	var n int
	if _, err := fmt.Sscanf(after, "%d", &n); !ok || err != nil {
		t.Fatalf("not an answer of calls: %q", answer)
	}
	return n
}

// A call that carries a progress token and arbitrary keys of the
// client's own in its _meta (VS Code and Claude Code send both with every
// call) takes the fast path, on a 2025-11-25 session and as a 2026-07-28
// request, and the server's progress reaches the client: over HTTP the
// call is handed over to the SDK at its first notification, which goes on
// the call's stream; over stdio it goes on the one stream. Side by side
// with the SDK's path.
func TestFastPathForwardsProgress(t *testing.T) {
	type outcome struct {
		progress   []string
		answer     string
		fast, over int64
	}
	call := func(t *testing.T, g *gateway.Gateway, caps *mcp.ClientCapabilities, connect func(*mcp.ClientOptions) *mcp.ClientSession) outcome {
		var (
			mu sync.Mutex
			o  outcome
		)
		cs := connect(&mcp.ClientOptions{
			Capabilities: caps,
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				o.progress = append(o.progress, fmt.Sprintf("%v %v/%v %s", req.Params.ProgressToken, req.Params.Progress, req.Params.Total, req.Params.Message))
			},
		})
		fast, over := gateway.FastCalls(g), gateway.HandedOver(g)
		params := &mcp.CallToolParams{Name: "echo__slow", Arguments: map[string]any{"ms": 60, "steps": 3},
			Meta: mcp.Meta{"progressToken": "tok-1", "vscode.conversationId": "c1", "vscode.requestId": "r1"}}
		got, res := callText(t, cs, params)
		o.answer = fmt.Sprintf("isError %v: %s", res.IsError, got)
		o.fast, o.over = gateway.FastCalls(g)-fast, gateway.HandedOver(g)-over
		// The Go SDK's client may hand the last notification to its
		// handler after the answer (it reads both in order, and runs the
		// handler concurrently): wait for it a little.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			n := len(o.progress)
			mu.Unlock()
			if n >= 3 {
				break
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return o
	}
	want := []string{"tok-1 1/3 step 1 of 3", "tok-1 2/3 step 2 of 3", "tok-1 3/3 step 3 of 3"}
	check := func(t *testing.T, name string, o outcome, fast, over int64) {
		t.Helper()
		if strings.Join(o.progress, "\n") != strings.Join(want, "\n") || !strings.Contains(o.answer, "isError false") {
			t.Errorf("%s: progress %q, answer %q; want %q", name, o.progress, o.answer, want)
		}
		if o.fast != fast || o.over != over {
			t.Errorf("%s: %d calls on the fast path, %d handed over; want %d and %d", name, o.fast, o.over, fast, over)
		}
	}

	t.Run("http", func(t *testing.T) {
		sb := openSB(t, []config.ResolvedServer{stdio("echo", "echo")}, benchHost)
		g, fastURL, sdkURL := syncedEndpoints(t, sb)
		ctx := ctxFor(t, 60*time.Second)
		// A session on 2025-11-25; requests on 2026-07-28, from a client
		// that cannot be asked (the call runs on its request) and from one
		// that can (the call is held on a relay worker, as Claude Code's).
		for _, kind := range []struct {
			protocol string
			caps     *mcp.ClientCapabilities
		}{{"2025-11-25", &mcp.ClientCapabilities{}}, {"2026-07-28", &mcp.ClientCapabilities{}}, {"2026-07-28", elicitCaps}} {
			for _, ep := range []struct {
				name       string
				url        string
				fast, over int64
			}{{"sdk", sdkURL, 0, 0}, {"fast", fastURL, 1, 1}} {
				o := call(t, g, kind.caps, func(opts *mcp.ClientOptions) *mcp.ClientSession {
					cs, err := mcp.NewClient(&mcp.Implementation{Name: "progress", Version: "1"}, opts).Connect(ctx,
						&mcp.StreamableClientTransport{Endpoint: ep.url}, &mcp.ClientSessionOptions{ProtocolVersion: kind.protocol})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { cs.Close() })
					return cs
				})
				check(t, fmt.Sprintf("%s, %s, elicitation %v", ep.name, kind.protocol, kind.caps.Elicitation != nil), o, ep.fast, ep.over)
			}
		}
	})
	t.Run("stdio", func(t *testing.T) {
		f := startWith(t, fixtureOpts{host: benchHost, protocol: "2025-11-25", run: true}, nil, stdio("echo", "echo"))
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			o := call(t, f.g, &mcp.ClientCapabilities{}, func(opts *mcp.ClientOptions) *mcp.ClientSession { return f.connect(t, true, opts, protocol) })
			check(t, "stdio, "+protocol, o, 1, 0)
		}
	})
}

// syncedEndpoints is a gateway on sb, synced, served at two endpoints: the
// default one (with the fast path) and one with SDKOnly.
func syncedEndpoints(t *testing.T, sb *switchboard.Switchboard) (g *gateway.Gateway, fastURL, sdkURL string) {
	t.Helper()
	g = gateway.New(sb, &gateway.Options{FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctxFor(t, 60*time.Second)); err != nil {
		t.Fatal(err)
	}
	fastURL, sdkURL = fastAndSDK(t, g, gateway.HTTPOptions{})
	return g, fastURL, sdkURL
}

// askingPermit allows the tools of allow and has the gateway's Asker
// ask about every other.
func askingPermit(allow ...string) host.Permit {
	return host.PolicyPermit(policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, allow, nil, nil)...),
		&host.PermitOptions{Asker: &gateway.Asker{}})
}
