package host

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// Prompter answers a server's elicitation requests on behalf of the user.
// The CLI implements it on a terminal and declines when headless;
// the gateway forwards to its own client. Elicit may wait for a person
// until ctx is done: it is done when the call that led to the question
// ends, and when the server stops or restarts or the Host closes.
type Prompter interface {
	Elicit(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// Decliner is a Prompter that declines every request: the headless answer.
type Decliner struct{}

// Elicit declines.
func (Decliner) Elicit(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// newClient builds the SDK client for one connection. Capabilities are
// empty unless the host really serves them: roots only with roots to give,
// elicitation only with a Prompter, and never sampling (always refused).
func (s *server) newClient(c *conn) *mcp.Client {
	h := s.h
	caps := &mcp.ClientCapabilities{}
	if len(h.opts.Roots) > 0 {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	opts := &mcp.ClientOptions{
		Capabilities: caps,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.tools.invalidate()
			h.emit(Event{Kind: EventToolsChanged, Server: s.name})
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			s.prompts.invalidate()
			h.emit(Event{Kind: EventPromptsChanged, Server: s.name})
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			s.resources.invalidate()
			s.templates.invalidate() // resources/list_changed covers templates
			h.emit(Event{Kind: EventResourcesChanged, Server: s.name})
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			// A server may log what it was given: the secret values the
			// host knows are replaced, as in its results (Set.Known), in
			// every field an embedder may print — its data's keys and
			// _meta too: nothing sends them back.
			p := *req.Params
			p.Logger, _ = h.secrets.Known(p.Logger)
			level, _ := h.secrets.Known(string(p.Level))
			p.Level = mcp.LoggingLevel(level)
			p.Data = h.knownJSON(p.Data)
			p.Meta, _ = h.knownMeta(p.Meta)
			if dropped, ok := s.logLines.take(h.clock.Now()); ok {
				if dropped > 0 {
					h.log.Warn("server log messages not logged: the server sent more than the log takes", "server", s.name,
						"dropped", dropped, "limit_per_second", serverLogPerSecond)
				}
				h.log.Info("server log", "server", s.name, "level", string(p.Level), "logger", toolsurface.CapDescription(oneLine(p.Logger), maxLoggerRunes))
			}
			h.emit(Event{Kind: EventLog, Server: s.name, Log: &p})
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			p := h.guardProgress(req.Params)
			h.progress.deliver(s.name, p)
			h.emit(Event{Kind: EventProgress, Server: s.name, Progress: p})
		},
	}
	if h.opts.Prompter != nil {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			// Asked of nobody: a question naming a secret value (secretnames.go),
			// one the specification forbids, or one nobody's call led to
			// (question.go).
			why := "a name in its form, or its id, holds a secret value Switchboard gave a server"
			q, ok := h.guardQuestion(req.Params)
			if ok {
				why = refuseQuestion(q, ctx.Value(inCallKey{}) != nil || s.calls.running())
			}
			if why != "" {
				h.log.Warn("declined a server's question without asking", "server", s.name, "why", why)
				if n, ok := h.opts.Prompter.(QuestionRefusalNoter); ok {
					n.QuestionRefused(ctx, s.name, why)
				}
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			qctx, stop := s.questionContext(ctx)
			defer stop()
			qctx, stopRun := s.untilHalted(qctx)
			defer stopRun()
			return h.opts.Prompter.Elicit(qctx, s.name, q)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: h.opts.ClientName, Version: h.opts.ClientVersion}, opts)
	for _, r := range h.opts.Roots {
		client.AddRoots(&mcp.Root{URI: fileURI(r), Name: baseName(r)})
	}
	return client
}

// serverLogPerSecond bounds the "server log" lines one server gets into
// the host's log (a file that is not rotated) in a second, and
// maxLoggerRunes the logger name each carries: a server's notifications
// are its own to send, but 2,000 of them with a 100 KB logger name once
// wrote 200 MB to ~/.switchboard/logs/switchboard.log in 8 s, and a
// long-running gateway's disk was the server's to fill.
const (
	serverLogPerSecond = 50
	maxLoggerRunes     = 200
)

// logLimiter lets serverLogPerSecond lines through in each second and
// counts the rest.
type logLimiter struct {
	mu      sync.Mutex
	window  time.Time
	n       int
	dropped int
}

// take reports whether a line may be logged at now, and how many were
// dropped since the last one that was (to be logged with it).
func (l *logLimiter) take(now time.Time) (dropped int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.window) >= time.Second || now.Before(l.window) {
		l.window, l.n = now, 0
	}
	if l.n >= serverLogPerSecond {
		l.dropped++
		return 0, false
	}
	l.n++
	dropped, l.dropped = l.dropped, 0
	return dropped, true
}

// ProgressFunc receives progress notifications for one call.
type ProgressFunc func(*mcp.ProgressNotificationParams)

type progressKey struct{}

// WithProgress returns a context whose calls ask the server for progress
// notifications and deliver them to fn.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// progressRouter hands progress notifications to the call that asked.
//
// The SDK hands notifications to their handler concurrently with the
// responses it reads after them, so a call could return before the progress
// its server sent first had been delivered (for a fast call, often all of
// it), and the late notifications were dropped with the call's token. The
// host counts each call's progress notifications as they are read, in wire
// order (noteRead: probeConn over stdio, progressScanTransport over HTTP),
// and the call waits, briefly, until as many have been delivered (settle)
// before it returns.
//
// Tokens are numbered in sequence for every server of the host, so a
// server could name the token of another server's call: each token is
// registered for the server its call went to, and a notification counts
// and is delivered only when it came from that server.
type progressRouter struct {
	next    atomic.Int64
	mu      sync.Mutex
	fns     map[int64]progressCall
	pending map[int64]int           // read off the wire, not yet delivered
	settled map[int64]chan struct{} // closed when pending reaches 0
}

// progressSettle bounds how long a call waits for its progress
// notifications already read to be delivered.
const progressSettle = 250 * time.Millisecond

func newProgressRouter() *progressRouter {
	return &progressRouter{fns: map[int64]progressCall{}, pending: map[int64]int{}, settled: map[int64]chan struct{}{}}
}

// progressCall is a registered call: the server it went to, and where its
// progress goes.
type progressCall struct {
	server string
	fn     ProgressFunc
}

// register gives a call to server a token for its progress.
func (r *progressRouter) register(server string, fn ProgressFunc) (token int64, unregister func()) {
	token = r.next.Add(1)
	r.mu.Lock()
	r.fns[token] = progressCall{server, fn}
	r.mu.Unlock()
	return token, func() {
		r.mu.Lock()
		delete(r.fns, token)
		delete(r.pending, token)
		if ch := r.settled[token]; ch != nil {
			close(ch)
			delete(r.settled, token)
		}
		r.mu.Unlock()
	}
}

// progressToken reads the router's token from a notification's token.
func progressToken(t any) (int64, bool) {
	switch t := t.(type) {
	case float64:
		return int64(t), true
	case int64:
		return t, true
	case int:
		return int64(t), true
	}
	return 0, false
}

// noteRead counts a progress notification read from server for a call
// registered to it.
func (r *progressRouter) noteRead(server string, token any) {
	tok, ok := progressToken(token)
	if !ok {
		return
	}
	r.mu.Lock()
	if c, live := r.fns[tok]; live && c.server == server {
		r.pending[tok]++
	}
	r.mu.Unlock()
}

// noteMessage counts msg, read from server, as read (noteRead) if it is a
// progress notification: the one test of "is this a call's progress" for
// every transport.
func (r *progressRouter) noteMessage(server string, msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "notifications/progress" {
		return
	}
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(req.Params, &p) == nil {
		r.noteRead(server, p.Token)
	}
}

// settle waits until every progress notification read for token has been
// delivered, at most until bound fires.
func (r *progressRouter) settle(token int64, bound <-chan time.Time) {
	r.mu.Lock()
	if r.pending[token] == 0 {
		r.mu.Unlock()
		return
	}
	ch := r.settled[token]
	if ch == nil {
		ch = make(chan struct{})
		r.settled[token] = ch
	}
	r.mu.Unlock()
	select {
	case <-ch:
	case <-bound:
	}
}

// deliver hands p, sent by server, to the call of its token, if that call
// went to server: another server's notification for it is dropped.
func (r *progressRouter) deliver(server string, p *mcp.ProgressNotificationParams) {
	tok, ok := progressToken(p.ProgressToken)
	if !ok {
		return
	}
	r.mu.Lock()
	c := r.fns[tok]
	r.mu.Unlock()
	if c.server != server {
		return // not counted either (noteRead)
	}
	if c.fn != nil {
		c.fn(p)
	}
	r.mu.Lock()
	if r.pending[tok] > 0 {
		r.pending[tok]--
		if r.pending[tok] == 0 {
			if ch := r.settled[tok]; ch != nil {
				close(ch)
				delete(r.settled, tok)
			}
		}
	}
	r.mu.Unlock()
}
