package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// answerer is an Asker with fixed answers that records its questions.
type answerer struct {
	mu     sync.Mutex
	answer host.Answer
	asked  []string
	last   policy.Decision
	// lastArgs are the arguments the person was shown.
	lastArgs map[string]any
}

func (a *answerer) AskPermission(_ context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req.Tool)
	a.last, a.lastArgs = d, req.Args
	return a.answer, nil
}

func effectRuns(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestPermitHook: the hook sees the resolved call (names, decoded
// arguments, the server's annotations) before anything reaches the server,
// and a refusal keeps the tool from running, by name and by CallTool.
func TestPermitHook(t *testing.T) {
	effect := filepath.Join(t.TempDir(), "effect")
	var (
		mu   sync.Mutex
		seen []host.PermitRequest
	)
	h := newHost(t, cfgOf(stdio("e", "echo", "-side-effect-file", effect)), &host.Options{
		Permit: func(_ context.Context, req host.PermitRequest) error {
			mu.Lock()
			seen = append(seen, req)
			mu.Unlock()
			if req.ToolName == "side_effect" {
				return &host.DeniedError{Tool: req.Tool, Decision: policy.Decision{Action: policy.Deny, Reason: "test says no"}}
			}
			return nil
		},
	})
	ctx := ctxFor(t, 20*time.Second)
	if _, err := h.Call(ctx, "mcp__e__side_effect", map[string]any{"note": "x"}); !errors.Is(err, host.ErrDenied) {
		t.Fatalf("Call = %v, want ErrDenied", err)
	}
	if _, err := h.CallTool(ctx, "e", "side_effect", nil); !errors.Is(err, host.ErrDenied) {
		t.Fatalf("CallTool = %v, want ErrDenied", err)
	}
	if n := effectRuns(t, effect); n != 0 {
		t.Fatalf("a refused side_effect ran %d times", n)
	}
	if got := textOf(mustCall(t, h, "mcp__e__echo", map[string]any{"text": "hi"})); got != "hi" {
		t.Errorf("permitted echo = %q", got)
	}
	if _, err := h.Call(ctx, "mcp__e__destructive", []byte(`{"target":"all"}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 4 {
		t.Fatalf("hook saw %d calls, want 4: %+v", len(seen), seen)
	}
	if r := seen[0]; r.Tool != "mcp__e__side_effect" || r.Server != "e" || r.ToolName != "side_effect" || r.Args["note"] != "x" {
		t.Errorf("first request = %+v", r)
	}
	if r := seen[3]; r.Annotations == nil || r.Annotations.DestructiveHint == nil || !*r.Annotations.DestructiveHint {
		t.Errorf("destructive tool's annotations = %+v", r.Annotations)
	}
}

func TestPolicyPermit(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		t.Run(map[bool]string{false: "decoded", true: "lazy"}[lazy], func(t *testing.T) { testPolicyPermit(t, lazy) })
	}
}

// testPolicyPermit: PolicyPermit's decisions, the host decoding every
// call's arguments or (lazy) leaving them to the Permit.
func testPolicyPermit(t *testing.T, lazy bool) {
	effect := filepath.Join(t.TempDir(), "effect")
	user := policy.Source{Scope: policy.ScopeUser, File: "settings.json"}
	pol := policy.New(
		policy.NewRule(policy.Allow, "mcp__e__echo", user),
		policy.NewRule(policy.Allow, "mcp__e__destructive", user),
		policy.NewRule(policy.Deny, `mcp__e__side_effect(note:"rm *")`, user),
	)
	cfg := cfgOf(stdio("e", "echo", "-side-effect-file", effect))

	t.Run("headless", func(t *testing.T) {
		h := newHost(t, cfg, &host.Options{Permit: host.PolicyPermit(pol, nil), LazyPermitArgs: lazy})
		ctx := ctxFor(t, 20*time.Second)
		if got := textOf(mustCall(t, h, "mcp__e__echo", map[string]any{"text": "ok"})); got != "ok" {
			t.Errorf("allowed echo = %q", got)
		}
		_, err := h.Call(ctx, "mcp__e__side_effect", map[string]any{"note": "hello"})
		var de *host.DeniedError
		if !errors.As(err, &de) || !errors.Is(err, host.ErrDenied) {
			t.Fatalf("unlisted call = %v, want a DeniedError", err)
		}
		if want := `add "mcp__e__side_effect" to permissions.allow in ~/.switchboard/settings.json`; !strings.Contains(de.Hint, want) {
			t.Errorf("hint %q lacks %q", de.Hint, want)
		}
		if !strings.Contains(err.Error(), "nobody can answer") {
			t.Errorf("error %q", err)
		}
		_, err = h.Call(ctx, "mcp__e__side_effect", map[string]any{"note": "rm *"})
		if !errors.As(err, &de) || de.Decision.Action != policy.Deny || !strings.Contains(de.Hint, "permissions.deny") {
			t.Fatalf("denied call = %v (%+v)", err, de)
		}
		// A rule naming the destructive tool exactly allows it (docs/security.md,
		// Annotations).
		mustCall(t, h, "mcp__e__destructive", map[string]any{"target": "x"})
		// A grant of the whole server does not: destructiveHint turns it
		// into a question, whose hint names the exact rule.
		broad := newHost(t, cfg, &host.Options{Permit: host.PolicyPermit(policy.New(policy.NewRule(policy.Allow, "mcp__e", user)), nil), LazyPermitArgs: lazy})
		if _, err = broad.Call(ctx, "mcp__e__destructive", nil); !errors.As(err, &de) || de.Decision.TightenedBy != policy.TightenedByDestructive ||
			!strings.Contains(de.Hint, `add "mcp__e__destructive" to permissions.allow`) {
			t.Fatalf("destructive call under mcp__e = %v (%+v), want a DeniedError tightened by destructiveHint", err, de)
		}
		// readOnlyHint grants nothing.
		if _, err = h.Call(ctx, "mcp__e__env", map[string]any{"names": []string{"HOME"}}); !errors.Is(err, host.ErrDenied) {
			t.Fatalf("read-only call = %v, want ErrDenied", err)
		}
		if n := effectRuns(t, effect); n != 0 {
			t.Fatalf("side_effect ran %d times", n)
		}
	})

	t.Run("asked", func(t *testing.T) {
		a := &answerer{answer: host.AnswerOnce}
		h := newHost(t, cfg, &host.Options{Permit: host.PolicyPermit(pol, &host.PermitOptions{Asker: a, Autopilot: true}), LazyPermitArgs: lazy})
		ctx := ctxFor(t, 20*time.Second)
		mustCall(t, h, "mcp__e__side_effect", map[string]any{"note": "1"})
		if n := effectRuns(t, effect); n != 1 {
			t.Fatalf("side_effect answered once ran %d times", n)
		}
		if a.lastArgs["note"] != "1" {
			t.Errorf("the person asked was shown %v, want note 1", a.lastArgs)
		}
		if !strings.Contains(a.last.Reason, "autopilot") {
			t.Errorf("autopilot reason = %q", a.last.Reason)
		}
		a.answer = host.AnswerDeny
		_, err := h.Call(ctx, "mcp__e__side_effect", map[string]any{"note": "2"})
		var de *host.DeniedError
		if !errors.As(err, &de) || !de.Asked {
			t.Fatalf("refused call = %v", err)
		}
		a.answer = host.AnswerAlways
		mustCall(t, h, "mcp__e__side_effect", map[string]any{"note": "3"})
		a.answer = host.AnswerDeny
		mustCall(t, h, "mcp__e__side_effect", map[string]any{"note": "4"}) // remembered: not asked
		if _, err := h.Call(ctx, "mcp__e__side_effect", map[string]any{"note": "rm *"}); !errors.Is(err, host.ErrDenied) {
			t.Errorf("always does not lift a deny rule: %v", err)
		}
		if got := strings.Join(a.asked, ","); got != "mcp__e__side_effect,mcp__e__side_effect,mcp__e__side_effect" {
			t.Errorf("asked %s", got)
		}
		if n := effectRuns(t, effect); n != 3 {
			t.Errorf("side_effect ran %d times, want 3", n)
		}
	})
}

// TestPolicyPermitRules: the rules PermitOptions.Rules picks per call
// (a gateway's principal's, on top of the global ones) decide it, every
// decision is told to Decided, and an "always" is remembered per
// principal: alice's does not let bob's same call run unasked.
func TestPolicyPermitRules(t *testing.T) {
	user := policy.Source{Scope: policy.ScopeUser, File: "settings.json"}
	global := policy.New(policy.NewRule(policy.Allow, "mcp__e__echo", user))
	scoped := map[string]*policy.Policy{
		"bob": global.With(policy.NewRule(policy.Deny, "mcp__e__echo", policy.Source{Scope: policy.ScopeUser, File: "gateway-auth.json"})),
	}
	type whoKey struct{}
	var decided []policy.Action
	a := &answerer{answer: host.AnswerAlways}
	permit := host.PolicyPermit(global, &host.PermitOptions{
		Asker: a,
		Rules: func(ctx context.Context) (*policy.Policy, string) {
			who, _ := ctx.Value(whoKey{}).(string)
			if p := scoped[who]; p != nil {
				return p, who
			}
			return global, who
		},
		Decided: func(_ context.Context, d policy.Decision) { decided = append(decided, d.Action) },
	})
	as := func(who string) context.Context { return context.WithValue(context.Background(), whoKey{}, who) }
	echo := host.PermitRequest{Tool: "mcp__e__echo", Server: "e", ToolName: "echo"}
	add := host.PermitRequest{Tool: "mcp__e__add", Server: "e", ToolName: "add"}

	if err := permit(as("alice"), echo); err != nil {
		t.Errorf("alice's echo (allowed globally) = %v", err)
	}
	var de *host.DeniedError
	if err := permit(as("bob"), echo); !errors.As(err, &de) || de.Decision.Action != policy.Deny {
		t.Errorf("bob's echo (denied by his own rule) = %v, want a DeniedError", err)
	}
	if err := permit(as("alice"), add); err != nil || len(a.asked) != 1 {
		t.Fatalf("alice's add answered always = %v, asked %d times", err, len(a.asked))
	}
	a.answer = host.AnswerDeny
	if err := permit(as("alice"), add); err != nil || len(a.asked) != 1 {
		t.Errorf("alice's add again = %v, asked %d times; want it run unasked", err, len(a.asked))
	}
	if err := permit(as("bob"), add); !errors.As(err, &de) || !de.Asked || len(a.asked) != 2 {
		t.Errorf("bob's add after alice's always = %v, asked %d times; want him asked and refused", err, len(a.asked))
	}
	want := []policy.Action{policy.Allow, policy.Deny, policy.Ask, policy.Ask, policy.Ask}
	if fmt.Sprint(decided) != fmt.Sprint(want) {
		t.Errorf("Decided saw %v, want %v", decided, want)
	}
}

// TestPermitSeesWhatIsSent: the arguments the hook decides on are the
// arguments the server gets, even when the JSON names a key twice.
func TestPermitSeesWhatIsSent(t *testing.T) {
	var saw any
	h := newHost(t, cfgOf(stdio("e", "echo")), &host.Options{
		Permit: func(_ context.Context, req host.PermitRequest) error { saw = req.Args["text"]; return nil },
	})
	res := mustCall(t, h, "mcp__e__echo", json.RawMessage(`{"text":"first","text":"second"}`))
	if got := textOf(res); got != saw || got == "" {
		t.Errorf("the hook saw %v, the server got %q", saw, got)
	}
	// JSON text as []byte is the same JSON (not a base64 string, as
	// encoding/json would write it), by either entry.
	saw = nil
	if got := textOf(mustCall(t, h, "mcp__e__echo", []byte(`{"text":"bytes"}`))); got != "bytes" || saw != "bytes" {
		t.Errorf("Call with []byte: the hook saw %v, the server got %q", saw, got)
	}
	saw = nil
	res, err := h.CallTool(ctxFor(t, 20*time.Second), "e", "echo", []byte(`{"text":"bytes too"}`))
	if err != nil || res.IsError || textOf(res) != "bytes too" || saw != "bytes too" {
		t.Errorf("CallTool with []byte: the hook saw %v, the server got %+v (%v)", saw, res, err)
	}
	// So is a string: the model's JSON as some providers hand it over.
	saw = nil
	if got := textOf(mustCall(t, h, "mcp__e__echo", `{"text":"a string"}`)); got != "a string" || saw != "a string" {
		t.Errorf("Call with a string: the hook saw %v, the server got %q", saw, got)
	}
	// Empty JSON text is no arguments: the call runs, the hook sees none.
	saw = "unset"
	res, err = h.CallTool(ctxFor(t, 20*time.Second), "e", "cwd", json.RawMessage(nil))
	if err != nil || res.IsError || saw != nil {
		t.Errorf("CallTool with a nil json.RawMessage: the hook saw %v, the server answered %+v (%v)", saw, res, err)
	}
}

// TestLazyPermitArgsDecidedByRule: with the host leaving the arguments to
// PolicyPermit (as the front door does), a call that a rule with argument
// conditions could match is still decided on its arguments — the ones
// the server then gets, even with a key given twice — while a call no such
// rule could match runs with its arguments sent as given.
func TestLazyPermitArgsDecidedByRule(t *testing.T) {
	user := policy.Source{Scope: policy.ScopeUser, File: "settings.json"}
	pol := policy.New(
		policy.NewRule(policy.Allow, "mcp__e", user),
		policy.NewRule(policy.Deny, `mcp__e__echo(text:"secret*")`, user),
	)
	h := newHost(t, cfgOf(stdio("e", "echo")), &host.Options{Permit: host.PolicyPermit(pol, nil), LazyPermitArgs: true})
	ctx := ctxFor(t, 20*time.Second)
	if got := textOf(mustCall(t, h, "mcp__e__echo", map[string]any{"text": "hello"})); got != "hello" {
		t.Errorf("allowed echo = %q", got)
	}
	for _, args := range []any{
		map[string]any{"text": "secret plan"},
		json.RawMessage(`{"text":"secret plan"}`),
		[]byte(`{"text":"secret plan"}`),
		json.RawMessage(`{"text":"fine","text":"secret plan"}`), // the last is what a server reads
	} {
		_, err := h.Call(ctx, "mcp__e__echo", args)
		var de *host.DeniedError
		if !errors.As(err, &de) || de.Decision.Action != policy.Deny || de.Decision.Rule == nil || !de.Decision.Rule.Pattern().HasArgs() {
			t.Errorf("echo %s = %v, want denied by the argument rule", args, err)
		}
	}
	// Decided on the last "text", and sent as decided.
	if got := textOf(mustCall(t, h, "mcp__e__echo", json.RawMessage(`{"text":"secret plan","text":"fine"}`))); got != "fine" {
		t.Errorf("echo with text given twice = %q, want the value decided on", got)
	}
	// No rule with arguments could match env: it runs, its arguments as given.
	if res := mustCall(t, h, "mcp__e__env", json.RawMessage(`{"names":["HOME"]}`)); res.IsError {
		t.Errorf("env = %+v", res)
	}
}

// BenchmarkCallPermitArgs is one host.Call under PolicyPermit with rules
// that have no argument conditions, the arguments handed in as the gateway
// relays them (json.RawMessage): decoded by the host for the check, or
// left as they are (Options.LazyPermitArgs).
func BenchmarkCallPermitArgs(b *testing.B) {
	raw := json.RawMessage(`{"text":"hello switchboard"}`)
	for _, lazy := range []bool{false, true} {
		b.Run(map[bool]string{false: "decoded", true: "lazy"}[lazy], func(b *testing.B) {
			h := newHostB(b, &host.Options{
				LookupEnv:  func(string) (string, bool) { return "", false },
				CloseGrace: 500 * time.Millisecond,
				Permit: host.PolicyPermit(policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser},
					[]string{"mcp__echo"}, nil, []string{"mcp__echo__destructive"})...), nil),
				LazyPermitArgs: lazy,
			})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := h.Call(ctx, "mcp__echo__echo", raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func newHostB(b *testing.B, opts *host.Options) *host.Host {
	h := host.New(cfgOf(stdio("echo", "echo")), opts)
	b.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.Call(ctx, "mcp__echo__echo", json.RawMessage(`{"text":"warm"}`)); err != nil {
		b.Fatalf("warm-up call: %v", err)
	}
	return h
}
