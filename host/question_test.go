package host_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// refusalLog is a Prompter that records the questions it is asked and
// those the host declined without asking it; it declines every question.
type refusalLog struct {
	questionLog
	mu      sync.Mutex
	refused []string
	seen    chan struct{}
}

func newRefusalLog() *refusalLog { return &refusalLog{seen: make(chan struct{}, 64)} }

func (r *refusalLog) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	defer func() { r.seen <- struct{}{} }()
	return r.questionLog.Elicit(ctx, server, p)
}

func (r *refusalLog) QuestionRefused(_ context.Context, server, why string) {
	r.mu.Lock()
	r.refused = append(r.refused, server+": "+why)
	r.mu.Unlock()
	r.seen <- struct{}{}
}

func (r *refusalLog) counts() (asked, refused int, last string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.questionLog.mu.Lock()
	defer r.questionLog.mu.Unlock()
	if len(r.refused) > 0 {
		last = r.refused[len(r.refused)-1]
	}
	return len(r.questionLog.asked), len(r.refused), last
}

func field(title string, extra ...string) map[string]any {
	f := map[string]any{"type": "string", "title": title}
	for i := 0; i+1 < len(extra); i += 2 {
		f[extra[i]] = extra[i+1]
	}
	return f
}

func form(fields map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": fields}
}

// A server may not ask for a password, a token or payment details through
// a form (the MCP specification forbids it: that is phishing, and whoever
// answers hands the secret to the server), nor put thousands of fields or
// a plain-http or disguised address before a person. The host declines
// such a question before any Prompter — a terminal, a gateway's client —
// sees it, and tells a Prompter that wants to know. Before, every one was
// put to the person (a token field was merely not echoed).
func TestForbiddenQuestionsDeclined(t *testing.T) {
	q := newRefusalLog()
	h := newHost(t, cfgOf(stdio("asker", "elicit")), &host.Options{Prompter: q})
	many := map[string]any{}
	for i := range 500 {
		many[fmt.Sprintf("f%d", i)] = field("field")
	}
	for _, c := range []struct {
		name string
		args map[string]any
		why  string
	}{
		{"token title", map[string]any{"message": "to continue", "schema": form(map[string]any{"x": field("GitHub token (Switchboard)")})}, "token"},
		{"password name", map[string]any{"message": "log in", "schema": form(map[string]any{"userPassword": field("")})}, "password"},
		{"api key", map[string]any{"message": "set up", "schema": form(map[string]any{"API_KEY": field("")})}, "secret"},
		{"card", map[string]any{"message": "pay", "schema": form(map[string]any{"n": field("Card number")})}, "secret"},
		{"one-time code", map[string]any{"message": "x", "schema": form(map[string]any{"c": field("One-time code")})}, "secret"},
		{"thousands of fields", map[string]any{"message": "x", "schema": form(many)}, "500 fields"},
		{"huge default", map[string]any{"message": "x", "schema": form(map[string]any{"a": field("A", "default", strings.Repeat("x", 100<<10))})}, "larger than"},
		{"http url", map[string]any{"message": "sign in", "url": "http://login.example.com/x"}, "not https"},
		{"user in url", map[string]any{"message": "sign in", "url": "https://github.com@evil.example/login"}, "user name"},
		{"javascript url", map[string]any{"message": "x", "url": "javascript:alert(1)"}, "not an absolute URL"},
	} {
		_, refusedBefore, _ := q.counts()
		res := mustCall(t, h, "mcp__asker__ask_form", c.args)
		if got := textOf(res); !strings.Contains(got, "the user chose decline") {
			t.Errorf("%s: the server got %q, want a decline", c.name, got)
		}
		asked, refused, last := q.counts()
		if asked != 0 {
			t.Fatalf("%s: the question was put to the Prompter", c.name)
		}
		if refused != refusedBefore+1 || !strings.HasPrefix(last, "asker: ") || !strings.Contains(last, c.why) {
			t.Errorf("%s: the Prompter was told %d times, last %q; want a refusal naming %q", c.name, refused-refusedBefore, last, c.why)
		}
	}
	// What a server may ask still reaches the Prompter.
	for _, args := range []map[string]any{
		{"message": "which layout?", "schema": form(map[string]any{"keyboardLayout": field("Keyboard layout"), "author": field("Author")})},
		{"message": "which token kind?", "schema": form(map[string]any{"kind": map[string]any{"type": "string", "title": "Token kind", "enum": []any{"a", "b"}}})},
		{"message": "sign in there", "url": "https://login.example.com/x"},
		{"message": "local", "url": "http://127.0.0.1:8080/x"},
	} {
		mustCall(t, h, "mcp__asker__ask_form", args)
	}
	if asked, _, _ := q.counts(); asked != 4 {
		t.Errorf("the Prompter was asked %d of 4 allowed questions", asked)
	}
}

// A question a server asks while no call to it is running — nobody asked
// it anything — is declined without asking: on a terminal it would pop up
// between other output as if it belonged to what the person is doing.
func TestUnpromptedQuestionDeclined(t *testing.T) {
	q := newRefusalLog()
	newHost(t, cfgOf(stdio("asker", "elicit", "-protocol", "2025-11-25", "-unprompted", "Your password, please")), &host.Options{Prompter: q})
	select {
	case <-q.seen:
	case <-time.After(30 * time.Second):
		t.Fatal("the server's question reached neither the Prompter nor a refusal")
	}
	asked, refused, last := q.counts()
	if asked != 0 || refused != 1 || !strings.Contains(last, "no call") {
		t.Errorf("asked %d, refused %d (%q); want the question refused for no call running", asked, refused, last)
	}
}
