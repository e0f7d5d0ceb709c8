package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// How calls end when their client goes away (docs/gateway.md, issue 16).
//
// Every tools/call runs under a context the gateway can cancel: the SDK
// cancels it when the client sends notifications/cancelled or (stdio) its
// connection reads EOF; the gateway cancels it when the client's session
// is deleted (CancelSession), when the HTTP request that carries it ends
// before its answer (BindHTTP), and at shutdown after the grace
// (Shutdown). Cancelling a host call sends notifications/cancelled
// upstream. The call's own timeout is started here too, before any
// permission question, so that a question nobody answers ends with the
// call (host.WithCallDeadline).

// Causes of a call's end, for the log.
var (
	errClientGone = errors.New("the client went away")
	// errClientCancelled is a notifications/cancelled of the client's
	// that the gateway, not the SDK, acts on (CancelHTTP, the stdio fast
	// path).
	errClientCancelled = errors.New("the client cancelled the call")
	errSessionEnded    = errors.New("the client ended its session")
	errShuttingDown    = errors.New("the gateway is shutting down")
)

// CarrierHeader is the request header BindHTTP sets (and replaces when a
// client sends it) to find the HTTP request that carries a call.
const CarrierHeader = "X-Switchboard-Carrier"

// calls is the set of tool calls in flight.
type calls struct {
	mu      sync.Mutex
	closing bool
	set     map[*liveCall]struct{}
	idle    chan struct{} // closed when set becomes empty while closing
	// cancelled is when a call last ended cancelled: the SDK sends its
	// notifications/cancelled upstream in the background, and refuses to
	// once the server's connection closes.
	cancelled time.Time
	carriers  map[string]*carrier
	// keys are the BindHTTP keys of the requests in flight. Two clients
	// the gateway cannot tell apart (no credential, one address: two
	// agents on this machine) may send calls with the same ID at once:
	// such a key names both requests, and a cancellation that names it
	// cancels neither, as it cannot say whose it is.
	keys map[string][]*carrier
}

// bindKeys files cr under keys. c.mu is held.
func (c *calls) bindKeys(keys []string, cr *carrier) {
	for _, k := range keys {
		c.keys[k] = append(c.keys[k], cr)
	}
}

// unbindKeys takes cr from under keys. c.mu is held.
func (c *calls) unbindKeys(keys []string, cr *carrier) {
	for _, k := range keys {
		crs := c.keys[k]
		for i, x := range crs {
			if x == cr {
				crs = append(crs[:i], crs[i+1:]...)
				break
			}
		}
		if len(crs) == 0 {
			delete(c.keys, k)
		} else {
			c.keys[k] = crs
		}
	}
}

type liveCall struct {
	session *mcp.ServerSession
	cancel  context.CancelCauseFunc
	// withdrawn counts the call's questions being withdrawn
	// (withdraw.go); its carrier's, over HTTP, else own.
	withdrawn *withdrawals
	own       withdrawals
}

// carrier is an HTTP request that carries calls: they end with it.
type carrier struct {
	ctx       context.Context
	cancel    context.CancelCauseFunc
	withdrawn *withdrawals // of its calls' questions, seen on its response
}

func (c *calls) init() {
	c.set = map[*liveCall]struct{}{}
	c.carriers = map[string]*carrier{}
	c.keys = map[string][]*carrier{}
}

// add registers a call, or reports false once shutdown has begun.
func (c *calls) add(lc *liveCall) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.set[lc] = struct{}{}
	return true
}

func (c *calls) remove(lc *liveCall, cancelled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.set[lc]; !ok {
		return
	}
	if cancelled {
		c.cancelled = time.Now()
	}
	delete(c.set, lc)
	if c.closing && len(c.set) == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// cancelWhere cancels the calls for which match is true and returns how
// many.
func (c *calls) cancelWhere(cause error, match func(*liveCall) bool) int {
	c.mu.Lock()
	var hit []*liveCall
	for lc := range c.set {
		if match(lc) {
			hit = append(hit, lc)
		}
	}
	c.mu.Unlock()
	for _, lc := range hit {
		lc.cancel(cause)
	}
	return len(hit)
}

// trackCalls is the outermost receiving middleware of tools/call: it
// makes the call cancellable by the gateway and starts its timeout.
func (g *Gateway) trackCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		creq, ok := req.(*mcp.CallToolRequest)
		if !ok || creq.Params == nil {
			return next(ctx, method, req)
		}
		name := creq.Params.Name
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		lc := &liveCall{session: creq.Session, cancel: cancel}
		if !g.calls.add(lc) {
			return g.refusal(name, "the gateway is shutting down; call the tool again when it is back"), nil
		}
		defer g.calls.remove(lc, false) // if next panics; a second remove is a no-op
		if cr := g.carrierOf(creq.Extra); cr != nil {
			stop := context.AfterFunc(cr.ctx, func() {
				if cause := context.Cause(cr.ctx); errors.Is(cause, errClientCancelled) {
					cancel(cause)
				} else {
					cancel(errClientGone)
				}
			})
			defer stop()
			lc.withdrawn = cr.withdrawn
		} else {
			lc.withdrawn = &lc.own
		}
		ctx = context.WithValue(ctx, liveCallKey{}, lc)
		// The call's timeout runs from now: a permission question the SDK
		// puts to an older client (elicitation/create, before the call
		// reaches its server) counts against it.
		server, _ := g.callRoute(ctx, name).names()
		timeout := g.h.CallTimeout(server)
		ctx, stopT := host.WithCallDeadline(ctx, time.Now().Add(timeout))
		defer stopT()
		res, err := next(ctx, method, req)
		g.calls.remove(lc, ctx.Err() != nil)
		// A question still out (elicitation/create) is withdrawn before
		// the answer, which would close the stream its cancellation
		// goes out on (withdraw.go).
		lc.withdrawn.wait(withdrawWait)
		if err != nil && host.IsTimeout(ctx, err) {
			// Ran out while the SDK waited for the client's answer to a
			// question (older protocols), or while a held call waited.
			return g.refusal(name, fmt.Sprintf("%s: %v: no result within %s (a question to the client counts against the call's timeout); the call was cancelled",
				name, host.ErrTimeout, timeout)), nil
		}
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), errShuttingDown) && (err != nil || res == nil) {
			g.log.Info("gateway call cut by shutdown", "tool", name)
			return nil, ErrShuttingDown
		}
		if err != nil && ctx.Err() != nil {
			g.log.Info("gateway call ended by its client", "tool", name, "reason", context.Cause(ctx))
			// The handler's error is ctx.Err(), which the SDK would send
			// as code 0, "context canceled".
			return nil, cancelledError(context.Cause(ctx))
		}
		return res, err
	}
}

// CodeCancelled is the JSON-RPC error code of a call cancelled before it
// ended: by its client (notifications/cancelled), because its client
// ended its session (DELETE) or went away, or by shutdown
// ([ErrShuttingDown]). It is the TypeScript SDK's ConnectionClosed, a code
// of the server-error range.
const CodeCancelled = CodeShuttingDown

// cancelledError is the answer to a call its client ended (cause is the
// call context's): a JSON-RPC error that says so in words.
func cancelledError(cause error) *jsonrpc.Error {
	why := "by its client"
	switch {
	case errors.Is(cause, errSessionEnded):
		why = "because its client ended the MCP session"
	case errors.Is(cause, errClientGone):
		why = "because its client went away"
	}
	return &jsonrpc.Error{Code: CodeCancelled, Message: "the call was cancelled " + why + " (it may or may not have run)"}
}

// CodeShuttingDown is the JSON-RPC error code of a call that the gateway's
// shutdown cut (a code of the server-error range; the TypeScript SDK
// calls it ConnectionClosed).
const CodeShuttingDown = -32000

// ErrShuttingDown is the answer to a call still running when the
// gateway's shutdown grace ended: it was cancelled (its server got
// notifications/cancelled), and may or may not have run.
var ErrShuttingDown = &jsonrpc.Error{
	Code:    CodeShuttingDown,
	Message: "the Switchboard gateway is shutting down: the call was cancelled (it may or may not have run); call the tool again when the gateway is back",
}

// CancelSession cancels the calls in flight of the client session with
// this id (its Mcp-Session-Id) and returns how many. An HTTP handler calls
// it on the session's DELETE before the SDK closes the session, which
// waits for them.
func (g *Gateway) CancelSession(id string) int {
	if id == "" {
		return 0
	}
	n := g.calls.cancelWhere(errSessionEnded, func(lc *liveCall) bool {
		return lc.session != nil && lc.session.ID() == id
	})
	if n > 0 {
		g.log.Info("client session ended; its calls were cancelled", "calls", n)
	}
	return n
}

// BindHTTP ties the calls that r carries to it: when r's context ends
// before they do (the client dropped the connection), they are cancelled,
// since their answers can no longer be delivered; and a call whose
// question to the client is withdrawn answers on w only after the
// question's notifications/cancelled (see Transport). keys, if any, name
// the calls for CancelHTTP (a stateless gateway, where a client's
// notifications/cancelled arrives in a request of its own). Serve the
// returned request on the returned writer instead of r and w, and call
// release when it is served. It also keeps the `task` field of a
// task-capable client's tools/call (tasks.go), reading the body whole (a
// body with a Bytes() []byte method, already read, is not copied).
func (g *Gateway) BindHTTP(w http.ResponseWriter, r *http.Request, keys ...string) (http.ResponseWriter, *http.Request, func()) {
	ctx, cancel := context.WithCancelCause(r.Context())
	tok := randomToken()
	cr := &carrier{ctx: ctx, cancel: cancel, withdrawn: &withdrawals{}}
	g.calls.mu.Lock()
	g.calls.carriers[tok] = cr
	g.calls.bindKeys(keys, cr)
	g.calls.mu.Unlock()
	r = r.WithContext(ctx)
	r.Header.Set(CarrierHeader, tok)
	takeTaskFieldHTTP(r) // a task-capable client's `task` field (tasks.go)
	return &watchedWriter{ResponseWriter: w, withdrawn: cr.withdrawn}, r, func() {
		g.calls.mu.Lock()
		delete(g.calls.carriers, tok)
		g.calls.unbindKeys(keys, cr)
		g.calls.mu.Unlock()
		cancel(nil)
	}
}

// CancelHTTP cancels the calls of the request bound under key (BindHTTP)
// and reports whether there was one. A key that two requests in flight
// were bound under cancels neither: it cannot say which one it names.
func (g *Gateway) CancelHTTP(key string) bool {
	g.calls.mu.Lock()
	crs := g.calls.keys[key]
	var cr *carrier
	if len(crs) == 1 {
		cr = crs[0]
	}
	g.calls.mu.Unlock()
	if cr == nil {
		return false
	}
	cr.cancel(errClientCancelled)
	return true
}

func (g *Gateway) carrierOf(ex *mcp.RequestExtra) *carrier {
	if ex == nil || ex.Header == nil {
		return nil
	}
	tok := ex.Header.Get(CarrierHeader)
	if tok == "" {
		return nil
	}
	g.calls.mu.Lock()
	defer g.calls.mu.Unlock()
	return g.calls.carriers[tok]
}

func randomToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("gateway: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// Shutdown stops taking calls (a new one is refused with an error result),
// waits for the calls in flight until ctx is done, then cancels those still
// running — each sends notifications/cancelled upstream — and the calls
// held for a client's answer, and waits up to a second for them to
// return. It returns how many calls it cancelled. It does not close the
// host; call Close after it.
func (g *Gateway) Shutdown(ctx context.Context) int {
	c := &g.calls
	c.mu.Lock()
	c.closing = true
	if c.idle == nil && len(c.set) > 0 {
		c.idle = make(chan struct{})
	}
	idle := c.idle
	c.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
		}
	}
	n := c.cancelWhere(errShuttingDown, func(*liveCall) bool { return true })
	g.relay.close()
	if n > 0 {
		g.log.Info("shutting down: calls still running after the grace were cancelled", "calls", n)
		c.mu.Lock()
		idle = c.idle
		c.mu.Unlock()
		if idle != nil {
			t := time.NewTimer(time.Second)
			defer t.Stop()
			select {
			case <-idle:
			case <-t.C:
			}
		}
	}
	// The notifications/cancelled of calls that just ended go out in the
	// background: give them a moment before the host closes the servers.
	c.mu.Lock()
	settle := time.Until(c.cancelled.Add(cancelSettle))
	c.mu.Unlock()
	if settle > 0 {
		time.Sleep(settle)
	}
	// Standalone streams on connections of their own: net/http's
	// shutdown does not end them.
	g.streams.endAll()
	return n
}

// cancelSettle is how long Shutdown lets a cancelled call's
// notifications/cancelled go out.
const cancelSettle = 100 * time.Millisecond

// statelessCaps is the receiving middleware of a stateless gateway: a
// client on a protocol before 2026-07-28 has no stream the gateway could
// send list_changed on, so it is not told it will get one.
func statelessCaps(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "initialize" || err != nil {
			return res, err
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
			return res, err // a session of the stateful half of a scale-out gateway
		}
		ir, ok := res.(*mcp.InitializeResult)
		if !ok || ir.Capabilities == nil || ir.ProtocolVersion >= "2026-07-28" {
			return res, err
		}
		cp := *ir
		caps := *ir.Capabilities
		if caps.Tools != nil {
			t := *caps.Tools
			t.ListChanged = false
			caps.Tools = &t
		}
		if caps.Prompts != nil {
			p := *caps.Prompts
			p.ListChanged = false
			caps.Prompts = &p
		}
		if caps.Resources != nil {
			r := *caps.Resources
			r.ListChanged = false
			caps.Resources = &r
		}
		cp.Capabilities = &caps
		return &cp, nil
	}
}

// notifyLogEvery is how often the SDK's warning about a notification it
// could not send (a client gone without ending its session) is logged.
const notifyLogEvery = time.Minute

// quietNotifications wraps the logger given to the SDK's server: its
// warning for each session a list_changed could not reach — one line per
// dead session per change — is logged at most once a minute, with how many
// were left out; and its Info lines are left out unless l logs debug.
// Those are one per session connecting and ending, so three per request of
// a 2026-07-28 client (each request its own session): at info level they
// filled the gateway's log file by ~250 bytes a request and took a fifth
// of its CPU, redacted and written.
func quietNotifications(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(&notifyLimiter{Handler: l.Handler(), st: &limiterState{}})
}

type limiterState struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

type notifyLimiter struct {
	slog.Handler
	st *limiterState
}

// Enabled keeps the SDK's Info (and Debug) lines out unless the wrapped
// handler logs debug.
func (h *notifyLimiter) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, l) && (l >= slog.LevelWarn || h.Handler.Enabled(ctx, slog.LevelDebug))
}

func (h *notifyLimiter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn || !strings.HasPrefix(r.Message, "calling notifications/") {
		return h.Handler.Handle(ctx, r)
	}
	h.st.mu.Lock()
	if !h.st.last.IsZero() && r.Time.Sub(h.st.last) < notifyLogEvery {
		h.st.suppressed++
		h.st.mu.Unlock()
		return nil
	}
	n := h.st.suppressed
	h.st.suppressed, h.st.last = 0, r.Time
	h.st.mu.Unlock()
	out := slog.NewRecord(r.Time, r.Level, "a notification could not reach a client (its session is gone or has no stream)", r.PC)
	out.AddAttrs(slog.String("error", r.Message), slog.Int("suppressed_since_last", n))
	return h.Handler.Handle(ctx, out)
}

func (h *notifyLimiter) WithAttrs(as []slog.Attr) slog.Handler {
	return &notifyLimiter{Handler: h.Handler.WithAttrs(as), st: h.st}
}

func (h *notifyLimiter) WithGroup(name string) slog.Handler {
	return &notifyLimiter{Handler: h.Handler.WithGroup(name), st: h.st}
}
