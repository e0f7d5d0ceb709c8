package gateway

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Defaults of the bounds on what clients hold of the MCP endpoint
// (HTTPOptions; serve --http's flags).
const (
	// DefaultMaxCalls caps the requests of one endpoint in flight at once
	// (--max-calls): each holds a goroutine and a connection, and a call
	// a session. An interactive client has a few at a time, an agent with
	// subagents some tens.
	DefaultMaxCalls = 1024
	// DefaultWriteTimeout bounds one write of an answer to its client
	// (--write-timeout): a client that stops reading loses the answer and
	// its connection instead of holding them.
	DefaultWriteTimeout = 30 * time.Second
)

// callLimit bounds, in front of both the fast path and the SDK's
// handler, the POSTs in flight — all of them, and a team member's — and
// the time one write of any answer may take. A POST past a bound is
// answered 429 with Retry-After and a JSON-RPC error, unless it holds no
// request.
type callLimit struct {
	next  http.Handler
	max   int
	share int // a member's; 0: none below max
	write time.Duration
	body  time.Duration
	log   *slog.Logger

	mu sync.Mutex
	n  int
	by map[string]int
}

func newCallLimit(next http.Handler, o *HTTPOptions) *callLimit {
	return &callLimit{next: next, max: o.MaxCalls, share: o.MaxCallsPerPrincipal, write: o.WriteTimeout, body: o.BodyTimeout, log: o.Logger, by: map[string]int{}}
}

func (c *callLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bw := &writeBound{ResponseWriter: w, rc: *http.NewResponseController(w), wait: c.write}
	if r.Method == http.MethodPost {
		user, shared := principalID(r), member(r)
		if why := c.take(user, shared); why != "" {
			// A POST of answers and notifications only (the answer to
			// a question of a call in flight, a cancellation) is passed
			// uncounted: it is answered at once, and the calls that hold
			// the room may wait for it.
			body, ok := readPostBody(w, r, c.body, c.log)
			if !ok {
				return
			}
			setPostBody(r, body)
			if !holdsRequest(body) {
				c.next.ServeHTTP(bw, r)
				bw.bound()
				return
			}
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			bw.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":%q}}`+"\n", why)
			return
		}
		defer c.put(user, shared)
	}
	c.next.ServeHTTP(bw, r)
	// What net/http writes once the handler returns (the rest of its
	// buffer, the last chunk) is bounded too.
	bw.bound()
}

// holdsRequest reports whether body holds a JSON-RPC request (a message
// with both a method and an ID), or is not JSON-RPC at all.
func holdsRequest(body []byte) bool {
	msgs := decodeMessages(body)
	if len(msgs) == 0 {
		return true
	}
	for _, m := range msgs {
		if m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
			return true
		}
	}
	return false
}

// take counts a request of user in; the refusal's words if a bound is
// reached.
func (c *callLimit) take(user string, member bool) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.max {
		return fmt.Sprintf("too many calls in flight: the gateway answers at most %d at once (serve --max-calls); try again shortly", c.max)
	}
	if member {
		if c.by[user] >= c.share {
			return fmt.Sprintf("too many calls in flight: %s has %d, its share of the gateway's calls (serve --max-calls-per-principal); try again once one is answered", user, c.share)
		}
		c.by[user]++
	}
	c.n++
	return ""
}

func (c *callLimit) put(user string, member bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if member {
		if c.by[user]--; c.by[user] <= 0 {
			delete(c.by, user)
		}
	}
}

// writeBound sets the connection's write deadline before each write and
// flush of an answer: a client that stops reading fails the write within
// wait, and the handler (the SDK's, or a stream's) lets go of it. While
// nothing is written there is no bound, so a call may take as long as it
// takes and a stream may stay quiet.
type writeBound struct {
	http.ResponseWriter
	rc   http.ResponseController
	wait time.Duration
}

func (w *writeBound) bound() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.wait)) }

func (w *writeBound) Write(b []byte) (int, error) {
	w.bound()
	return w.ResponseWriter.Write(b)
}

func (w *writeBound) Flush() { _ = w.FlushError() }

func (w *writeBound) FlushError() error {
	w.bound()
	return w.rc.Flush()
}

func (w *writeBound) Unwrap() http.ResponseWriter { return w.ResponseWriter }
