package gateway_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// rules: echo allowed, add denied, everything else asked.
func testPermit() host.Permit {
	p := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser},
		[]string{"mcp__alpha__echo"}, nil, []string{"mcp__alpha__add"})...)
	return host.PolicyPermit(p, &host.PermitOptions{Asker: &gateway.Asker{}})
}

// The question rides the call's input requests for a 2026-07-28 client,
// and is sent as elicitation/create (by the SDK) to an older one.
func TestAskBecomesElicitation(t *testing.T) {
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) { askBecomesElicitation(t, protocol) })
	}
}

func askBecomesElicitation(t *testing.T, protocol string) {
	var (
		mu       sync.Mutex
		asked    []string
		decision = gateway.DecisionOnce
	)
	client := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req.Params.Message)
			if decision == "" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
		},
	}
	f := startWith(t, fixtureOpts{permit: testPermit(), client: client, protocol: protocol}, nil, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	lastAsk := func() (string, int) {
		mu.Lock()
		defer mu.Unlock()
		if len(asked) == 0 {
			return "", 0
		}
		return asked[len(asked)-1], len(asked)
	}

	// Allowed: runs without a question.
	if res := call("alpha__echo", map[string]any{"text": "ok"}); res.IsError {
		t.Errorf("allowed call failed: %s", textOf(t, res))
	}
	if _, n := lastAsk(); n != 0 {
		t.Errorf("an allowed call asked %d questions", n)
	}
	// Denied: refused without a question, naming the rule.
	res := call("alpha__add", map[string]any{"a": 1, "b": 2})
	if !res.IsError || !strings.Contains(textOf(t, res), "mcp__alpha__add") || !strings.Contains(textOf(t, res), "deny") {
		t.Errorf("denied call: isError %v, %q", res.IsError, textOf(t, res))
	}
	if _, n := lastAsk(); n != 0 {
		t.Errorf("a denied call asked %d questions", n)
	}
	// Unlisted: asked, with secrets redacted; "once" lets it run.
	res = call("alpha__env", map[string]any{"names": []any{"HOME"}})
	msg, n := lastAsk()
	if n != 1 || !strings.Contains(msg, `Allow mcp__alpha__env with {"names":["HOME"]}?`) {
		t.Errorf("question %d: %q", n, msg)
	}
	if res.IsError {
		t.Errorf("call allowed once failed: %s", textOf(t, res))
	}
	// Once is once: the next call is asked again, and deny refuses it.
	mu.Lock()
	decision = gateway.DecisionDeny
	mu.Unlock()
	res = call("alpha__env", map[string]any{"names": []any{"HOME"}})
	if _, n := lastAsk(); n != 2 {
		t.Errorf("second call asked %d questions in all, want 2", n)
	}
	if !res.IsError || !strings.Contains(textOf(t, res), "refused when asked") {
		t.Errorf("call denied when asked: isError %v, %q", res.IsError, textOf(t, res))
	}
	// A declined question is a deny too.
	mu.Lock()
	decision = ""
	mu.Unlock()
	if res := call("alpha__pid", nil); !res.IsError {
		t.Errorf("declined question let the call run: %q", textOf(t, res))
	}
	// "session" lets the tool run from then on without asking.
	mu.Lock()
	decision = gateway.DecisionSession
	mu.Unlock()
	call("alpha__cwd", nil)
	_, before := lastAsk()
	if res := call("alpha__cwd", nil); res.IsError {
		t.Errorf("call allowed for the session failed: %s", textOf(t, res))
	}
	if _, after := lastAsk(); after != before {
		t.Errorf("a tool allowed for the session was asked again")
	}
}

// A call that is asked about and then allowed is not logged as refused:
// the first round, which sends the question, logs that it asks, and only
// a call refused when asked is logged "call refused".
func TestAskedAndAllowedIsNotLoggedRefused(t *testing.T) {
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			var (
				mu       sync.Mutex
				decision = gateway.DecisionOnce
				logMu    sync.Mutex
				logText  strings.Builder
			)
			logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logText}, nil))
			client := &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
				},
			}
			f := startWith(t, fixtureOpts{permit: testPermit(), client: client, protocol: protocol, logger: logger}, nil, stdio("alpha", "echo"))
			ctx := ctxFor(t, 30*time.Second)
			logged := func() string {
				logMu.Lock()
				defer logMu.Unlock()
				return logText.String()
			}
			res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__env", Arguments: map[string]any{"names": []any{"HOME"}}})
			if err != nil || res.IsError {
				t.Fatalf("call allowed once: %v %+v", err, res)
			}
			if l := logged(); strings.Contains(l, "call refused") || !strings.Contains(l, `msg="asking permission" server=alpha tool=env`) {
				t.Errorf("log of a call asked about and allowed:\n%s", l)
			}
			mu.Lock()
			decision = gateway.DecisionDeny
			mu.Unlock()
			res, err = f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__env", Arguments: map[string]any{"names": []any{"HOME"}}})
			if err != nil || !res.IsError {
				t.Fatalf("call refused when asked: %v %+v", err, res)
			}
			if l := logged(); strings.Count(l, `msg="call refused" server=alpha tool=env`) != 1 {
				t.Errorf("log of a call refused when asked:\n%s", l)
			}
		})
	}
}

func TestAskWithoutElicitationIsDenyWithHint(t *testing.T) {
	f := startWith(t, fixtureOpts{permit: testPermit()}, nil, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__pid", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	got := textOf(t, res)
	if !res.IsError || !strings.Contains(got, "nobody can answer") || !strings.Contains(got, `"mcp__alpha__pid"`) {
		t.Errorf("ask without elicitation: isError %v, %q", res.IsError, got)
	}
}

func TestPermissionQuestionRedactsSecrets(t *testing.T) {
	q := gateway.PermissionQuestion(host.PermitRequest{
		Tool: "mcp__gh__create", Args: map[string]any{"repo": "o/r", "api_token": "s3cr3t-value", "nested": map[string]any{"password": "hunter22"}},
	}, policy.Decision{Action: policy.Ask, Reason: "no permission rule allows mcp__gh__create"})
	for _, secret := range []string{"s3cr3t-value", "hunter22"} {
		if strings.Contains(q.Message, secret) {
			t.Errorf("question shows %q: %s", secret, q.Message)
		}
	}
	if !strings.Contains(q.Message, `"repo":"o/r"`) || !strings.Contains(q.Message, "no permission rule allows") {
		t.Errorf("question lacks the arguments or the reason: %s", q.Message)
	}
}

// An upstream server's elicitation during a call reaches the calling
// client (here on protocol 2025-11-25, which takes elicitation/create).
func TestUpstreamElicitationReachesCaller(t *testing.T) {
	a := &answering{answer: func(string) *mcp.ElicitResult { return accept("answer", "teal") }}
	f := startWith(t, fixtureOpts{client: a.options(), prompter: gateway.Prompter{}, protocol: "2025-11-25"}, nil, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": "Colour?"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); res.IsError || !strings.Contains(got, "answer: teal") {
		t.Errorf("ask through the gateway: isError %v, %q", res.IsError, got)
	}
	// The question names the server that asks, as on the relayed path.
	if asked := a.messages(); len(asked) != 1 || asked[0] != "[alpha] Colour?" {
		t.Errorf("client was asked %q", asked)
	}
}

// A client without elicitation support: the upstream question is declined.
func TestUpstreamElicitationDeclinedWithoutSupport(t *testing.T) {
	f := startWith(t, fixtureOpts{prompter: gateway.Prompter{}}, nil, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); !strings.Contains(got, "the user chose decline") {
		t.Errorf("ask without elicitation: %q", got)
	}
}

// fakeRules records the rules an "always" answer writes.
type fakeRules struct {
	mu      sync.Mutex
	written []string
}

func (r *fakeRules) Where() string { return "user settings ~/.switchboard/settings.json" }

func (r *fakeRules) WriteAllow(rule string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written = append(r.written, rule)
	return r.Where(), nil
}

// TestAskAlwaysWritesTheRule: with Asker.Rules, the question offers
// "always" and says where it writes; the answer writes the tool's exact
// allow rule and lets the tool run for the session. Where an ask rule
// decided, no allow rule helps: "always" is not offered, nor honoured.
func TestAskAlwaysWritesTheRule(t *testing.T) {
	rules := &fakeRules{}
	var (
		mu    sync.Mutex
		asked []*mcp.ElicitParams
	)
	client := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req.Params)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": gateway.DecisionAlways}}, nil
		},
	}
	p := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, nil, []string{"mcp__alpha__cwd"}, nil)...)
	permit := host.PolicyPermit(p, &host.PermitOptions{Asker: &gateway.Asker{Rules: rules}})
	f := startWith(t, fixtureOpts{permit: permit, client: client, protocol: "2025-11-25"}, nil, stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	for i := 0; i < 2; i++ {
		res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__pid", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call %d answered always: %v %v", i, err, res)
		}
	}
	mu.Lock()
	n := len(asked)
	q := asked[0]
	mu.Unlock()
	if n != 1 {
		t.Errorf("asked %d times, want once", n)
	}
	if !strings.Contains(q.Message, `always: write the allow rule "mcp__alpha__pid" to user settings ~/.switchboard/settings.json`) {
		t.Errorf("question %q does not say what always writes where", q.Message)
	}
	rules.mu.Lock()
	written := strings.Join(rules.written, ",")
	rules.mu.Unlock()
	if written != "mcp__alpha__pid" {
		t.Errorf("written %q", written)
	}
	// An ask rule decided: always is neither offered nor honoured (the
	// answer does not even fit the question's schema).
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__cwd", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Errorf("always under an ask rule ran the call: %v", res)
	}
	mu.Lock()
	last := asked[len(asked)-1]
	mu.Unlock()
	if strings.Contains(last.Message, "always:") {
		t.Errorf("always offered under an ask rule: %q", last.Message)
	}
	rules.mu.Lock()
	defer rules.mu.Unlock()
	if len(rules.written) != 1 {
		t.Errorf("written %v", rules.written)
	}
}
