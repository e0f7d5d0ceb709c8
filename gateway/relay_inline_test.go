package gateway_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// A client on protocol 2026-07-28 that declared no elicitation cannot be
// asked an upstream server's question, so its calls run on the request's
// own goroutine rather than held (callInline). These tests show, through
// the relay's own count, that they do, and that they still answer, are
// cancelled (by the client, its connection's end and Close), forward
// progress and decline a server's question.

// probe is a Permit that lets every call run and records, as the host
// call runs, how the relay runs it.
type probe struct {
	g    atomic.Pointer[gateway.Gateway]
	mu   sync.Mutex
	seen []string // per call: "inline=<n> running=<n>"
}

func (p *probe) permit(_ context.Context, _ host.PermitRequest) error {
	g := p.g.Load()
	_, running := gateway.RelayCounts(g)
	p.mu.Lock()
	p.seen = append(p.seen, fmt.Sprintf("inline=%d running=%d", gateway.RelayInline(g), running))
	p.mu.Unlock()
	return nil
}

func (p *probe) calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// startProbed starts a fixture whose host calls the probe; the client
// (fo.client, or one without elicitation) talks to the gateway over pipes
// with the transport of `serve --stdio`.
func startProbed(t *testing.T, fo fixtureOpts, servers ...config.ResolvedServer) (*fixture, *probe) {
	t.Helper()
	p := &probe{}
	fo.permit, fo.pipe = p.permit, true
	if fo.prompter == nil {
		fo.prompter = gateway.Prompter{}
	}
	f := startWith(t, fo, nil, servers...)
	p.g.Store(f.g)
	return f, p
}

// waitInline waits until n host calls run inline.
func waitInline(t *testing.T, g *gateway.Gateway, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for gateway.RelayInline(g) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls run inline, want %d", gateway.RelayInline(g), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func wantSeen(t *testing.T, p *probe, want ...string) {
	t.Helper()
	if got := p.calls(); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("the host calls ran as %q, want %q", got, want)
	}
}

// (a) The call answers, run inline; a client that declared elicitation
// still has its call held (run on the relay's goroutine).
func TestInlineCallAnswers(t *testing.T) {
	f, p := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "mcp__alpha__echo", Arguments: map[string]any{"text": "hi"}})
	if res.IsError || !strings.Contains(got, "hi") {
		t.Errorf("echo: isError %v, %q", res.IsError, got)
	}
	wantSeen(t, p, "inline=1 running=1")
	waitRelayIdle(t, f.g)

	held := f.connect(t, true, rawClient(), "")
	got, res = callText(t, held, &mcp.CallToolParams{Name: "mcp__alpha__echo", Arguments: map[string]any{"text": "ho"}})
	if res.IsError || !strings.Contains(got, "ho") {
		t.Errorf("echo of a client with elicitation: isError %v, %q", res.IsError, got)
	}
	wantSeen(t, p, "inline=1 running=1", "inline=0 running=1")
}

// The capabilities a client declares are read per request: a client
// declaring only URL elicitation can still be asked (a URL question), so
// its call is held; one declaring roots only is not.
func TestInlineDependsOnElicitationOnly(t *testing.T) {
	f, p := startProbed(t, fixtureOpts{client: &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
		RootsV2: &mcp.RootCapabilities{ListChanged: true},
	}}}, stdio("alpha", "echo"))
	callText(t, f.session, &mcp.CallToolParams{Name: "mcp__alpha__echo", Arguments: map[string]any{"text": "a"}})
	urlOnly := f.connect(t, true, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}, "")
	callText(t, urlOnly, &mcp.CallToolParams{Name: "mcp__alpha__echo", Arguments: map[string]any{"text": "b"}})
	wantSeen(t, p, "inline=1 running=1", "inline=0 running=1")
}

// (b) The client's cancel ends the inline call at once (the server's slow
// tool would run a minute; hang-call's hang ignores the cancel and never
// returns), and the server stays usable.
func TestInlineCallCancelled(t *testing.T) {
	for _, c := range []struct {
		server, tool string
		args         map[string]any
	}{
		{"echo", "slow", map[string]any{"ms": 60000, "steps": 1}},
		{"hang-call", "hang", map[string]any{}},
	} {
		t.Run(c.server, func(t *testing.T) {
			f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", c.server))
			cctx, cancel := context.WithCancel(ctxFor(t, 30*time.Second))
			errc := make(chan error, 1)
			go func() {
				_, err := f.session.CallTool(cctx, &mcp.CallToolParams{Name: "mcp__alpha__" + c.tool, Arguments: c.args})
				errc <- err
			}()
			waitInline(t, f.g, 1)
			cancel()
			if err := <-errc; err == nil {
				t.Fatal("cancelled call returned no error")
			}
			waitRelayIdle(t, f.g)
			got, res := callText(t, f.session, &mcp.CallToolParams{Name: "mcp__alpha__echo", Arguments: map[string]any{"text": "after"}})
			if res.IsError || !strings.Contains(got, "after") {
				t.Errorf("call after cancel: isError %v, %q", res.IsError, got)
			}
		})
	}
}

// The end of the client's connection ends its inline calls: the client
// goes away (its pipe ends close, as when its process dies) with a call
// in flight.
func TestInlineCallClientGone(t *testing.T) {
	f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	sr, cw, err := os.Pipe() // client → gateway
	if err != nil {
		t.Fatal(err)
	}
	cr, sw, err := os.Pipe() // gateway → client
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range []*os.File{sr, cw, cr, sw} {
			p.Close()
		}
	})
	ss, err := f.g.Server().Connect(ctx, &jsonl.Transport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "going", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
		Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__alpha__slow", Arguments: map[string]any{"ms": 60000, "steps": 1}})
	waitInline(t, f.g, 1)
	cw.Close()
	cr.Close()
	waitRelayIdle(t, f.g) // well before the minute
}

// Close cancels the inline calls in flight, and refuses calls after it,
// as it does held ones.
func TestInlineCallGatewayClose(t *testing.T) {
	f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := f.session.CallTool(ctxFor(t, 30*time.Second), &mcp.CallToolParams{Name: "mcp__alpha__slow", Arguments: map[string]any{"ms": 60000, "steps": 1}})
		done <- answer{res, err}
	}()
	waitInline(t, f.g, 1)
	f.g.Close()
	waitRelayIdle(t, f.g)
	a := <-done
	if a.err == nil && !a.res.IsError {
		t.Errorf("the call in flight at Close answered %q", textOf(t, a.res))
	}
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "mcp__alpha__echo", Arguments: map[string]any{"text": "late"}})
	if !res.IsError {
		t.Errorf("a call after Close: %q", got)
	}
	wantContains(t, "a call after Close", got, "the gateway is closed")
}

// (c) The server's progress reaches the client under the client's own
// token.
func TestInlineCallProgress(t *testing.T) {
	var mu sync.Mutex
	var got []string
	f, p := startProbed(t, fixtureOpts{client: &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, fmt.Sprint(req.Params.ProgressToken)+" "+req.Params.Message)
			mu.Unlock()
		},
	}}, stdio("alpha", "echo"))
	params := &mcp.CallToolParams{Name: "mcp__alpha__slow", Arguments: map[string]any{"ms": 600, "steps": 3}}
	params.SetProgressToken("tok-inline")
	if _, res := callText(t, f.session, params); res.IsError {
		t.Fatalf("slow: %v", res)
	}
	wantSeen(t, p, "inline=1 running=1")
	// The last step may race the result (see TestProgressIsForwarded).
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 || got[0] != "tok-inline step 1 of 3" || got[1] != "tok-inline step 2 of 3" {
		t.Errorf("progress = %q, want steps 1 and 2 (and maybe 3) under tok-inline", got)
	}
}

// (d) A server's question is declined without reaching the client,
// whether the server asks with an input request (2026-07-28) or with
// elicitation/create (2025-11-25), and nothing is held.
func TestInlineCallDeclinesQuestion(t *testing.T) {
	for _, server := range [][]string{nil, {"-protocol", "2025-11-25"}} {
		t.Run(strings.Join(append([]string{"server"}, server...), " "), func(t *testing.T) {
			f, p := startProbed(t, fixtureOpts{}, stdio("alpha", "elicit", server...))
			got, res := callText(t, f.session, &mcp.CallToolParams{Name: "mcp__alpha__ask", Arguments: map[string]any{}})
			if res.IsError || !strings.Contains(got, "answer: the user chose decline") {
				t.Errorf("ask: isError %v, %q", res.IsError, got)
			}
			if held, _ := gateway.RelayCounts(f.g); held != 0 {
				t.Errorf("%d calls held", held)
			}
			// The SDK calls the server again with the declined answer
			// on 2026-07-28: a permit per call it makes.
			for _, s := range p.calls() {
				if s != "inline=1 running=1" {
					t.Errorf("a host call ran as %q, want inline", s)
				}
			}
		})
	}
}
