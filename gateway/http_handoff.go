package gateway

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handing a fast call over to the SDK when it asks, or when it reports
// progress (issue 36). A session on a protocol before 2026-07-28 whose
// client declared elicitation (VS Code's kind) can be asked a question
// during any call: the gateway's permission question, a changed tool's,
// an upstream server's. Over HTTP that question is an elicitation/create
// on the call's own SSE stream, and the client's answer a POST the SDK
// matches to it: only the SDK's handler relates a message to the request
// it belongs to. Most calls ask nothing, so such a session's calls take
// the fast path too, and the first question of one hands the call's
// request over to the SDK's handler: the same POST (its body, kept in
// memory) is served by the SDK on the same response, which has had
// nothing written to it yet. The SDK's tools/call handler for it does not
// run the call again — an outermost receiving middleware (takeHandoff)
// finds the call by a header only the gateway sets, hands its context and
// session to the call, and waits for the call's result, which it returns
// as the SDK's answer. The call goes on where it was, on the fast path's
// goroutine (or its relay worker); its questions are asked with
// ServerSession.Elicit under the SDK request's context, so that the SDK
// writes them on that request's stream, and the call's answer follows
// them there. A call that asks takes the SDK's path after all, from its
// first question on; one that asks nothing never leaves the fast path.
// A call that carries a progress token (VS Code and Claude Code send one
// with every call), in a session or as a stateless 2026-07-28 request
// (whose session the SDK makes for the handed-over request), is handed
// over the same way at its first progress notification.

// handoffHeader is the request header that names a handed-over call;
// httpLife removes it from every request it gets.
const handoffHeader = "X-Switchboard-Handoff"

// handoff is one fast call that may be handed over: of a session whose
// client can be asked, or with a progress token.
type handoff struct {
	l      *httpLife
	w      http.ResponseWriter
	r      *http.Request
	body   []byte
	sid    string
	cancel func() // cancels the call

	once  sync.Once
	begun bool               // the SDK's handler was started on the request
	hctx  context.Context    // the SDK request's context; nil if the handover failed
	hss   *mcp.ServerSession // the SDK's session of the request (a stateless request's own)
	err   error
	// Made when the handover starts (most calls never hand over):
	attached chan attachment    // the SDK's handler: its request's context and session
	answer   chan handoffAnswer // the call's answer, for the SDK's handler
	served   chan struct{}      // closed when the SDK's handler returns
}

// newHandoff is a fast call's handoff, and ctx carrying it (toClient
// finds it there): the request r with its body, in session sid ("" for a
// stateless request). Its cancel cancels ctx itself, not the call's
// cancellation key, which another client's call may share (calls.keys).
func (l *httpLife) newHandoff(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte, sid string) (*handoff, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	ho := &handoff{l: l, w: w, r: r, body: body, sid: sid, cancel: func() { cancel(errClientCancelled) }}
	return ho, context.WithValue(ctx, handoffKey{}, ho)
}

type attachment struct {
	ctx context.Context
	ss  *mcp.ServerSession
}

type handoffAnswer struct {
	res mcp.Result
	err error
}

type handoffKey struct{}

func handoffFrom(ctx context.Context) *handoff {
	ho, _ := ctx.Value(handoffKey{}).(*handoff)
	return ho
}

// toClient is where a message of a call goes to the client of ss: ss
// and ctx, or, if ctx belongs to a fast call that can be handed over, the
// SDK's session and context of the handed-over request, so that the SDK
// writes the message on that request's stream (the first message hands
// the call over).
func toClient(ctx context.Context, ss *mcp.ServerSession) (*mcp.ServerSession, context.Context, error) {
	if ho := handoffFrom(ctx); ho != nil {
		return ho.start(ctx)
	}
	return ss, ctx, nil
}

// askClient puts a question to the client of ss with the SDK's
// ServerSession.Elicit, where toClient says.
func askClient(ctx context.Context, ss *mcp.ServerSession, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ss, ctx, err := toClient(ctx, ss)
	if err != nil {
		return nil, err
	}
	return ss.Elicit(ctx, params)
}

// forwardProgress sends a server's progress notification p of a call to
// the client of ss under the client's token, where toClient says.
func forwardProgress(ctx context.Context, ss *mcp.ServerSession, token any, p *mcp.ProgressNotificationParams) error {
	ss, ctx, err := toClient(ctx, ss)
	if err != nil {
		return err
	}
	fwd := *p
	fwd.ProgressToken = token
	fwd.Meta = nil
	return ss.NotifyProgress(ctx, &fwd)
}

// errHandoff is the question's error when the SDK did not take the
// handed-over request (its session ended meanwhile, say): its answer to
// the request is the client's.
var errHandoff = errors.New("the call's request could not be handed to the SDK for its question")

// errHandoffOver is the error of a question or a notification that comes
// after the call's answer was written.
var errHandoffOver = errors.New("the call's request was answered already")

// start hands the call's request over to the SDK's handler, once, and
// returns the SDK's session of the request (the same session, but for a
// stateless request, which the SDK gives one of its own) and the context
// to send on it: ctx, with the SDK request's values for what ctx does not
// hold (joinedContext).
func (ho *handoff) start(ctx context.Context) (*mcp.ServerSession, context.Context, error) {
	ho.once.Do(func() {
		if ho.err = ctx.Err(); ho.err != nil {
			return // the call is over: nothing more goes to its client
		}
		g := ho.l.g
		ho.attached, ho.answer, ho.served = make(chan attachment, 1), make(chan handoffAnswer, 1), make(chan struct{})
		tok := randomToken()
		g.calls.mu.Lock()
		if g.handoffs == nil {
			g.handoffs = map[string]*handoff{}
		}
		g.handoffs[tok] = ho
		g.calls.mu.Unlock()
		r := ho.r.Clone(ho.r.Context())
		r.Header.Set(handoffHeader, tok)
		setPostBody(r, ho.body)
		w, r, release := g.BindHTTP(ho.w, r)
		// The questions' withdrawals are seen on the SDK's response now.
		if lc := liveCallFrom(ctx); lc != nil {
			lc.withdrawn = w.(*watchedWriter).withdrawn
		}
		ho.begun = true
		go func() {
			defer close(ho.served)
			defer release()
			ho.l.next.ServeHTTP(w, r)
		}()
		select {
		case a := <-ho.attached:
			ho.hctx, ho.hss = a.ctx, a.ss
			g.handedOver.Add(1)
		case <-ho.served:
			ho.err = errHandoff
		case <-ctx.Done():
			ho.err = ctx.Err()
		}
		if ho.hctx == nil {
			g.calls.mu.Lock()
			delete(g.handoffs, tok)
			g.calls.mu.Unlock()
		}
	})
	if ho.err != nil {
		return nil, nil, ho.err
	}
	if ho.hctx == nil {
		return nil, nil, errHandoffOver
	}
	return ho.hss, joinedContext{Context: ctx, values: ho.hctx}, nil
}

// finish reports whether the call was handed over; if it was, its answer
// goes to the SDK's handler, and finish returns once the SDK has written
// it.
func (ho *handoff) finish(res mcp.Result, err error) bool {
	ho.once.Do(func() {}) // nothing more is started after this
	if !ho.begun {
		return false
	}
	ho.answer <- handoffAnswer{res, err}
	<-ho.served
	return true
}

// takeHandoff is the SDK server's outermost receiving middleware: a
// tools/call that is a handed-over call's request (handoffHeader, in the
// same session; a stateless request's has no ID, as the fast call's) is
// not run again; its handler waits for the call's
// answer, and cancels the call if its request is cancelled.
func (g *Gateway) takeHandoff(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		ex := req.GetExtra()
		var tok string
		if ex != nil && ex.Header != nil {
			tok = ex.Header.Get(handoffHeader)
		}
		if tok == "" {
			return next(ctx, method, req)
		}
		g.calls.mu.Lock()
		ho := g.handoffs[tok]
		delete(g.handoffs, tok)
		g.calls.mu.Unlock()
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ho == nil || ss == nil || ss.ID() != ho.sid {
			// Nobody but the gateway sets the header: not a call to run.
			return nil, errHandoff
		}
		ho.attached <- attachment{ctx, ss}
		select {
		case a := <-ho.answer:
			return a.res, a.err
		case <-ctx.Done():
			ho.cancel()
			a := <-ho.answer
			return a.res, a.err
		}
	}
}

// joinedContext is the context of a handed-over call's question: the
// call's own (its cancellation, deadline and values) and, for what it
// does not hold, the SDK request's values, by which the SDK relates the
// question to that request's stream.
type joinedContext struct {
	context.Context
	values context.Context
}

func (c joinedContext) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}
