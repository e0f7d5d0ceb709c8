package host

import (
	"context"
	"sync"
)

// Attributing a server's question to the call it belongs to.
//
// On protocol 2026-07-28 a server asks during a call through the call's own
// result (multi-round-trip requests), and the SDK hands the Prompter the
// call's context. On earlier protocols it sends elicitation/create, which
// the SDK delivers with a context of the connection, not of any call: a
// Prompter that needs to know whose call it is (the gateway, which asks
// the client that made the call) could not tell. The host knows which
// calls it has in flight on the server: when there is exactly one, the
// question belongs to it, and the Prompter gets a context with that call's
// values (and its cancellation, as well as the request's own). With none
// or several, nobody can say whose question it is, and the Prompter gets
// the request's context as before: the gateway then declines, so that one
// client never sees a question meant for another.

// inflight is the set of calls a server has in flight.
type inflight struct {
	mu    sync.Mutex
	calls map[*context.Context]struct{}
}

// enter registers a call's context until leave is called with the
// returned key (a key, not a closure: an allocation fewer a call).
func (f *inflight) enter(ctx context.Context) (key *context.Context) {
	key = &ctx
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[*context.Context]struct{}{}
	}
	f.calls[key] = struct{}{}
	f.mu.Unlock()
	return key
}

// leave unregisters the call enter returned key for.
func (f *inflight) leave(key *context.Context) {
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
}

// running reports whether any call is in flight.
func (f *inflight) running() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls) > 0
}

// only returns the one call in flight, if there is exactly one.
func (f *inflight) only() (context.Context, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 1 {
		return nil, false
	}
	for k := range f.calls {
		return *k, true
	}
	return nil, false
}

type inCallKey struct{}

// markCall marks ctx as a call's context, so that a question the SDK
// delivers with it (2026-07-28) is not attributed a second time.
func markCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, inCallKey{}, true)
}

// questionContext is the context a server's question is put to the
// Prompter with: the call's, when the question came with a context of the
// connection and exactly one call is in flight. stop releases it.
func (s *server) questionContext(ctx context.Context) (qctx context.Context, stop func()) {
	if ctx.Value(inCallKey{}) != nil {
		return ctx, func() {}
	}
	call, ok := s.calls.only()
	if !ok {
		return ctx, func() {}
	}
	qctx, cancel := context.WithCancel(call)
	release := context.AfterFunc(ctx, cancel)
	return qctx, func() { release(); cancel() }
}

// untilHalted returns ctx, also done once s's run loop is halted (the
// server stops or restarts, or the Host closes): a Prompter waiting for
// a person until its ctx is done then stops waiting, and so does the
// SDK's handler of the question, which closing the connection waits for.
// stop releases it.
func (s *server) untilHalted(ctx context.Context) (qctx context.Context, stop func()) {
	s.mu.Lock()
	run := s.runCtx
	s.mu.Unlock()
	if run == nil {
		run = s.h.ctx
	}
	qctx, cancel := context.WithCancel(ctx)
	release := context.AfterFunc(run, cancel)
	return qctx, func() { release(); cancel() }
}
