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
)

// The host calls of 2026-07-28 clients that declared elicitation run on
// the relay's workers (a server's question goes back in the call's result
// while the call waits for the retry): goroutines kept from one call to
// the next, so that a call does not grow a fresh goroutine's stack. A
// client that declared none cannot be asked, so its call cannot outlive
// its request and runs on the request's own goroutine, counted with the
// relay's calls. These tests show that workers are reused and bounded and
// end with the gateway, that the call of a client that cannot be asked
// takes none (on Gateway.Run, the stdio fast path still hands each call
// from the reading goroutine to one), and
// that calls of both kinds of client still answer, are cancelled by the
// client, by its connection's end and by Close, and forward progress, and
// that a server's question to a client that cannot be asked is declined.

// clientKinds are the two kinds of 2026-07-28 client: nil is the
// fixture's, which declared no elicitation.
var clientKinds = []struct {
	name string
	opts func() *mcp.ClientOptions
}{
	{"cannot be asked", func() *mcp.ClientOptions { return nil }},
	{"can be asked", rawClient},
}

// session is a session of the kind's client with f (the fixture's own
// for the client that cannot be asked).
func session(t *testing.T, f *fixture, opts func() *mcp.ClientOptions) *mcp.ClientSession {
	if o := opts(); o != nil {
		return f.connect(t, true, o, "")
	}
	return f.session
}

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

// A client that cannot be asked starts no worker; one call after another
// of a client that can runs on the same worker, and the other client's
// calls between them leave it as it is.
func TestRelayWorkersReused(t *testing.T) {
	f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
	for i := range 3 {
		echo(t, f.session, fmt.Sprint("not asking ", i))
		if n := gateway.RelayIdleWorkers(f.g); n != 0 {
			t.Fatalf("%d idle workers after calls of a client that cannot be asked, want 0", n)
		}
	}
	asking := f.connect(t, true, rawClient(), "")
	for i := range 6 {
		cs := asking
		if i%2 == 1 {
			cs = f.session
		}
		echo(t, cs, fmt.Sprint("call ", i))
		waitIdleWorkers(t, f.g, 1)
	}
	waitRelayIdle(t, f.g)
	if n := gateway.RelayIdleWorkers(f.g); n != 1 {
		t.Errorf("%d idle workers after calls one at a time, want 1", n)
	}
}

// Calls at once run on as many workers; of those, at most MaxIdleWorkers
// wait for the next call, and Close ends them.
func TestRelayWorkersBounded(t *testing.T) {
	f, p := startProbed(t, fixtureOpts{client: rawClient()}, stdio("alpha", "echo"))
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
		for _, k := range clientKinds {
			t.Run(c.server+", "+k.name, func(t *testing.T) {
				f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", c.server))
				cs := session(t, f, k.opts)
				cctx, cancel := context.WithCancel(ctxFor(t, 30*time.Second))
				errc := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "alpha__" + c.tool, Arguments: c.args})
					errc <- err
				}()
				waitRunning(t, f.g, 1)
				cancel()
				if err := <-errc; err == nil {
					t.Fatal("cancelled call returned no error")
				}
				waitRelayIdle(t, f.g)
				echo(t, cs, "after")
			})
		}
	}
}

// The end of the client's connection ends its calls: the client goes away
// (its pipe ends close, as when its process dies) with a call in flight.
func TestRelayWorkerCallClientGone(t *testing.T) {
	for _, k := range clientKinds {
		t.Run(k.name, func(t *testing.T) {
			f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
			ctx := ctxFor(t, 30*time.Second)
			cs, cr, cw := goingClient(t, ctx, f, k.opts())
			go cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"ms": 60000, "steps": 1}})
			waitRunning(t, f.g, 1)
			cw.Close()
			cr.Close()
			waitRelayIdle(t, f.g) // well before the minute
		})
	}
}

// Close cancels the calls in flight, and refuses calls after it.
func TestRelayWorkerCallGatewayClose(t *testing.T) {
	for _, k := range clientKinds {
		t.Run(k.name, func(t *testing.T) {
			f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "echo"))
			cs := session(t, f, k.opts)
			type answer struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan answer, 1)
			go func() {
				res, err := cs.CallTool(ctxFor(t, 30*time.Second), &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"ms": 60000, "steps": 1}})
				done <- answer{res, err}
			}()
			waitRunning(t, f.g, 1)
			f.g.Close()
			waitRelayIdle(t, f.g)
			if a := <-done; a.err == nil && !a.res.IsError {
				t.Errorf("the call in flight at Close answered %q", textOf(t, a.res))
			}
			got, res := callText(t, cs, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "late"}})
			if !res.IsError {
				t.Errorf("a call after Close: %q", got)
			}
			wantContains(t, "a call after Close", got, "the gateway is closed")
		})
	}
}

// The server's progress reaches the client under the client's own token.
func TestRelayWorkerCallProgress(t *testing.T) {
	for _, k := range clientKinds {
		t.Run(k.name, func(t *testing.T) { relayWorkerCallProgress(t, k.opts() != nil) })
	}
}

func relayWorkerCallProgress(t *testing.T, asking bool) {
	var mu sync.Mutex
	var got []string
	caps := &mcp.ClientCapabilities{}
	if asking {
		caps = elicitCaps
	}
	f, _ := startProbed(t, fixtureOpts{client: &mcp.ClientOptions{
		Capabilities:   caps,
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, fmt.Sprint(req.Params.ProgressToken)+" "+req.Params.Message)
			mu.Unlock()
		},
	}}, stdio("alpha", "echo"))
	for _, tok := range []string{"tok-1", "tok-2"} { // the second on a reused worker, if any
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
		waitRelayIdle(t, f.g)
		if asking {
			waitIdleWorkers(t, f.g, 1)
		} else if n := gateway.RelayIdleWorkers(f.g); n != 0 {
			t.Errorf("%d idle workers after calls of a client that cannot be asked, want 0", n)
		}
	}
}

// A server's question to a client that declared no elicitation is
// declined without reaching it, whether the server asks with an input
// request (2026-07-28) or with elicitation/create (2025-11-25), nothing is
// held and no worker is started.
func TestRelayWorkerCallDeclinesQuestion(t *testing.T) {
	for _, server := range [][]string{nil, {"-protocol", "2025-11-25"}} {
		t.Run(strings.Join(append([]string{"server"}, server...), " "), func(t *testing.T) {
			f, _ := startProbed(t, fixtureOpts{}, stdio("alpha", "elicit", server...))
			for range 2 {
				got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
				if res.IsError || !strings.Contains(got, "answer: the user chose decline") {
					t.Errorf("ask: isError %v, %q", res.IsError, got)
				}
				if held, _ := gateway.RelayCounts(f.g); held != 0 {
					t.Errorf("%d calls held", held)
				}
				if n := gateway.RelayIdleWorkers(f.g); n != 0 {
					t.Errorf("%d idle workers, want 0", n)
				}
			}
		})
	}
}
