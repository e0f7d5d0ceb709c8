package gateway

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK sends a list_changed to its sessions one after another, each
// write on the caller's goroutine (mcp.notifySessions, go-sdk v1.8.0
// mcp/shared.go; the write itself is streamableServerConn.Write →
// stream.deliverLocked, which writes and flushes the stream's
// ResponseWriter). A session whose client stopped reading its standalone
// stream holds that write until the write's deadline — and so every
// session after it, for every change, since the next round waits on the
// same session's write lock. notifyApart, a sending middleware, takes each
// list_changed off that loop: it is queued for its session and sent by a
// goroutine of that session's, so that a stuck stream holds up its own
// session only. A session's queue holds at most one list_changed of each
// kind (another change of a kind already waiting adds nothing: the client
// lists again either way), so a stuck session costs one goroutine and
// three flags, however many changes come.

// listKinds are the notifications queued apart, by their bit.
var listKinds = [...]string{
	"notifications/tools/list_changed",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
}

// notifyWait bounds the sending of one queued notification, as the SDK
// bounds its loop (10 s); the write itself has the stream's write deadline.
const notifyWait = 10 * time.Second

type notifyApart struct {
	log *slog.Logger // the SDK's warning's logger (quietNotifications)
	mu  sync.Mutex
	q   map[mcp.Session]*notifyQueue
}

// notifyQueue is what waits for one session: a request per kind, and
// whether its goroutine runs.
type notifyQueue struct {
	reqs [len(listKinds)]mcp.Request
}

func newNotifyApart(log *slog.Logger) *notifyApart {
	return &notifyApart{log: log, q: map[mcp.Session]*notifyQueue{}}
}

func (n *notifyApart) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		kind := -1
		for i, m := range listKinds {
			if m == method {
				kind = i
				break
			}
		}
		if kind < 0 || req == nil || req.GetSession() == nil {
			return next(ctx, method, req)
		}
		s := req.GetSession()
		n.mu.Lock()
		q, running := n.q[s]
		if !running {
			q = &notifyQueue{}
			n.q[s] = q
		}
		q.reqs[kind] = req
		n.mu.Unlock()
		if !running {
			go n.drain(s, q, next)
		}
		return nil, nil
	}
}

// drain sends what waits for session s until nothing does.
func (n *notifyApart) drain(s mcp.Session, q *notifyQueue, next mcp.MethodHandler) {
	for {
		n.mu.Lock()
		kind := -1
		var req mcp.Request
		for i, r := range q.reqs {
			if r != nil {
				kind, req = i, r
				q.reqs[i] = nil
				break
			}
		}
		if kind < 0 {
			delete(n.q, s)
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), notifyWait)
		_, err := next(ctx, listKinds[kind], req)
		cancel()
		if err != nil && n.log != nil {
			// Worded as the SDK's own ("calling notifications/…"), which
			// quietNotifications limits; the details are attributes.
			n.log.Warn("calling notifications/*/list_changed failed", "method", listKinds[kind], "error", err)
		}
	}
}
