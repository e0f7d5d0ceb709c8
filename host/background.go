package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrCancelled is the error of a background call ended by
// BackgroundCall.Cancel or by the Host's Close; the error of one Close
// ended wraps ErrClosed too.
var ErrCancelled = errors.New("call cancelled")

// CallState is where a background call is.
type CallState string

const (
	// CallRunning: no result yet.
	CallRunning CallState = "running"
	// CallDone: the call returned a result (which may be the tool's own
	// error, IsError).
	CallDone CallState = "done"
	// CallFailed: the call could not be made or finished (an error: a
	// timeout, a dropped connection…).
	CallFailed CallState = "failed"
	// CallCancelled: Cancel (or Close) ended it.
	CallCancelled CallState = "cancelled"
)

// CallStatus is a background call at one moment.
type CallStatus struct {
	// ID names the call within its Host: "1", "2", …
	ID string `json:"id"`
	// Tool is the tool's namespaced name, as the call was started.
	Tool    string    `json:"tool"`
	State   CallState `json:"state"`
	Started time.Time `json:"started"`
	// Ended is zero while the call runs.
	Ended time.Time `json:"ended,omitzero"`
	// Progress is the last progress message the server sent (a task's
	// status message: "Generating report..."); "" if none.
	Progress string `json:"progress,omitempty"`
	// IsError is the result's isError (State done).
	IsError bool `json:"isError,omitempty"`
	// Error is why the call failed (State failed or cancelled).
	Error string `json:"error,omitempty"`
}

// BackgroundCall is a tool call started with [Host.Start]: it runs on
// while its caller does other work — an agent starts a long call (a tool
// that runs as a task, say), goes back to its model, and collects the
// result later. Its methods are safe for concurrent use.
type BackgroundCall struct {
	h        *Host
	id, tool string
	started  time.Time
	cancel   context.CancelFunc
	done     chan struct{}

	mu        sync.Mutex
	progress  string
	ended     time.Time
	res       *mcp.CallToolResult
	err       error
	cancelled bool
	// byCaller: Cancel or Forget ended it, not Close.
	byCaller bool
}

// backgroundCalls are a Host's background calls, by id.
type backgroundCalls struct {
	mu   sync.Mutex
	next int
	all  map[string]*BackgroundCall
}

// Start begins a call as [Host.Call] does and returns as soon as it is
// decided: routing and the permission check (a question included) happen
// before Start returns, and an error from them is Start's. The call then
// runs in the background, with the values of ctx (a progress function, a
// deadline from WithCallDeadline) but not its cancellation, under the
// server's timeout, until it ends, [BackgroundCall.Cancel] or Close.
//
// The Host keeps the call, for [Host.BackgroundCalls] and
// [Host.BackgroundCall], until [BackgroundCall.Forget]; a call's server
// runs only as long as the Host, so a call does not outlive it.
func (h *Host) Start(ctx context.Context, name string, args any) (*BackgroundCall, error) {
	run, err := h.prepareCall(ctx, name, args)
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(h.ctx, cancel) // Close ends it
	b := &BackgroundCall{h: h, tool: name, started: h.clock.Now(), cancel: cancel, done: make(chan struct{})}
	// Progress goes to the caller's function, if any, and is kept.
	prev, _ := ctx.Value(progressKey{}).(ProgressFunc)
	bctx = WithProgress(bctx, func(p *mcp.ProgressNotificationParams) {
		b.mu.Lock()
		if p.Message != "" {
			b.progress = p.Message
		}
		b.mu.Unlock()
		if prev != nil {
			prev(p)
		}
	})
	h.bg.mu.Lock()
	if h.bg.all == nil {
		h.bg.all = map[string]*BackgroundCall{}
	}
	h.bg.next++
	b.id = strconv.Itoa(h.bg.next)
	h.bg.all[b.id] = b
	h.bg.mu.Unlock()
	go func() {
		defer stop()
		defer cancel()
		res, err := run(bctx)
		b.mu.Lock()
		b.res, b.err, b.ended = res, err, h.clock.Now()
		// Close cancels bctx from a goroutine of its own: the call may
		// see the Host closed first.
		if err != nil && (bctx.Err() != nil || errors.Is(err, ErrClosed)) && !IsTimeout(bctx, err) {
			b.cancelled, b.err = true, ErrCancelled
			if !b.byCaller && h.Closed() {
				// Close ended it: its waiter learns why, as a call's does.
				b.err = fmt.Errorf("%w: %w", ErrCancelled, ErrClosed)
			}
		}
		b.mu.Unlock()
		close(b.done)
	}()
	return b, nil
}

// BackgroundCalls returns the calls started with Start and not forgotten,
// oldest first.
func (h *Host) BackgroundCalls() []*BackgroundCall {
	h.bg.mu.Lock()
	out := make([]*BackgroundCall, 0, len(h.bg.all))
	for _, b := range h.bg.all {
		out = append(out, b)
	}
	h.bg.mu.Unlock()
	slices.SortFunc(out, func(a, b *BackgroundCall) int {
		x, _ := strconv.Atoi(a.id)
		y, _ := strconv.Atoi(b.id)
		return x - y
	})
	return out
}

// BackgroundCall returns the background call id, or nil if there is none
// (never started, or forgotten).
func (h *Host) BackgroundCall(id string) *BackgroundCall {
	h.bg.mu.Lock()
	defer h.bg.mu.Unlock()
	return h.bg.all[id]
}

// ID names the call within its Host.
func (b *BackgroundCall) ID() string { return b.id }

// Status says where the call is.
func (b *BackgroundCall) Status() CallStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := CallStatus{ID: b.id, Tool: b.tool, State: CallRunning, Started: b.started, Ended: b.ended, Progress: b.progress}
	select {
	case <-b.done:
	default:
		return st
	}
	switch {
	case b.cancelled:
		st.State, st.Error = CallCancelled, b.err.Error()
	case b.err != nil:
		st.State, st.Error = CallFailed, b.err.Error()
	default:
		st.State, st.IsError = CallDone, b.res.IsError
	}
	return st
}

// Done is closed when the call has ended.
func (b *BackgroundCall) Done() <-chan struct{} { return b.done }

// Wait waits for the call to end, or for ctx, and returns what Call would
// have: the result, or the error (ErrCancelled for a cancelled call,
// wrapping ErrClosed too when Close ended it, as Call's would). The
// call goes on when ctx ends first.
func (b *BackgroundCall) Wait(ctx context.Context) (*mcp.CallToolResult, error) {
	select {
	case <-b.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.res, b.err
}

// Cancel ends the call: its request is cancelled at the server (a task
// with tasks/cancel). It returns at once; Done says when the call has
// ended. Idempotent; nothing happens to a call that has ended.
func (b *BackgroundCall) Cancel() {
	b.mu.Lock()
	b.byCaller = true
	b.mu.Unlock()
	b.cancel()
}

// Forget cancels the call if it runs and drops it from its Host's list.
func (b *BackgroundCall) Forget() {
	b.Cancel()
	bg := &b.h.bg
	bg.mu.Lock()
	if bg.all[b.id] == b {
		delete(bg.all, b.id)
	}
	bg.mu.Unlock()
}
