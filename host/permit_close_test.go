package host_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// A call waiting for a person's answer (a Permit that blocks until its
// ctx is done, as an Asker at a terminal or in a UI does) ends when the
// Host closes, with an error wrapping ErrClosed, and the question's ctx
// is done: an embedder's call made with context.Background neither hangs
// nor leaves its question open after Close.
func TestCloseEndsACallWaitingForPermission(t *testing.T) {
	asking := make(chan struct{})
	asked := make(chan error, 1)
	h := newHost(t, cfgOf(stdio("demo", "demo")), &host.Options{
		Permit: func(ctx context.Context, req host.PermitRequest) error {
			close(asking)
			<-ctx.Done() // the person never answers
			asked <- ctx.Err()
			return ctx.Err()
		},
	})
	if !h.WaitReady(ctxFor(t, 30*time.Second)) {
		t.Fatal("demo did not connect")
	}
	called := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), "mcp__demo__add", map[string]any{"a": 1, "b": 2})
		called <- err
	}()
	<-asking
	h.Close()
	guard := ctxFor(t, 30*time.Second) // a hang guard, not a timing assert
	select {
	case err := <-called:
		if !errors.Is(err, host.ErrClosed) {
			t.Errorf("the call ended with %v, want an error wrapping ErrClosed", err)
		}
	case <-guard.Done():
		t.Fatal("the call waiting for permission did not end after Close")
	}
	select {
	case <-asked:
	case <-guard.Done():
		t.Fatal("the question's ctx was not done after Close")
	}
}

// waitingPrompter is a person who never answers a server's question: its
// Elicit waits until ctx is done, and says so.
type waitingPrompter struct{ asking, ended chan error }

func (p waitingPrompter) Elicit(ctx context.Context, _ string, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	p.asking <- nil
	<-ctx.Done()
	p.ended <- ctx.Err()
	return nil, ctx.Err()
}

// Close while a server's question waits for the person (an embedder's
// Prompter whose Elicit waits for its UI until ctx is done, in a call made
// with context.Background) returns, the question's ctx is done, and the
// call ends: Close no longer waits forever for the SDK's handler of the
// question, which waited for the Prompter.
func TestCloseEndsAQuestionWaitingForThePerson(t *testing.T) {
	p := waitingPrompter{asking: make(chan error, 1), ended: make(chan error, 1)}
	h := newHost(t, cfgOf(stdio("echo", "echo")), &host.Options{Prompter: p})
	if !h.WaitReady(ctxFor(t, 30*time.Second)) {
		t.Fatal("echo did not connect")
	}
	called := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), "mcp__echo__ask", map[string]any{"question": "colour?"})
		called <- err
	}()
	<-p.asking
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	guard := ctxFor(t, 30*time.Second) // a hang guard, not a timing assert
	for _, w := range []struct {
		what string
		ch   chan error
	}{{"Close", closed}, {"the question's ctx", p.ended}, {"the call", called}} {
		select {
		case <-w.ch:
		case <-guard.Done():
			t.Fatalf("%s did not end after Close while a question waited for the person", w.what)
		}
	}
}
