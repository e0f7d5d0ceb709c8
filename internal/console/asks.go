package console

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// Answer is a person's answer to a question shown in the console: the
// terminal's words (once, session, always, deny).
type Answer string

const (
	AnswerDeny    Answer = "deny"
	AnswerOnce    Answer = "once"
	AnswerSession Answer = "session"
	AnswerAlways  Answer = "always"
)

// Question is one permission question waiting for a person.
type Question struct {
	ID      string
	Tool    string
	Server  string
	Reason  string
	Suggest string
	// Principal is whose call asks ("" when Asks.Who is nil or the call
	// has none): a gateway's member sees and answers its own questions.
	Principal string
	Asked     time.Time
	// Always says where an "always" answer writes the allow rule; "" when
	// "always" is not offered for this question (no allow rule would let
	// the call run without asking, or there is nowhere to write one).
	Always   string
	always   func() error // writes it; nil with AllowRule
	answered chan Answer
}

// ErrAnswered is the error of an answer to a question that is no longer
// waiting: answered already (in another browser), or its call gave up.
var ErrAnswered = errors.New("this question is no longer waiting: it was answered already or its call ended")

// Asks is the registry of the questions that wait for an answer in the
// console: the [host.Asker] of the run's permission rules
// (host.PermitOptions.Asker). A question is listed until a person answers
// it in a page or its call's context ends. A gateway mounting the console
// can list and answer the same registry (Pending, Answer), and send
// clients that support URL-mode elicitation to its /asks page.
type Asks struct {
	// AllowRule writes the allow rule (the decision's Suggest) of an
	// "always" answer. With neither it nor Always, "always" is not
	// offered.
	AllowRule func(rule string) (where string, err error)
	// Always, if set, is asked per question instead of AllowRule: where
	// its "always" answer writes which rule (gateway.Asker.AlwaysFor: a
	// team member's own entry of the auth file, or settings for every
	// caller), and the write; a nil write means "always" is not offered.
	Always func(ctx context.Context, req host.PermitRequest, d policy.Decision) (where string, write func() error)
	// Who, if set, names the principal of the call a question comes
	// from (a gateway's: gateway.CallPrincipal).
	Who func(ctx context.Context) string
	// ID, if set, gives a question the id its call was sent a link with
	// (gateway.QuestionID); "" or nil: a new random one.
	ID func(ctx context.Context) string

	mu      sync.Mutex
	pending []*Question
	count   int // questions asked, ever
	changed chan struct{}
}

// NewAsks returns an empty registry.
func NewAsks() *Asks { return &Asks{changed: make(chan struct{})} }

// AskPermission lists the question and waits for its answer or ctx.
func (a *Asks) AskPermission(ctx context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	q := &Question{ID: newID(), Tool: req.Tool, Server: req.Server, Reason: d.Reason, Suggest: d.Suggest,
		Asked: time.Now(), answered: make(chan Answer, 1)}
	if a.Who != nil {
		q.Principal = a.Who(ctx)
	}
	if a.ID != nil {
		if id := a.ID(ctx); id != "" {
			q.ID = id
		}
	}
	switch {
	case a.Always != nil:
		if where, write := a.Always(ctx, req, d); write != nil {
			q.Always, q.always = where, write
		}
	case a.AllowRule != nil && d.Suggest != "":
		q.Always = "the workspace's local settings"
	}
	a.mu.Lock()
	a.pending = append(a.pending, q)
	a.count++
	a.notify()
	a.mu.Unlock()
	defer a.remove(q)
	select {
	case ans := <-q.answered:
		switch ans {
		case AnswerOnce:
			return host.AnswerOnce, nil
		case AnswerSession, AnswerAlways:
			return host.AnswerAlways, nil
		}
		return host.AnswerDeny, nil
	case <-ctx.Done():
		return host.AnswerDeny, ctx.Err()
	}
}

func (a *Asks) remove(q *Question) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := slices.Index(a.pending, q); i >= 0 {
		a.pending = slices.Delete(a.pending, i, i+1)
		a.notify()
	}
}

// notify wakes Wait; a.mu is held.
func (a *Asks) notify() {
	close(a.changed)
	a.changed = make(chan struct{})
}

// Pending returns the questions waiting now, oldest first.
func (a *Asks) Pending() []Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Question, 0, len(a.pending))
	for _, q := range a.pending {
		out = append(out, *q)
	}
	return out
}

// Answer answers question id. An "always" answer writes the tool's allow
// rule first (AllowRule) and returns where; a question no longer waiting
// is ErrAnswered and changes nothing.
func (a *Asks) Answer(id string, ans Answer) (where string, err error) {
	switch ans {
	case AnswerDeny, AnswerOnce, AnswerSession, AnswerAlways:
	default:
		return "", errors.New("the answer must be once, session, always or deny")
	}
	a.mu.Lock()
	var q *Question
	for _, p := range a.pending {
		if p.ID == id {
			q = p
		}
	}
	if q != nil && ans == AnswerAlways && q.Always == "" {
		a.mu.Unlock()
		return "", errors.New("\"always\" is not offered for this question: no allow rule can be written for it here; answer once, session or deny")
	}
	if q != nil {
		// Taken off the list at once: a second answer (another browser)
		// finds nothing rather than answering twice.
		a.pending = slices.DeleteFunc(a.pending, func(p *Question) bool { return p == q })
		a.notify()
	}
	a.mu.Unlock()
	if q == nil {
		return "", ErrAnswered
	}
	if ans == AnswerAlways {
		if q.always != nil {
			where, err = q.Always, q.always()
		} else {
			where, err = a.AllowRule(q.Suggest)
		}
		if err != nil {
			q.answered <- AnswerDeny
			return "", err
		}
	}
	q.answered <- ans
	return where, nil
}

func newID() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

func newSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// asked counts the questions asked so far.
func (a *Asks) asked() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.count
}

// waitChange returns a channel closed at the next change of the pending
// questions.
func (a *Asks) waitChange() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed
}
