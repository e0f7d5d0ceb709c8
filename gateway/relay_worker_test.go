package gateway_test

import (
	"context"
	"fmt"
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

// The host calls of 2026-07-28 clients run on the relay's workers:
// goroutines kept from one call to the next, so that a call does not grow
// a fresh goroutine's stack. These tests show that workers are reused and
// bounded and end with the gateway, and that calls on them (here of
// clients that declared no elicitation, the common case) still answer,
// are cancelled by the client, by its connection's end and by Close,
// forward progress and decline a server's question.

// probe is a Permit that lets every call run. With hold > 0, each call
// waits in it until hold calls have come in: then that many host calls
// run at once.
type probe struct {
	g       atomic.Pointer[gateway.Gateway]
	mu      sync.Mutex
	hold    int
	entered int
	release chan struct{}
}

func (p *probe) permit(ctx context.Context, _ host.PermitRequest) error {
	p.mu.Lock()
	rel := p.release
	if p.hold > 0 {
		if p.entered++; p.entered == p.hold {
			close(p.release)
			p.hold, p.entered = 0, 0
		}
	}
	p.mu.Unlock()
	if rel != nil {
		select {
		case <-rel:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// holdNext makes the next n calls wait for one another.
func (p *probe) holdNext(n int) {
	p.mu.Lock()
	p.hold, p.entered, p.release = n, 0, make(chan struct{})
	p.mu.Unlock()
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

// waitFor waits until what() returns want.
func waitFor(t *testing.T, what string, want int, f func() int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for f() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want %d", what, f(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitIdleWorkers(t *testing.T, g *gateway.Gateway, n int) {
	t.Helper()
	waitFor(t, "idle workers", n, func() int { return gateway.RelayIdleWorkers(g) })
}

func waitRunning(t *testing.T, g *gateway.Gateway, n int) {
	t.Helper()
	waitFor(t, "host calls running", n, func() int { _, r := gateway.RelayCounts(g); return r })
}

func echo(t *testing.T, cs *mcp.ClientSession, text string) {
	t.Helper()
	got, res := callText(t, cs, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": text}})
	if res.IsError || !strings.Contains(got, text) {
		t.Errorf("echo %q: isError %v, %q", text, res.IsError, got)
	}
}

// One call after another runs on the same worker, whether the client
// declared elicitation or not.
func TestRelayWorkersReused(t *testing.T) {
	f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
	asking := f.connect(t, true, rawClient(), "")
	for i := range 6 {
		cs := f.session
		if i%2 == 1 {
			cs = asking
		}
		echo(t, cs, fmt.Sprint("call ", i))
		waitIdleWorkers(t, f.g, 1)
	}
	if n := gateway.RelayIdleWorkers(f.g); n != 1 {
		t.Errorf("%d idle workers after calls one at a time, want 1", n)
	}
}

// Calls at once run on as many workers; of those, at most MaxIdleWorkers
// wait for the next call, and Close ends them.
func TestRelayWorkersBounded(t *testing.T) {
	f, p := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
	atOnce := func(n int) {
		p.holdNext(n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { echo(t, f.session, fmt.Sprint("at once ", i)) })
		}
		wg.Wait()
	}
	atOnce(3)
	waitIdleWorkers(t, f.g, 3)
	atOnce(gateway.MaxIdleWorkers + 4)
	waitIdleWorkers(t, f.g, gateway.MaxIdleWorkers)
	echo(t, f.session, "one more")
	waitIdleWorkers(t, f.g, gateway.MaxIdleWorkers)
	f.g.Close()
	waitIdleWorkers(t, f.g, 0)
}

// The client's cancel ends the call at once (the server's slow tool would
// run a minute; hang-call's hang ignores the cancel and never returns),
// and the server stays usable.
func TestRelayWorkerCallCancelled(t *testing.T) {
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
				_, err := f.session.CallTool(cctx, &mcp.CallToolParams{Name: "alpha__" + c.tool, Arguments: c.args})
				errc <- err
			}()
			waitRunning(t, f.g, 1)
			cancel()
			if err := <-errc; err == nil {
				t.Fatal("cancelled call returned no error")
			}
			waitRelayIdle(t, f.g)
			echo(t, f.session, "after")
		})
	}
}

// The end of the client's connection ends its calls: the client goes away
// (its pipe ends close, as when its process dies) with a call in flight.
func TestRelayWorkerCallClientGone(t *testing.T) {
	f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	sr, sw, cr, cw := clientPipes(t)
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
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"ms": 60000, "steps": 1}})
	waitRunning(t, f.g, 1)
	cw.Close()
	cr.Close()
	waitRelayIdle(t, f.g) // well before the minute
}

// Close cancels the calls in flight, and refuses calls after it.
func TestRelayWorkerCallGatewayClose(t *testing.T) {
	f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := f.session.CallTool(ctxFor(t, 30*time.Second), &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"ms": 60000, "steps": 1}})
		done <- answer{res, err}
	}()
	waitRunning(t, f.g, 1)
	f.g.Close()
	waitRelayIdle(t, f.g)
	if a := <-done; a.err == nil && !a.res.IsError {
		t.Errorf("the call in flight at Close answered %q", textOf(t, a.res))
	}
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "late"}})
	if !res.IsError {
		t.Errorf("a call after Close: %q", got)
	}
	wantContains(t, "a call after Close", got, "the gateway is closed")
}

// The server's progress reaches the client under the client's own token.
func TestRelayWorkerCallProgress(t *testing.T) {
	var mu sync.Mutex
	var got []string
	f, _ := startProbed(t, fixtureOpts{client: &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, fmt.Sprint(req.Params.ProgressToken)+" "+req.Params.Message)
			mu.Unlock()
		},
	}}, stdio("alpha", "echo"))
	for _, tok := range []string{"tok-1", "tok-2"} { // the second on a reused worker
		params := &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"ms": 600, "steps": 3}}
		params.SetProgressToken(tok)
		if _, res := callText(t, f.session, params); res.IsError {
			t.Fatalf("slow: %v", res)
		}
		// The last step may race the result (see TestProgressIsForwarded),
		// and come after the next call's first.
		mu.Lock()
		var mine []string
		for _, g := range got {
			if strings.HasPrefix(g, tok+" ") {
				mine = append(mine, g)
			}
		}
		mu.Unlock()
		if len(mine) < 2 || mine[0] != tok+" step 1 of 3" || mine[1] != tok+" step 2 of 3" {
			t.Errorf("progress under %s = %q, want steps 1 and 2 (and maybe 3)", tok, mine)
		}
		waitIdleWorkers(t, f.g, 1)
	}
}

// A server's question to a client that declared no elicitation is
// declined without reaching it, whether the server asks with an input
// request (2026-07-28) or with elicitation/create (2025-11-25), and
// nothing is held.
func TestRelayWorkerCallDeclinesQuestion(t *testing.T) {
	for _, server := range [][]string{nil, {"-protocol", "2025-11-25"}} {
		t.Run(strings.Join(append([]string{"server"}, server...), " "), func(t *testing.T) {
			f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "elicit", server...))
			for range 2 { // the second on a reused worker
				got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
				if res.IsError || !strings.Contains(got, "answer: the user chose decline") {
					t.Errorf("ask: isError %v, %q", res.IsError, got)
				}
				if held, _ := gateway.RelayCounts(f.g); held != 0 {
					t.Errorf("%d calls held", held)
				}
			}
		})
	}
}
