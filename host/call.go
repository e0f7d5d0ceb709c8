package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/tasks"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// ErrTimeout is wrapped by a call that got no result within its timeout.
var ErrTimeout = errors.New("call timed out")

// errDeadline is the cause of a context from WithCallDeadline that ran out.
var errDeadline = fmt.Errorf("%w: the call's deadline passed", ErrTimeout)

type callDeadlineKey struct{}

// WithCallDeadline gives a call made under ctx (Call, CallTool) the
// deadline d when that comes before the call's own timeout would end: a
// caller that starts the clock before the call reaches its server (the
// gateway, before a permission question) makes that time count against
// the timeout, and a retry after a reconnect keeps it. The returned
// context ends at d with a cause that wraps ErrTimeout (see IsTimeout),
// so whatever waits under it ends then too. The deadline survives
// context.WithoutCancel. Call the CancelFunc when the call is over.
func WithCallDeadline(ctx context.Context, d time.Time) (context.Context, context.CancelFunc) {
	if prev, ok := ctx.Value(callDeadlineKey{}).(time.Time); ok && prev.Before(d) {
		d = prev
	}
	ctx = context.WithValue(ctx, callDeadlineKey{}, d)
	return context.WithDeadlineCause(ctx, d, errDeadline)
}

// CallTimeout is the timeout of a call to the server of this name: its
// `timeout`, else Options.CallTimeout (also for a name it does not know).
func (h *Host) CallTimeout(server string) time.Duration {
	if s, err := h.server(server); err == nil {
		return s.callTimeout()
	}
	return h.opts.CallTimeout
}

// IsTimeout reports whether err, or the cause of ctx's end, is a call's
// timeout (ErrTimeout).
func IsTimeout(ctx context.Context, err error) bool {
	return errors.Is(err, ErrTimeout) || (ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrTimeout))
}

// Call runs a tool by its namespaced name (mcp__server__tool) with JSON
// arguments (a map, a struct, or JSON text as json.RawMessage, []byte or
// string), which must be a JSON object (or null, or nothing: no
// arguments); other JSON values are an error. A tool's own failure is a
// result with IsError set, not an error; errors mean the call could not
// be made or finished: unknown tool, server not connected
// (ErrNotConnected), circuit open (ErrCircuitOpen), timeout (ErrTimeout),
// a dropped connection that may have run a side effect (ErrMayHaveRun),
// refused by Options.Permit (ErrDenied), or a tool tool pinning holds
// (ErrToolHeld); after Close, ErrClosed.
//
// What comes back is what the model may read (docs/security.md, What the
// model reads): deceptive characters removed or made visible, the secret
// values the Host gave any server replaced, and the server's "secrets"
// mode and the call hooks applied; a call or result they refuse is an
// IsError result saying why (see Blocked).
//
// A connecting server is waited for (bounded by ctx). A call cut by a
// dropped connection is retried once, after the reconnect, only when the
// request never reached the server or the tool declares idempotentHint.
func (h *Host) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	// decideCall and the call itself, without prepareCall's closure: two
	// allocations a call.
	if name == ToolSearchName {
		if err := h.open(); err != nil {
			return nil, err
		}
		return h.callToolSearch(ctx, args)
	}
	s, tool, args, err := h.decideCall(ctx, name, args)
	if err != nil {
		return nil, err
	}
	return h.guardedCall(ctx, s, tool, args)
}

// prepareCall decides a call (routing, permission) and returns what makes
// it: Start runs it in the background.
func (h *Host) prepareCall(ctx context.Context, name string, args any) (func(context.Context) (*mcp.CallToolResult, error), error) {
	if name == ToolSearchName {
		if err := h.open(); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*mcp.CallToolResult, error) { return h.callToolSearch(ctx, args) }, nil
	}
	s, tool, args, err := h.decideCall(ctx, name, args)
	if err != nil {
		return nil, err
	}
	// guard.go: secrets, hooks, what the model reads — when the call runs.
	return func(ctx context.Context) (*mcp.CallToolResult, error) { return h.guardedCall(ctx, s, tool, args) }, nil
}

// open is ErrClosed after Close.
func (h *Host) open() error {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return nil
}

// decideCall decides a call of a server's tool (routing, held tools,
// permission) and returns its server, tool and the arguments to send.
func (h *Host) decideCall(ctx context.Context, name string, args any) (*server, string, any, error) {
	if err := h.open(); err != nil {
		return nil, "", nil, err
	}
	s, tool, err := h.resolveTool(ctx, name)
	if err != nil {
		return nil, "", nil, err
	}
	served, err := h.checkHeld(ctx, s, tool)
	if err != nil {
		return nil, "", nil, err
	}
	if args, err = jsonTextArgs(s, tool, args); err != nil {
		return nil, "", nil, err
	}
	if args, err = h.permit(ctx, s, tool, args, served); err != nil {
		return nil, "", nil, err
	}
	return s, tool, args, nil
}

// CallTool runs a tool by server and tool name, bypassing name routing.
func (h *Host) CallTool(ctx context.Context, serverName, tool string, args any) (*mcp.CallToolResult, error) {
	s, err := h.server(serverName)
	if err != nil {
		return nil, err
	}
	if fe := h.filteredError(serverName, tool); fe != nil {
		return nil, fe
	}
	served, err := h.checkHeld(ctx, s, tool)
	if err != nil {
		return nil, err
	}
	if args, err = jsonTextArgs(s, tool, args); err != nil {
		return nil, err
	}
	if args, err = h.permit(ctx, s, tool, args, served); err != nil {
		return nil, err
	}
	return h.guardedCall(ctx, s, tool, args)
}

// resolveTool maps a namespaced name to its server and tool, fetching the
// tool lists of the servers the name can belong to.
func (h *Host) resolveTool(ctx context.Context, name string) (*server, string, error) {
	if srv, tool, ok := h.routerResolve(name); ok {
		if s, err := h.server(srv); err == nil {
			return h.viewed(s, tool)
		}
	}
	var candidates []*server
	for _, s := range h.all() {
		if strings.HasPrefix(name, "mcp__"+toolsurface.SanitizePart(s.name)+"__") {
			candidates = append(candidates, s)
		}
	}
	if len(candidates) == 0 && mayBeCut(name) {
		// A long name cut to 64 may have lost part of its server's name
		// (toolsurface.ToolName): every server may hold it.
		candidates = h.all()
	}
	var firstErr error
	for _, s := range candidates {
		if _, err := h.serverTools(ctx, s); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if srv, tool, ok := h.routerResolve(name); ok {
		if s, err := h.server(srv); err == nil {
			return h.viewed(s, tool)
		}
	}
	if firstErr != nil {
		return nil, "", firstErr
	}
	if err := h.filteredCall(name, candidates); err != nil {
		return nil, "", err
	}
	if err := h.heldCall(name, candidates); err != nil {
		return nil, "", err
	}
	// A Close that began since the call did empties every server's tools:
	// that is ErrClosed, not a tool the server lacks.
	if err := h.open(); err != nil {
		return nil, "", err
	}
	if len(candidates) == 0 {
		return nil, "", &UnknownToolError{Name: name}
	}
	return nil, "", &UnknownToolError{Name: name, Server: candidates[0].name}
}

// viewed returns s and tool, or a FilteredError when a view's own filter
// hides the tool (the router holds the names of the Host's lists).
func (h *Host) viewed(s *server, tool string) (*server, string, error) {
	if hid, why := h.scope.hidden(tool); hid {
		return nil, "", &FilteredError{Server: s.name, Tool: tool, Reason: why, View: true}
	}
	return s, tool, nil
}

// mayBeCut reports whether name could be one toolsurface.ToolName cut
// to fit: it ends in '_' and eight lowercase hex digits.
func mayBeCut(name string) bool {
	if len(name) < 9 || name[len(name)-9] != '_' {
		return false
	}
	for _, r := range name[len(name)-8:] {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

func (s *server) call(ctx context.Context, tool string, args any) (*mcp.CallToolResult, error) {
	// The breaker first: an open circuit fails fast, without waiting for
	// a reconnect.
	gen, refused := s.breaker.allow()
	if refused != nil {
		return nil, s.circuitOpen(refused)
	}
	start := s.h.clock.Now()
	// One deadline for the whole call, the wait for a server that is
	// (re)connecting and a retry after a reconnect included: it does not
	// start the clock again.
	deadline := start.Add(s.callTimeout())
	if d, ok := ctx.Value(callDeadlineKey{}).(time.Time); ok && d.Before(deadline) {
		deadline = d
	}
	// A connected server is not waited for: no timer for the wait (one
	// per call was a third of the call's timers).
	c := s.liveNow()
	if c == nil {
		// deadline is on the Host's clock; the wait runs out in real time.
		wctx, cancel := waitBefore(ctx, deadline.Sub(start))
		var err error
		c, err = s.live(wctx)
		waitedOut := wctx.Err() != nil && (ctx.Err() == nil || errors.Is(context.Cause(ctx), ErrTimeout))
		cancel()
		if err != nil {
			s.breaker.release(gen)
			if waitedOut {
				err = fmt.Errorf("%w; not back within the call's timeout (%s), so the call was not made", err, s.callTimeout())
			}
			return nil, err
		}
	}
	if s.h.log.Enabled(ctx, slog.LevelDebug) { // else the line's arguments cost two allocations
		s.h.log.Debug("calling tool", "server", s.name, "tool", tool, "args", args) // redacted by the Host's log handler
	}
	res, health, err := s.callOn(ctx, c, tool, args, deadline, true)
	if health != healthOK && err != nil {
		s.mu.Lock()
		s.lastFailure = oneLine(s.h.secrets.String(err.Error()))
		s.mu.Unlock()
	}
	switch {
	case err != nil && health == healthOK && ctx.Err() != nil:
		// The caller gave up: that says nothing of the server, so it
		// neither counts as a failure nor wipes out the failures before it.
		s.breaker.release(gen)
	case health == healthSilent:
		s.breaker.release(gen)
	default:
		s.breaker.done(gen, health == healthOK)
	}
	s.stats.record(s.h.clock.Now().Sub(start), err != nil || (res != nil && res.IsError))
	// A server's error message may quote the arguments or its secrets.
	return res, s.h.secrets.Error(err)
}

// callOn makes the call on one connection and applies the retry rule. It
// reports what the outcome says of the server's health for the breaker: a
// timeout or a dropped connection is a failure, but a drop only once
// however many calls it cut (callHealth).
func (s *server) callOn(ctx context.Context, c *conn, tool string, args any, deadline time.Time, mayRetry bool) (*mcp.CallToolResult, callHealth, error) {
	timeout := s.callTimeout()
	id, raw := s.rawEligible(c, tool)
	// deadline is on the Host's clock; the context runs out in real time.
	// When the caller's context ends first (the gateway's, at the call's
	// deadline), WithTimeout makes no timer, only a cancelCtx that ends
	// with it; the relay path leaves nothing behind that only that
	// cancel would end, so there ctx serves as it is (an allocation, a
	// parent's children map and a channel fewer a call).
	left := deadline.Sub(s.h.clock.Now())
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); !raw || !ok || !d.Before(time.Now().Add(left)) {
		cctx, cancel = context.WithTimeout(ctx, left)
	}
	defer cancel()
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	if c.logging && c.protocol >= "2026-07-28" {
		params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: string(s.h.opts.LogLevel)}
	}
	if extra, _ := ctx.Value(callMetaKey{}).(map[string]any); len(extra) > 0 {
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		for k, v := range extra {
			if _, set := params.Meta[k]; !set {
				params.Meta[k] = v
			}
		}
	}
	if fn, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && fn != nil {
		tok, unregister := s.h.progress.register(s.name, fn)
		defer unregister()
		// Runs before unregister: the progress read before the result is
		// delivered before the call returns. Its bound starts then, at
		// the answer (a deferred call's arguments are evaluated at the
		// defer: a call longer than the bound did not wait at all).
		defer func() { s.h.progress.settle(tok, s.h.clock.After(progressSettle)) }()
		params.SetProgressToken(tok)
	}
	idempotent := s.idempotent(tool) // read now: a drop empties the cache
	var written atomic.Bool
	var task tasks.Mark // set if the server runs the call as a task
	cctx = tasks.WithMark(markCall(cctx), &task)
	inCall := s.calls.enter(cctx)
	var res *mcp.CallToolResult
	var err error
	if raw {
		res, err = c.rawCall(cctx, &rawParams{Meta: params.Meta, Name: tool, Arguments: rawArgs(args), identity: id}, &written)
		if ni, ok := err.(*needsInput); ok {
			// The server asks: the SDK asks the host's handlers and sends
			// the retries, reading the answer it has already (replay).
			res, err = c.session.CallTool(withWriteProbe(context.WithValue(cctx, replayKey{}, &replay{result: ni.result}), &written), params)
		}
	} else {
		res, err = c.session.CallTool(withWriteProbe(cctx, &written), params)
	}
	s.calls.leave(inCall)
	if err == nil {
		return res, healthOK, nil
	}
	full := toolName(s.name, tool)
	switch {
	// A caller whose context ends at the call's deadline (the gateway's
	// relay cancels its worker then) ran out of time too: the server did
	// not answer within the timeout, which the breaker must count.
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), ErrTimeout) && s.h.clock.Now().Before(deadline):
		return nil, healthOK, ctx.Err()
	case cctx.Err() != nil:
		return nil, healthFailed, fmt.Errorf("%s: %w: no result within %s; the call was cancelled", full, ErrTimeout, timeout)
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && transportRejected(rpcErr) {
		// Not the server's answer: the SDK's HTTP client could not deliver
		// the request (no connection, a status without a JSON-RPC body)
		// and kept the session. It says why only in the wrapping error.
		why := withoutURLs(err) // not the URL, which may hold a credential
		if _, after, ok := strings.Cut(why, rpcErr.Message+": "); ok {
			why = after // the cause, without the SDK's layers of "calling…: sending…"
		}
		return nil, healthFailed, fmt.Errorf("%s: the request did not go through (%s)", full, why)
	}
	if rpcErr != nil && !c.waitDone(100*time.Millisecond) {
		// The server answered with an error: it is alive.
		return nil, healthOK, fmt.Errorf("%s: server error: %s", full, s.h.serverWords(rpcErr.Message))
	}
	// The transport failed under the call.
	lost := errors.Is(err, mcp.ErrSessionMissing)
	if lost {
		c.sessionLost.Store(true)
		c.close()
	} else {
		c.waitDone(500 * time.Millisecond)
	}
	if c.tooLarge.Load() {
		// It ran, and would send the same again: no retry.
		return nil, healthFailed, fmt.Errorf("%s: the tool ran, but its result is over the %d MiB message limit and was dropped (the server is reconnected)", full, mcp.DefaultMaxLineLength>>20)
	}
	if id := task.TaskID(); id != "" {
		// A task is never re-run on reconnect (docs/gateway.md, Tasks):
		// the server took it, and it may be running or done there.
		return nil, c.dropFailure(), fmt.Errorf("%s: %w: the connection was lost while the server ran it as task %q, which is not re-run on reconnect (%v)", full, ErrMayHaveRun, id, s.dropDetail(c, err))
	}
	neverWritten := c.recordsWrites && !written.Load()
	safe := lost || neverWritten || idempotent
	if !mayRetry || !safe {
		if c.recordsWrites && !written.Load() {
			return nil, c.dropFailure(), fmt.Errorf("%s: %w: %v", full, ErrNotConnected, err)
		}
		return nil, c.dropFailure(), fmt.Errorf("%s: %w (%v)", full, ErrMayHaveRun, s.dropDetail(c, err))
	}
	s.h.log.Info("retrying call after reconnect", "server", s.name, "tool", tool)
	rctx, rcancel := waitBefore(cctx, deadline.Sub(s.h.clock.Now()))
	c2, err2 := s.reconnected(rctx, c)
	outOfTime := rctx.Err() != nil && ctx.Err() == nil
	rcancel()
	if errors.Is(err2, ErrClosed) {
		return nil, c.dropFailure(), fmt.Errorf("%s: connection lost: %w", full, ErrClosed)
	}
	if err2 != nil && outOfTime {
		return nil, c.dropFailure(), fmt.Errorf("%s: %w: connection lost and not back within the call's time: %v", full, ErrTimeout, err2)
	}
	if err2 != nil {
		return nil, c.dropFailure(), fmt.Errorf("%s: connection lost and not back within the call's time: %v", full, err2)
	}
	return s.callOn(ctx, c2, tool, args, deadline, false)
}

// codeRejectedByTransport is go-sdk's jsonrpc2.ErrRejected (unexported):
// a request its HTTP client could not deliver, wrapped so that the session
// survives. Only when it is the first JSON-RPC error of the chain; a
// server's own error answer comes before it.
const codeRejectedByTransport = -32005

// transportRejected reports whether e is that wrapping, not a server's
// answer.
func transportRejected(e *jsonrpc.Error) bool {
	return e.Code == codeRejectedByTransport && e.Message == "rejected by transport"
}

// callHealth is what a call's outcome says of its server's health.
type callHealth int8

const (
	healthOK     callHealth = iota // an answer: the server works
	healthFailed                   // a failure the breaker counts
	// healthSilent: the connection's drop was counted already, by the
	// first call it cut; the others cut with it say nothing more (one
	// crash under many calls in flight is one failure, not many).
	healthSilent
)

// dropFailure is the health of a call cut by c's drop: a failure for the
// first call to report it, silent for the rest. A transport error that
// left the connection up (an HTTP server that does not answer, with the
// session still held) is no drop: each such call counts, so that a remote
// server that is down opens the circuit as before.
func (c *conn) dropFailure() callHealth {
	if !c.isDone() {
		return healthFailed
	}
	if c.dropCounted.CompareAndSwap(false, true) {
		return healthFailed
	}
	return healthSilent
}

// waitBefore bounds a call's wait for its server to (re)connect: it ends a
// little before the left time of the call does (a quarter of it, at most
// half a second), so that the answer, which says the server is not back,
// reaches the caller before the caller's own timer, set to the same
// deadline (the gateway's), ends the call with a bare "timed out".
func waitBefore(ctx context.Context, left time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, left-min(left/4, 500*time.Millisecond))
}

// circuitOpen completes the breaker's refusal with what the server knows.
func (s *server) circuitOpen(r *CircuitOpenError) error {
	r.Server = s.name
	s.mu.Lock()
	r.LastFailure, r.Watching = s.lastFailure, s.watching
	r.Reconnecting = s.reconnecting && s.state == StateConnecting
	s.mu.Unlock()
	return r
}

// dropDetail describes why a connection went away under a call.
func (s *server) dropDetail(c *conn, err error) string {
	if c.isDone() {
		return c.dropReason()
	}
	return err.Error()
}

func (c *conn) waitDone(d time.Duration) bool {
	select {
	case <-c.done:
		return true
	case <-c.clock.After(d):
		return false
	}
}

// reconnected waits for a connection other than old.
func (s *server) reconnected(ctx context.Context, old *conn) (*conn, error) {
	// A closed Host reconnects nothing: without this, a call cut by Close
	// waited for a connection that never came until its deadline.
	closed := s.h.ctx.Done()
	for {
		if s.h.ctx.Err() != nil {
			return nil, ErrClosed
		}
		s.mu.Lock()
		cur, st, reason, ch := s.conn, s.state, s.reason, s.settled
		s.mu.Unlock()
		if cur != nil && cur != old {
			return cur, nil
		}
		if st != StateConnecting && st != StateConnected {
			return nil, fmt.Errorf("%s %s: %s", s.name, st.Phrase(), reason)
		}
		wait := ch
		if st == StateConnected { // not yet noticed the drop
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-closed:
				return nil, ErrClosed
			case <-s.h.clock.After(20 * time.Millisecond):
			}
			continue
		}
		select {
		case <-ctx.Done():
			s.mu.Lock()
			reconnecting, reason := s.reconnecting, s.reason
			s.mu.Unlock()
			if reconnecting {
				return nil, fmt.Errorf("%s is reconnecting (%s)", s.name, reason)
			}
			return nil, ctx.Err()
		case <-closed:
			return nil, ErrClosed
		case <-wait:
		}
	}
}

// idempotent reports whether the server declared the tool idempotent,
// in the definition served: a changed tool's hints stay as pinned until
// the change is accepted (keepPinnedHints), which can only take the hint
// away, so the pin state is looked at only when the server's list says
// idempotent (not on every call).
func (s *server) idempotent(tool string) bool {
	tools, _ := s.tools.peek()
	if !declaresIdempotent(tools, tool) {
		return false
	}
	if st := s.h.pins.get(s.name); st != nil && st.s == s && sameList(st.raw, tools) {
		return declaresIdempotent(st.out, tool)
	}
	return true
}

// declaresIdempotent reports whether tool of tools has idempotentHint.
func declaresIdempotent(tools []*mcp.Tool, tool string) bool {
	for _, t := range tools {
		if t.Name == tool {
			return t.Annotations != nil && t.Annotations.IdempotentHint
		}
	}
	return false
}

type callMetaKey struct{}

// WithCallMeta returns a context whose tool calls carry meta in their
// request's _meta, beside what the host sets itself (which wins): a
// gateway forwards a trace's traceparent this way, so that a server's own
// spans join the trace.
func WithCallMeta(ctx context.Context, meta map[string]any) context.Context {
	return context.WithValue(ctx, callMetaKey{}, meta)
}

// jsonTextArgs takes arguments handed in as JSON text (jsonText) as
// json.RawMessage, so that the permission check, the secret check, the
// relay path and the SDK's CallTool all read the same text (encoding/json
// would write a []byte as a base64 string: the rules decided on that
// string, and the SDK sent it, where the relay path sent the JSON). Empty
// text (a nil json.RawMessage, say) is no arguments, as a nil args is.
// Text that is not valid JSON is refused: neither way of sending a call
// can write it (the SDK's CallTool then waited out the call's deadline).
// Any other value is returned as it is and encoded by the call.
//
// A tool's arguments are an object (MCP's tools/call): text or a Go value
// that is another JSON value (an array, a string, a number, true or false)
// is refused here in one message, rather than sent for each server to
// refuse in its own words. null is no arguments.
func jsonTextArgs(s *server, tool string, args any) (any, error) {
	raw, ok := jsonText(args)
	switch {
	case !ok:
		if what := notObjectValue(args); what != "" {
			return nil, notObject(s, tool, what)
		}
		return args, nil
	case len(raw) == 0:
		return nil, nil // no text: no arguments, as a nil args
	case json.Valid(raw):
		if what := notObjectText(raw); what != "" {
			return nil, notObject(s, tool, what)
		}
		return raw, nil
	}
	return nil, fmt.Errorf("%s: the arguments are not valid JSON", toolName(s.name, tool))
}

func notObject(s *server, tool, what string) error {
	return fmt.Errorf("%s: the arguments must be a JSON object of named arguments, not %s", toolName(s.name, tool), what)
}

// notObjectText names the JSON value valid text holds, unless it is an
// object or null (as the CLI names them).
func notObjectText(raw json.RawMessage) string {
	t := bytes.TrimLeft(raw, " \t\n\r")
	if len(t) == 0 {
		return ""
	}
	switch t[0] {
	case '{', 'n':
		return ""
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// notObjectValue names the JSON value a Go value encodes to, when its
// kind makes it one that is not an object (json.Marshaler values are
// left to their own encoding).
func notObjectValue(args any) string {
	if args == nil {
		return ""
	}
	if _, ok := args.(json.Marshaler); ok {
		return ""
	}
	switch v := reflect.ValueOf(args); v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return "" // null: no arguments
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return ""
}

// jsonText returns arguments handed in as JSON text — json.RawMessage,
// []byte or string — and whether they were. A string is JSON text too,
// not a value to encode: a tool's arguments are an object, never a JSON
// string, and a model's tool call often comes as its JSON in a string
// (OpenAI's "arguments").
func jsonText(args any) (json.RawMessage, bool) {
	switch a := args.(type) {
	case json.RawMessage:
		return a, true
	case []byte:
		return a, true
	case string:
		return json.RawMessage(a), true
	}
	return nil, false
}

// maxServerError bounds, in characters, the message of a server's
// JSON-RPC error that a call's error carries.
const maxServerError = 2000

// serverWords is the message of a server's JSON-RPC error (a failed
// task's included) as the caller gets it: cleaned as a result's text is
// (invisible and deceptive characters, the known secret values; control
// characters are left to the terminal paths, which escape them), and cut
// to maxServerError characters.
func (h *Host) serverWords(msg string) string {
	msg, _ = toolsurface.CleanText(msg)
	msg, _ = h.secrets.Known(msg)
	return toolsurface.CapDescription(msg, maxServerError)
}
