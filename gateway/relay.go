package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/host"
)

// DefaultElicitationTimeout is how long a question of an upstream server,
// put to a client on protocol 2026-07-28, waits for the client's answer
// (Options.ElicitationTimeout).
const DefaultElicitationTimeout = 5 * time.Minute

// maxHeldQuestions bounds the calls held for a client's answer at once,
// and maxHeldPerClient those of one client (owner: a connection, or over
// HTTP a principal or Authorization header): past either, an upstream
// server's question is declined instead of held. Without the share, one
// client that never came back for 256 questions had every other client's
// question declined for the next 5 minutes.
const (
	maxHeldQuestions = 256
	maxHeldPerClient = 64
)

// Prefixes of the requestState values and input request keys the gateway
// hands out. Permission questions use permissionStatePrefix and the key
// permissionInput.
const (
	relayStatePrefix    = "relay:"
	upstreamInputPrefix = "upstream_"
)

var errClosed = errors.New("the gateway is closed")

// The relay holds the calls of clients on protocol 2026-07-28 whose
// upstream server asked a question (elicitation) during the call.
//
// On that protocol a server cannot send a request to its client during a
// call: it answers the call with the questions (input requests) and a
// requestState, and the client calls again with the answers. The upstream
// server's question reaches the gateway as a Prompter.Elicit that blocks
// the upstream call until it is answered, so the call runs on its own
// goroutine: the client's call is answered with the question and a fresh
// requestState naming the held call, and the retry that carries that
// requestState delivers the answer and waits for what comes next — the
// call's result or the server's next question.
//
// The host calls run on goroutines kept from call to call (workers).
//
// A requestState is 256 random bits, bound to the client that got it (its
// connection, or over HTTP its Authorization header) and to the call's
// tool and arguments, and good for one retry: each round hands out a new
// one. A question not answered within the timeout is cancelled, and so is
// its upstream call; so are the calls of a client whose connection ends.
type relay struct {
	instance string // names this gateway in its requestStates
	timeout  time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	closed  bool
	held    map[string]*heldCall        // requestState (without prefix) → call waiting for the retry
	calls   map[*heldCall]struct{}      // calls whose host call is running
	watched map[*mcp.ServerSession]bool // sessions whose end cancels their calls

	pool workers
}

// maxIdleWorkers bounds the goroutines kept waiting for a host call.
const maxIdleWorkers = 8

// workers run the relay's host calls, and the calls of the stdio fast
// path (stdio_fast.go), on goroutines kept for the next call once theirs
// returns. A goroutine's stack grows to the depth of a host
// call (the SDK's decoding of the server's answer is deep): on a fresh
// goroutine per call, that was several stack copies per call, 8% of the
// relay's CPU. A kept stack is shrunk only by the garbage collector, a
// halving at a time.
type workers struct {
	jobs chan func()   // unbuffered: a send reaches only an idle worker
	quit chan struct{} // closed by relay.close: idle workers end
	idle atomic.Int32
}

// run runs f on an idle worker, or on a new one.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.work(f)
	}
}

// work runs f, then waits for the next job, unless maxIdleWorkers wait
// already or the relay is closed.
func (w *workers) work(f func()) {
	for {
		f()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case f = <-w.jobs:
			w.idle.Add(-1)
		case <-w.quit:
			w.idle.Add(-1)
			return
		}
	}
}

func newRelay(instance string, timeout time.Duration, log *slog.Logger) *relay {
	if instance == "" || strings.Contains(instance, ".") {
		instance = randomString(8)
	}
	return &relay{
		instance: instance,
		timeout:  timeout,
		log:      log,
		held:     map[string]*heldCall{},
		calls:    map[*heldCall]struct{}{},
		watched:  map[*mcp.ServerSession]bool{},
		pool:     workers{jobs: make(chan func()), quit: make(chan struct{})},
	}
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("gateway: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// owner is who may answer a held call's questions.
type owner struct {
	session *mcp.ServerSession // the client's connection, when it is one
	auth    string             // over HTTP: a digest of the credentials
}

// ownerOf identifies the client making req. Over HTTP, protocol
// 2026-07-28 has no sessions (each request is a session of its own), so
// the client is known by its credentials; elsewhere by its connection.
func ownerOf(req *mcp.CallToolRequest) owner {
	if ex := req.Extra; ex != nil && ex.Header != nil {
		return owner{auth: credentials(ex)}
	}
	return owner{session: req.Session}
}

// credentials is the digest of who an HTTP request comes from: the
// principal its credential authenticated (the user its token names),
// whichever of the principal's credentials it is — an OAuth access
// token refreshed while a task runs, another of its keys — else its
// Authorization header as sent.
func credentials(ex *mcp.RequestExtra) string {
	h := sha256.New()
	if ex.TokenInfo != nil && ex.TokenInfo.UserID != "" {
		h.Write([]byte("principal\x00"))
		h.Write([]byte(ex.TokenInfo.UserID))
	} else {
		h.Write([]byte("header\x00"))
		h.Write([]byte(ex.Header.Get("Authorization")))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// heldCall is one call of a 2026-07-28 client that declared elicitation,
// run on a worker so that it can outlive the request that started it (or,
// with only cancel set, one that cannot be asked: relay.track).
type heldCall struct {
	r      *relay
	name   string          // the gateway tool name
	route  resolved        // its route, as the call started
	args   json.RawMessage // as first sent: a retry must repeat them
	owner  owner
	start  time.Time
	ask    *askState
	cancel context.CancelFunc
	done   chan struct{} // closed once res and err are set
	res    *switchboard.Result
	err    error

	// Guarded by r.mu: the requestState the call is held under, if any.
	token string
	timer *time.Timer

	mu        sync.Mutex
	seq       int
	questions []*question   // asked and not yet answered, in order
	changed   chan struct{} // a question was added (capacity 1)
	sink      *progressSink // where progress goes while a request waits
}

// question is one upstream elicitation waiting for the client's answer.
type question struct {
	key      string
	params   *mcp.ElicitParams
	sent     bool // the client has seen it
	answered bool
	answer   chan *mcp.ElicitResult // capacity 1
}

type progressSink struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
}

// multiRoundTrip reports whether the client of ss takes questions as input
// requests (protocol 2026-07-28 and later), as the SDK decides it: a
// session without initialize parameters speaks the latest protocol.
func multiRoundTrip(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= "2026-07-28"
}

// callMultiRoundTrip runs a call of a 2026-07-28 client: a new call, or
// the retry of a held one that carries the answers to its questions.
func (g *Gateway) callMultiRoundTrip(ctx context.Context, req *mcp.CallToolRequest, rt resolved, args json.RawMessage) (*mcp.CallToolResult, error) {
	name := rt.name
	state := req.Params.RequestState
	var c *heldCall
	switch {
	case strings.HasPrefix(state, relayStatePrefix):
		var msg string
		if c, msg = g.relay.resume(req, strings.TrimPrefix(state, relayStatePrefix), name, args); c == nil {
			return g.refusal(name, msg), nil
		}
		c.attach(ctx, req)
		c.deliver(req.Params.InputResponses)
	case state != "" && !strings.HasPrefix(state, permissionStatePrefix):
		return g.refusal(name, "the call's requestState was not issued by this gateway; call the tool again without it"), nil
	default:
		var err error
		if c, err = g.startHeld(ctx, req, rt, args); err != nil {
			return g.refusal(name, err.Error()), nil
		}
	}
	return g.await(ctx, c)
}

// track counts the host call of a 2026-07-28 client that cannot be asked,
// which runs on its request's goroutine (callTool), among the relay's
// calls: Close cancels it as it cancels a held call, and after Close it is
// refused (errClosed). end, called when it returns, uncounts it.
func (r *relay) track(ctx context.Context) (_ context.Context, end func(), _ error) {
	ctx, cancel := context.WithCancel(ctx)
	c := &heldCall{cancel: cancel}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		cancel()
		return nil, nil, errClosed
	}
	r.calls[c] = struct{}{}
	r.mu.Unlock()
	return ctx, func() {
		cancel()
		r.mu.Lock()
		delete(r.calls, c)
		r.mu.Unlock()
	}, nil
}

// startHeld starts the host call of a new call on a worker.
func (g *Gateway) startHeld(ctx context.Context, req *mcp.CallToolRequest, rt resolved, args json.RawMessage) (*heldCall, error) {
	r := g.relay
	c := &heldCall{
		r: r, name: rt.name, route: rt, args: args, owner: ownerOf(req), start: time.Now(),
		done: make(chan struct{}), changed: make(chan struct{}, 1),
	}
	c.ask = &askState{
		session:     g.askSession(req.Session),
		sessionless: g.sessionless(req.Session),
		caps:        req,
		responses:   req.Params.InputResponses,
		state:       req.Params.RequestState,
		held:        c,
	}
	// The call may outlive this request: it ends with its own cancel,
	// which this request's end triggers only while it waits for it.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	cctx = context.WithValue(cctx, askKey{}, c.ask)
	var progress host.ProgressFunc
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		c.sink = &progressSink{ctx: ctx, ss: req.Session, token: tok}
		progress = c.progress
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		cancel()
		return nil, errClosed
	}
	r.calls[c] = struct{}{}
	if ss := c.owner.session; ss != nil && !r.watched[ss] {
		r.watched[ss] = true
		go r.watch(ss)
	}
	r.mu.Unlock()
	r.pool.run(func() {
		res, err := g.call(cctx, rt, args, progress)
		cancel()
		r.mu.Lock()
		delete(r.calls, c)
		r.mu.Unlock()
		c.res, c.err = res, err
		close(c.done)
	})
	return c, nil
}

// await waits for the held call's next question or its result. A question
// goes back to the client with a new requestState; the call stays held
// for the retry. If the client gives up on this request (cancels it, or
// its connection ends), the call is cancelled.
func (g *Gateway) await(ctx context.Context, c *heldCall) (*mcp.CallToolResult, error) {
	for {
		if qs := c.unanswered(); len(qs) > 0 {
			c.detach()
			token, err := g.relay.hold(c)
			if err != nil {
				c.cancel()
				return g.refusal(c.name, err.Error()), nil
			}
			return &mcp.CallToolResult{InputRequests: qs, RequestState: relayStatePrefix + token}, nil
		}
		select {
		case <-c.done:
			c.detach()
			return g.result(ctx, c.route, c.start, c.ask, c.res, c.err)
		case <-c.changed:
		case <-ctx.Done():
			c.cancel()
			return nil, ctx.Err()
		}
	}
}

// hold files c under a new requestState until the client's retry or the
// timeout, whichever comes first.
func (r *relay) hold(c *heldCall) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", errClosed
	}
	token := r.instance + "." + randomString(32)
	c.token = token
	r.held[token] = c
	c.timer = time.AfterFunc(r.timeout, func() { r.expire(c, token) })
	return token, nil
}

// expire gives up on a held call whose client did not come back in time:
// its questions are withdrawn and the upstream call is cancelled.
func (r *relay) expire(c *heldCall, token string) {
	r.mu.Lock()
	if r.held[token] != c {
		r.mu.Unlock()
		return // resumed meanwhile
	}
	delete(r.held, token)
	c.token = ""
	r.mu.Unlock()
	c.cancel()
	r.log.Info("a server's question went unanswered; the call was cancelled", "tool", c.name, "waited_ms", r.timeout.Milliseconds())
}

// resume takes the call held under token for the retry req, or returns why
// it cannot: nothing is held under it for this client, or the retry is not
// the same call. A refused retry leaves the held call alone.
func (r *relay) resume(req *mcp.CallToolRequest, token, name string, args json.RawMessage) (*heldCall, string) {
	who := ownerOf(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.held[token]
	if c == nil || c.owner != who {
		return nil, r.unknownState(token)
	}
	if c.name != name || !sameArgs(c.args, args) {
		return nil, fmt.Sprintf("the call's requestState belongs to a call of %s with other arguments: a retry must repeat the tool and arguments of the call it answers", c.name)
	}
	delete(r.held, token)
	c.token = ""
	c.timer.Stop()
	return c, ""
}

// abandon gives up on the call held under a requestState the gateway
// issued (its client will not come back: the task that ran it ended), so
// that its upstream call is cancelled now, not at the question's timeout.
func (r *relay) abandon(state string) {
	token, ok := strings.CutPrefix(state, relayStatePrefix)
	if !ok {
		return
	}
	r.mu.Lock()
	c := r.held[token]
	if c != nil {
		delete(r.held, token)
		c.token = ""
		c.timer.Stop()
	}
	r.mu.Unlock()
	if c != nil {
		c.cancel()
	}
}

// setInstance names this gateway in the requestStates it issues from now
// on; the calls held under the old name stay held under it.
func (r *relay) setInstance(name string) {
	if name == "" || strings.Contains(name, ".") {
		return
	}
	r.mu.Lock()
	r.instance = name
	r.mu.Unlock()
}

// HeldCallInstance returns the Options.Instance of the gateway that issued
// a call's requestState for a question an upstream server asked, or false
// when state is not such a requestState. A scale-out front passes the
// retry that carries the answer to that instance.
func HeldCallInstance(state string) (string, bool) {
	token, ok := strings.CutPrefix(state, relayStatePrefix)
	if !ok {
		return "", false
	}
	inst, _, ok := strings.Cut(token, ".")
	return inst, ok && inst != ""
}

// unknownState says why no call is held under token.
func (r *relay) unknownState(token string) string {
	if inst, _, ok := strings.Cut(token, "."); ok && inst != r.instance {
		return "the call's requestState was issued by another gateway instance (or an earlier run of this one): " +
			"a server's question is held by the instance that asked it, so with several stateless gateway " +
			"instances behind a load balancer, give them a shared --session-key-file (which passes the retry on) " +
			"or send a client's calls to one instance; call the tool again"
	}
	return fmt.Sprintf("no question is waiting under the call's requestState: it was answered already, "+
		"went unanswered for %s (and the call was cancelled), or was issued to another client; call the tool again", r.timeout)
}

// sameArgs reports whether two JSON argument objects are equal, whatever
// their key order and spacing.
func sameArgs(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// watch cancels the calls of a client whose connection ends.
func (r *relay) watch(ss *mcp.ServerSession) {
	_ = ss.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.watched, ss)
	for token, c := range r.held {
		if c.owner.session == ss {
			delete(r.held, token)
			c.token = ""
			c.timer.Stop()
		}
	}
	for c := range r.calls {
		if c.owner.session == ss {
			c.cancel()
		}
	}
}

// close cancels every held and running call, and ends the idle workers.
// It is idempotent.
func (r *relay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		close(r.pool.quit)
	}
	r.closed = true
	for token, c := range r.held {
		delete(r.held, token)
		c.token = ""
		c.timer.Stop()
		c.cancel()
	}
	for c := range r.calls {
		c.cancel()
	}
}

// counts returns how many calls are held for an answer and how many host
// calls are running (for tests).
func (r *relay) counts() (held, running int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.held), len(r.calls)
}

// idleWorkers returns how many workers wait for a host call (for tests).
func (r *relay) idleWorkers() int { return int(r.pool.idle.Load()) }

// full reports whether maxHeldQuestions calls already wait for answers,
// or maxHeldPerClient of client who's.
func (r *relay) full(who owner) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.held) >= maxHeldQuestions {
		return true
	}
	n := 0
	for _, c := range r.held {
		if c.owner == who {
			n++
		}
	}
	return n >= maxHeldPerClient
}

// elicit puts an upstream server's question to the client and waits for
// the answer. The question names the server that asks.
func (c *heldCall) elicit(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return c.put(ctx, server, attributedParams(server, params))
}

// put puts a question, as it is to be shown, to the client and waits for
// the answer; server names whom it is about, for the log.
func (c *heldCall) put(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if c.r.full(c.owner) {
		c.r.log.Warn("too many questions wait for an answer (of this client, or in all); a question was declined", "server", server, "tool", c.name)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	c.mu.Lock()
	c.seq++
	q := &question{key: fmt.Sprintf("%s%d", upstreamInputPrefix, c.seq), params: params, answer: make(chan *mcp.ElicitResult, 1)}
	c.questions = append(c.questions, q)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	defer c.remove(q)
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// attributed prefixes every line of a server's question with its name,
// so the user knows who asks, and so that no line of a multi-line message
// can pass for one of the gateway's own questions ("Allow … ?").
//
// Every character a client may break a line at counts: a lone CR (which a
// terminal returns to the start of the line with, over the name), a
// vertical tab, a form feed, NEL and the Unicode line and paragraph
// separators are made newlines first, each starting a line of its own.
func attributed(server, msg string) string {
	lines := strings.Split(lineBreaks.Replace(msg), "\n")
	for i, l := range lines {
		lines[i] = "[" + server + "] " + l
	}
	return strings.Join(lines, "\n")
}

// lineBreaks makes every line break a client may honour a newline.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n",
	"\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// attributedParams is params with its message and its form's words
// attributed (a copy: params is the server's).
func attributedParams(server string, params *mcp.ElicitParams) *mcp.ElicitParams {
	shown := *params
	shown.Message = attributed(server, params.Message)
	shown.RequestedSchema = attributedForm(server, params.RequestedSchema)
	return &shown
}

// attributedForm returns a question's form with every text a client shows
// of it attributed as the message is: each field's title — its name when
// it has none, since a client then shows the name — and description, and
// the titles of its choices (enumNames, oneOf and anyOf titles, a
// multi-select's items'). A field's title is the line a client shows
// beside the answer box: unattributed, "Switchboard: type your GitHub
// token to allow this call" read as the gateway's own. Property names,
// values and everything else are left as they are (the answer must match
// them); the form is a copy, schema is never modified.
func attributedForm(server string, schema any) any {
	form, ok := schema.(map[string]any)
	if !ok {
		if schema == nil {
			return nil
		}
		b, err := json.Marshal(schema)
		if err != nil || json.Unmarshal(b, &form) != nil || form == nil {
			return schema
		}
	}
	props, ok := form["properties"].(map[string]any)
	if !ok {
		return schema
	}
	out := make(map[string]any, len(form))
	for k, v := range form {
		out[k] = v
	}
	shown := make(map[string]any, len(props))
	for name, p := range props {
		field, ok := p.(map[string]any)
		if !ok {
			shown[name] = p
			continue
		}
		f := attributedTexts(server, field)
		if t, _ := field["title"].(string); t == "" {
			f["title"] = attributed(server, name)
		}
		if items, ok := field["items"].(map[string]any); ok {
			f["items"] = attributedTexts(server, items)
		}
		shown[name] = f
	}
	out["properties"] = shown
	return out
}

// attributedTexts is a copy of one field's schema with its title,
// description and choices' titles attributed.
func attributedTexts(server string, field map[string]any) map[string]any {
	f := make(map[string]any, len(field)+1)
	for k, v := range field {
		f[k] = v
	}
	for _, k := range []string{"title", "description"} {
		if t, ok := field[k].(string); ok && t != "" {
			f[k] = attributed(server, t)
		}
	}
	if names, ok := field["enumNames"].([]any); ok {
		shown := make([]any, len(names))
		for i, n := range names {
			if t, ok := n.(string); ok {
				n = attributed(server, t)
			}
			shown[i] = n
		}
		f["enumNames"] = shown
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		choices, ok := field[k].([]any)
		if !ok {
			continue
		}
		shown := make([]any, len(choices))
		for i, c := range choices {
			if cm, ok := c.(map[string]any); ok {
				if t, ok := cm["title"].(string); ok && t != "" {
					cc := make(map[string]any, len(cm))
					for k2, v2 := range cm {
						cc[k2] = v2
					}
					cc["title"] = attributed(server, t)
					c = cc
				}
			}
			shown[i] = c
		}
		f[k] = shown
	}
	return f
}

func (c *heldCall) remove(q *question) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.questions {
		if x == q {
			c.questions = append(c.questions[:i:i], c.questions[i+1:]...)
			return
		}
	}
}

// unanswered returns the questions waiting for an answer, marking them
// seen by the client; a question the last retry left unanswered is asked
// again.
func (c *heldCall) unanswered() mcp.InputRequestMap {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m mcp.InputRequestMap
	for _, q := range c.questions {
		if q.answered {
			continue
		}
		if m == nil {
			m = mcp.InputRequestMap{}
		}
		q.sent = true
		m[q.key] = q.params
	}
	return m
}

// deliver hands the answers of a retry to the questions the client was
// shown. Answers to anything else are ignored.
func (c *heldCall) deliver(responses mcp.InputResponseMap) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.questions {
		if !q.sent || q.answered {
			continue
		}
		r, ok := responses[q.key].(*mcp.ElicitResult)
		if !ok || r == nil {
			continue
		}
		q.answered = true
		q.answer <- cleanAnswer(r)
	}
}

// cleanAnswer passes on an answer the upstream server can rely on: an
// action it knows, and content only with accept.
func cleanAnswer(r *mcp.ElicitResult) *mcp.ElicitResult {
	switch r.Action {
	case "accept":
		return &mcp.ElicitResult{Action: "accept", Content: r.Content}
	case "cancel":
		return &mcp.ElicitResult{Action: "cancel"}
	default:
		return &mcp.ElicitResult{Action: "decline"}
	}
}

// attach sends the call's progress to the request now waiting for it.
func (c *heldCall) attach(ctx context.Context, req *mcp.CallToolRequest) {
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		return
	}
	c.mu.Lock()
	c.sink = &progressSink{ctx: ctx, ss: req.Session, token: tok}
	c.mu.Unlock()
}

// detach stops progress while no request waits for the call.
func (c *heldCall) detach() {
	c.mu.Lock()
	c.sink = nil
	c.mu.Unlock()
}

func (c *heldCall) progress(p *mcp.ProgressNotificationParams) {
	c.mu.Lock()
	s := c.sink
	c.mu.Unlock()
	if s == nil {
		return
	}
	if err := forwardProgress(s.ctx, s.ss, s.token, p); err != nil {
		c.r.log.Debug("progress not forwarded", "tool", c.name, "error", err)
	}
}
