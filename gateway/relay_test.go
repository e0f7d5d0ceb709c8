package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// Questions that the upstream "elicit" test server (a child process) asks
// during a call reach a client on protocol 2026-07-28 as input requests of
// the call's result; the client's retry answers them.

// elicitCaps declares form elicitation.
var elicitCaps = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}

// rawClient is a client on 2026-07-28 that leaves input requests to the
// test: it declares elicitation, but the SDK does not retry for it.
func rawClient() *mcp.ClientOptions {
	return &mcp.ClientOptions{Capabilities: elicitCaps, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
}

// answering is a client whose elicitation handler answers with answer(msg)
// and records every question.
type answering struct {
	mu     sync.Mutex
	asked  []*mcp.ElicitParams
	answer func(msg string) *mcp.ElicitResult
}

func (a *answering) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: elicitCaps,
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.mu.Lock()
			a.asked = append(a.asked, req.Params)
			a.mu.Unlock()
			return a.answer(req.Params.Message), nil
		},
	}
}

func (a *answering) messages() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, p := range a.asked {
		out = append(out, p.Message)
	}
	return out
}

func accept(field, value string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{field: value}}
}

func callText(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) (string, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(ctxFor(t, 30*time.Second), params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	if res.NeedsInput() {
		return "", res
	}
	return textOf(t, res), res
}

// question returns the one input request of an input-required result.
func question(t *testing.T, res *mcp.CallToolResult) (key string, p *mcp.ElicitParams) {
	t.Helper()
	if res == nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("want one input request, got %+v", res)
	}
	for k, v := range res.InputRequests {
		ep, ok := v.(*mcp.ElicitParams)
		if !ok {
			t.Fatalf("input request %q is %T, want an elicitation", k, v)
		}
		return k, ep
	}
	panic("unreachable")
}

// upstreamCalls asks the elicit server how many tools/call requests
// reached it (the calls call itself included).
func upstreamCalls(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	got, _ := callText(t, cs, &mcp.CallToolParams{Name: "alpha__calls", Arguments: map[string]any{}})
	return got
}

// waitRelayIdle waits until no call is held or running: the held calls'
// goroutines have ended.
func waitRelayIdle(t *testing.T, g *gateway.Gateway) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		held, running := gateway.RelayCounts(g)
		if held == 0 && running == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay still holds %d calls and runs %d", held, running)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func wantContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%s = %q, want it to contain %q", what, got, s)
		}
	}
}

// The SDK client answers input requests itself (its elicitation handler)
// and calls again: one question, a second one after the first, two at
// once, a decline and a cancel.
func TestUpstreamQuestionSDKRoundTrip(t *testing.T) {
	a := &answering{answer: func(msg string) *mcp.ElicitResult {
		switch msg {
		case "[alpha] Your name?":
			return accept("name", "Ada")
		case "[alpha] Your colour?":
			return accept("colour", "teal")
		case "[alpha] First?":
			return accept("first", "one")
		case "[alpha] Second?":
			return accept("second", "two")
		case "[alpha] Decline?":
			return &mcp.ElicitResult{Action: "decline"}
		case "[alpha] Cancel?":
			return &mcp.ElicitResult{Action: "cancel"}
		}
		return accept("answer", "blue")
	}}
	f := startWith(t, fixtureOpts{client: a.options(), prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	for _, tc := range []struct {
		tool, question, want string
	}{
		{"ask", "Colour?", "answer: blue"},
		{"ask_twice", "", "name: Ada, colour: teal"},
		{"ask_both", "", "first: one, second: two"},
		{"ask", "Decline?", "answer: the user chose decline"},
		{"ask", "Cancel?", "answer: the user chose cancel"},
	} {
		args := map[string]any{}
		if tc.question != "" {
			args["question"] = tc.question
		}
		got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__" + tc.tool, Arguments: args})
		if res.IsError || !strings.Contains(got, tc.want) || !strings.Contains(got, `server="alpha"`) {
			t.Errorf("%s: isError %v, %q, want the envelope around %q", tc.tool, res.IsError, got, tc.want)
		}
	}
	msgs := a.messages()
	want := map[string]bool{
		"[alpha] Colour?": true, "[alpha] Your name?": true, "[alpha] Your colour?": true,
		"[alpha] First?": true, "[alpha] Second?": true, "[alpha] Decline?": true, "[alpha] Cancel?": true,
	}
	if len(msgs) != len(want) {
		t.Errorf("questions %q, want each of %v once", msgs, want)
	}
	for _, m := range msgs {
		if !want[m] {
			t.Errorf("unexpected question %q", m)
		}
	}
	a.mu.Lock()
	schema, _ := a.asked[0].RequestedSchema.(map[string]any)
	a.mu.Unlock()
	if props, _ := schema["properties"].(map[string]any); props["answer"] == nil {
		t.Errorf("the server's requested schema did not reach the client: %v", schema)
	}
	waitRelayIdle(t, f.g)
}

// A client that handles input requests itself: the question, its
// requestState, the retry, and retries that must not reach the server.
func TestUpstreamQuestionRawRetry(t *testing.T) {
	f := startWith(t, fixtureOpts{client: rawClient(), prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	args := map[string]any{"question": "Colour?"}
	_, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: args})
	key, q := question(t, res)
	if q.Message != "[alpha] Colour?" || !strings.HasPrefix(key, "upstream_") {
		t.Errorf("question %q: %q", key, q.Message)
	}
	state := res.RequestState
	if !strings.HasPrefix(state, "relay:") || len(state) < 40 {
		t.Fatalf("requestState %q", state)
	}
	retry := func(state string, args map[string]any, responses mcp.InputResponseMap) (string, *mcp.CallToolResult) {
		t.Helper()
		return callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: args, InputResponses: responses, RequestState: state})
	}

	// A retry with other arguments is refused, and leaves the question
	// waiting for the real retry.
	got, res := retry(state, map[string]any{"question": "Other?"}, mcp.InputResponseMap{key: accept("answer", "x")})
	if !res.IsError {
		t.Errorf("retry with other arguments: %q", got)
	}
	wantContains(t, "retry with other arguments", got, "retry must repeat the tool and arguments")

	// A retry that does not answer the question gets it again, under a
	// new requestState; the old one is spent.
	_, res = retry(state, args, mcp.InputResponseMap{"something_else": accept("answer", "x")})
	key2, q2 := question(t, res)
	if key2 != key || q2.Message != q.Message || res.RequestState == state {
		t.Errorf("asked again: %q %q under %q (first %q %q under %q)", key2, q2.Message, res.RequestState, key, q.Message, state)
	}
	spent := state
	state = res.RequestState

	got, res = retry(state, args, mcp.InputResponseMap{key: accept("answer", "teal")})
	if res.IsError || !strings.Contains(got, "answer: teal") {
		t.Errorf("answered retry: isError %v, %q", res.IsError, got)
	}
	// Spent requestStates are refused.
	for _, s := range []string{spent, state} {
		got, res = retry(s, args, mcp.InputResponseMap{key: accept("answer", "again")})
		if !res.IsError {
			t.Errorf("replayed requestState: %q", got)
		}
		wantContains(t, "replayed requestState", got, "no question is waiting", "call the tool again")
	}
	// The first call and its one retry reached the server, nothing else.
	if got := upstreamCalls(t, f.session); !strings.Contains(got, "calls: 3") {
		t.Errorf("upstream saw %q, want calls: 3", got)
	}
	waitRelayIdle(t, f.g)
}

// Forged or foreign requestStates are refused with a clear message and
// never reach the server.
func TestUpstreamQuestionForgedState(t *testing.T) {
	f := startWith(t, fixtureOpts{client: rawClient(), prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	args := map[string]any{"question": "Colour?"}
	_, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: args})
	key, _ := question(t, res)
	real := res.RequestState
	inst, _, _ := strings.Cut(strings.TrimPrefix(real, "relay:"), ".")
	for _, tc := range []struct{ state, want string }{
		{real[:len(real)-1] + flip(real[len(real)-1]), "no question is waiting"},
		{"relay:" + inst + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "no question is waiting"},
		{"relay:" + flipAll(inst) + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "another gateway instance"},
		{"relay:", "no question is waiting"},
		{"made-up", "not issued by this gateway"},
	} {
		got, res := callText(t, f.session, &mcp.CallToolParams{
			Name: "alpha__ask", Arguments: args, RequestState: tc.state,
			InputResponses: mcp.InputResponseMap{key: accept("answer", "forged")},
		})
		if !res.IsError {
			t.Errorf("requestState %q: %q", tc.state, got)
		}
		wantContains(t, fmt.Sprintf("requestState %q", tc.state), got, tc.want)
	}
	if got := upstreamCalls(t, f.session); !strings.Contains(got, "calls: 2") {
		t.Errorf("upstream saw %q, want calls: 2 (the first call and this one)", got)
	}
	// The real question still waits and is answered.
	got, res := callText(t, f.session, &mcp.CallToolParams{
		Name: "alpha__ask", Arguments: args, RequestState: real,
		InputResponses: mcp.InputResponseMap{key: accept("answer", "teal")},
	})
	if res.IsError || !strings.Contains(got, "answer: teal") {
		t.Errorf("the real retry: isError %v, %q", res.IsError, got)
	}
	waitRelayIdle(t, f.g)
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func flipAll(s string) string {
	var b strings.Builder
	for i := range len(s) {
		b.WriteString(flip(s[i]))
	}
	return b.String()
}

// A client that never comes back: after the timeout the question is
// withdrawn and the upstream call cancelled (not answered: the server
// sees no retry), and its goroutine ends.
func TestUpstreamQuestionUnanswered(t *testing.T) {
	f := startWith(t, fixtureOpts{client: rawClient(), prompter: gateway.Prompter{}, pipe: true},
		&gateway.Options{ElicitationTimeout: 50 * time.Millisecond}, stdio("alpha", "elicit"))
	args := map[string]any{"question": "Colour?"}
	_, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: args})
	key, _ := question(t, res)
	waitRelayIdle(t, f.g)
	got, res := callText(t, f.session, &mcp.CallToolParams{
		Name: "alpha__ask", Arguments: args, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{key: accept("answer", "late")},
	})
	if !res.IsError {
		t.Errorf("late retry: %q", got)
	}
	wantContains(t, "late retry", got, "went unanswered for 50ms")
	if got := upstreamCalls(t, f.session); !strings.Contains(got, "calls: 2") {
		t.Errorf("upstream saw %q, want calls: 2 (the first call and this one)", got)
	}
}

// A client whose connection ends: its held calls are cancelled at once.
func TestUpstreamQuestionClientGone(t *testing.T) {
	f := startWith(t, fixtureOpts{prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	cs := f.connect(t, true, rawClient(), "")
	_, res := callText(t, cs, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
	question(t, res)
	if held, _ := gateway.RelayCounts(f.g); held != 1 {
		t.Fatalf("held %d calls, want 1", held)
	}
	cs.Close()
	waitRelayIdle(t, f.g) // well before the 5-minute timeout
}

// One client's requestState is nothing to another client, and calls in
// flight at once each get their own answer.
func TestUpstreamQuestionSessions(t *testing.T) {
	f := startWith(t, fixtureOpts{client: rawClient(), prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	other := f.connect(t, true, rawClient(), "")

	// Two calls of one client at once, and one of another client.
	type held struct {
		cs    *mcp.ClientSession
		args  map[string]any
		key   string
		state string
	}
	calls := []*held{
		{cs: f.session, args: map[string]any{"question": "Q0"}},
		{cs: f.session, args: map[string]any{"question": "Q1"}},
		{cs: other, args: map[string]any{"question": "Q2"}},
	}
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.cs.CallTool(ctxFor(t, 30*time.Second), &mcp.CallToolParams{Name: "alpha__ask", Arguments: c.args})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			key, q := question(t, res)
			if q.Message != fmt.Sprintf("[alpha] Q%d", i) {
				t.Errorf("call %d got question %q", i, q.Message)
			}
			c.key, c.state = key, res.RequestState
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// The other client cannot answer the first client's question, even
	// repeating its call exactly.
	got, res := callText(t, other, &mcp.CallToolParams{
		Name: "alpha__ask", Arguments: calls[0].args, RequestState: calls[0].state,
		InputResponses: mcp.InputResponseMap{calls[0].key: accept("answer", "stolen")},
	})
	if !res.IsError {
		t.Errorf("another client's retry: %q", got)
	}
	wantContains(t, "another client's retry", got, "no question is waiting")
	// Nor can a call answer another call of the same client.
	got, res = callText(t, f.session, &mcp.CallToolParams{
		Name: "alpha__ask", Arguments: calls[1].args, RequestState: calls[0].state,
		InputResponses: mcp.InputResponseMap{calls[0].key: accept("answer", "crossed")},
	})
	if !res.IsError {
		t.Errorf("a retry with another call's requestState: %q", got)
	}
	// Each owner answers its own, in any order.
	for _, i := range []int{2, 1, 0} {
		c := calls[i]
		got, res := callText(t, c.cs, &mcp.CallToolParams{
			Name: "alpha__ask", Arguments: c.args, RequestState: c.state,
			InputResponses: mcp.InputResponseMap{c.key: accept("answer", fmt.Sprintf("A%d", i))},
		})
		if res.IsError || !strings.Contains(got, fmt.Sprintf("answer: A%d", i)) {
			t.Errorf("call %d answered: isError %v, %q", i, res.IsError, got)
		}
	}
	waitRelayIdle(t, f.g)
}

// Many SDK clients and calls at once, each answering its own question.
func TestUpstreamQuestionConcurrentSDK(t *testing.T) {
	answerFor := func(msg string) *mcp.ElicitResult {
		return accept("answer", strings.TrimPrefix(msg, "[alpha] ask-")+"-answered")
	}
	a := &answering{answer: answerFor}
	f := startWith(t, fixtureOpts{client: a.options(), prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	b := &answering{answer: answerFor}
	sessions := []*mcp.ClientSession{f.session, f.connect(t, true, b.options(), "")}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := sessions[i%2]
			res, err := cs.CallTool(ctxFor(t, 30*time.Second), &mcp.CallToolParams{
				Name: "alpha__ask", Arguments: map[string]any{"question": fmt.Sprintf("ask-%d", i)},
			})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			if got := textOf(t, res); !strings.Contains(got, fmt.Sprintf("answer: %d-answered", i)) {
				t.Errorf("call %d: %q", i, got)
			}
		}()
	}
	wg.Wait()
	if n := len(a.messages()) + len(b.messages()); n != 8 {
		t.Errorf("%d questions asked, want 8", n)
	}
	waitRelayIdle(t, f.g)
}

// The permission question and the server's question in one call: first
// the gateway's own, then the server's.
func TestUpstreamQuestionAfterPermission(t *testing.T) {
	a := &answering{answer: func(msg string) *mcp.ElicitResult {
		if strings.HasPrefix(msg, "Allow ") {
			return accept("decision", gateway.DecisionOnce)
		}
		return accept("answer", "teal")
	}}
	f := startWith(t, fixtureOpts{client: a.options(), permit: testPermit(), prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": "Colour?"}})
	if res.IsError || !strings.Contains(got, "answer: teal") {
		t.Errorf("call: isError %v, %q", res.IsError, got)
	}
	msgs := a.messages()
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], `Allow mcp__alpha__ask with {"question":"Colour?"}?`) || msgs[1] != "[alpha] Colour?" {
		t.Errorf("questions %q, want the permission question, then the server's", msgs)
	}
	waitRelayIdle(t, f.g)
}

// Over stateless HTTP (the only HTTP the 2026-07-28 protocol has): one
// instance holds the call between the requests; the retry must come with
// the same credentials; another instance says it cannot answer.
func TestUpstreamQuestionStatelessHTTP(t *testing.T) {
	serve := func(f *fixture) string {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.g.Server() }, &mcp.StreamableHTTPOptions{Stateless: true})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	connect := func(url, token string, copts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: authTransport{token: token}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, copts).
			Connect(ctxFor(t, 30*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	one := startWith(t, fixtureOpts{prompter: gateway.Prompter{}}, nil, stdio("alpha", "elicit"))
	two := startWith(t, fixtureOpts{prompter: gateway.Prompter{}}, nil, stdio("alpha", "elicit"))
	url1, url2 := serve(one), serve(two)

	// The SDK's own round trip, across requests.
	a := &answering{answer: func(string) *mcp.ElicitResult { return accept("answer", "teal") }}
	cs := connect(url1, "alice", a.options())
	if got, _ := callText(t, cs, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": "Colour?"}}); !strings.Contains(got, "answer: teal") {
		t.Errorf("stateless round trip: %q", got)
	}
	if msgs := a.messages(); len(msgs) != 1 || msgs[0] != "[alpha] Colour?" {
		t.Errorf("questions %q", msgs)
	}

	// A raw client's question, retried by other credentials and at the
	// other instance, then by its owner.
	raw := connect(url1, "alice", rawClient())
	args := map[string]any{"question": "Colour?"}
	_, res := callText(t, raw, &mcp.CallToolParams{Name: "alpha__ask", Arguments: args})
	key, _ := question(t, res)
	retry := mcp.CallToolParams{
		Name: "alpha__ask", Arguments: args, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{key: accept("answer", "teal")},
	}
	for _, tc := range []struct {
		cs   *mcp.ClientSession
		want string
	}{
		{connect(url1, "mallory", rawClient()), "no question is waiting"},
		{connect(url2, "alice", rawClient()), "another gateway instance"},
	} {
		p := retry
		got, res := callText(t, tc.cs, &p)
		if !res.IsError {
			t.Errorf("foreign retry: %q", got)
		}
		wantContains(t, "foreign retry", got, tc.want)
	}
	p := retry
	if got, res := callText(t, raw, &p); res.IsError || !strings.Contains(got, "answer: teal") {
		t.Errorf("owner's retry: isError %v, %q", res.IsError, got)
	}
	waitRelayIdle(t, one.g)
	waitRelayIdle(t, two.g)
}

type authTransport struct{ token string }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.token)
	return http.DefaultTransport.RoundTrip(r)
}

// A 2026-07-28 client that declared no elicitation: the server's question
// is declined without reaching it, and nothing is held.
func TestUpstreamQuestionWithoutElicitation(t *testing.T) {
	f := startWith(t, fixtureOpts{prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
	if res.IsError || !strings.Contains(got, "answer: the user chose decline") {
		t.Errorf("call: isError %v, %q", res.IsError, got)
	}
	waitRelayIdle(t, f.g)
}

// Closing the gateway cancels the calls it holds.
func TestUpstreamQuestionGatewayClose(t *testing.T) {
	f := startWith(t, fixtureOpts{client: rawClient(), prompter: gateway.Prompter{}, pipe: true}, nil, stdio("alpha", "elicit"))
	_, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
	question(t, res)
	f.g.Close()
	waitRelayIdle(t, f.g)
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
	if !res.IsError {
		t.Errorf("a call after Close: %q", got)
	}
	wantContains(t, "a call after Close", got, "the gateway is closed")
}
