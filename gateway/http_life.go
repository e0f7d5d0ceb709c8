package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the HTTP handler's robustness options (HTTPOptions; serve
// --http's flags).
const (
	// DefaultMaxSessions caps live HTTP sessions (--max-sessions). An
	// idle session with its standalone SSE stream open costs the serve
	// process ~45 KiB (docs/benchmarks.md, issue 36), so the cap bounds
	// them near 45 MiB; clients that leave without DELETE leave theirs
	// behind until the idle timeout.
	DefaultMaxSessions = 1000
	// DefaultSessionIdleTimeout ends a session with no request for this
	// long (--session-idle-timeout).
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultBodyTimeout bounds the reading of a request's body
	// (--body-timeout); the headers have the server's ReadHeaderTimeout.
	DefaultBodyTimeout = 10 * time.Second
)

const sessionIDHeader = "Mcp-Session-Id"

// httpLife sits between the guard and the SDK's handler. It
//
//   - reads a POST's body within BodyTimeout (a client that trickles it is
//     answered 408 and its connection closed), without a deadline on what
//     follows, so SSE streams live on;
//   - ties each POST's calls to it (BindHTTP): a client that drops
//     the connection mid-call has the call cancelled;
//   - cancels a session's calls on its DELETE before the SDK closes it
//     (which would wait for them);
//   - when stateless, where a client's notifications/cancelled arrives in
//     a request of its own, finds the call it names;
//   - caps live sessions: past MaxSessions a new one ends the session idle
//     longest, or is refused (503) when every session is busy; a team
//     member past MaxSessionsPerPrincipal ends its own idle longest, or is
//     refused when every one of its own is busy.
type httpLife struct {
	g         *Gateway
	next      http.Handler
	stateless bool
	body      time.Duration
	write     time.Duration // HTTPOptions.WriteTimeout, for streams
	log       *slog.Logger
	sessions  *sessionCap // nil when stateless
	// sdkOnly sends every request to the SDK's handler: no fast path
	// (HTTPOptions.SDKOnly).
	sdkOnly bool
}

func newHTTPLife(g *Gateway, next http.Handler, stateless bool, opts *HTTPOptions, log *slog.Logger) *httpLife {
	l := &httpLife{g: g, next: next, stateless: stateless, body: opts.BodyTimeout, write: opts.WriteTimeout, log: log, sdkOnly: opts.SDKOnly}
	if !stateless {
		n := opts.MaxSessions
		l.sessions = &sessionCap{max: n, share: opts.MaxSessionsPerPrincipal, live: map[string]*liveSession{}, pendingBy: map[string]int{},
			srv: g.Server(), g: g, log: log, timeout: opts.SessionIdleTimeout}
	}
	return l
}

func (l *httpLife) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(CarrierHeader) // only BindHTTP sets it
	r.Header.Del(handoffHeader) // only a handoff sets it
	sid := r.Header.Get(sessionIDHeader)
	switch r.Method {
	case http.MethodDelete:
		if l.sessions == nil || sid == "" {
			l.next.ServeHTTP(w, r)
			return
		}
		// Only the session's own principal ends it: the SDK refuses
		// another's DELETE (403), and its calls must not be cancelled
		// before it does. The owner's are cancelled first, so that the
		// DELETE is answered at once.
		owner := l.sessions.owns(sid, principalID(r))
		if owner {
			l.g.CancelSession(sid)
			// No call of the session takes the fast path from now on;
			// if the SDK ends it, its entry goes.
			l.sessions.closing(sid, true)
		}
		sw := &statusWriter{ResponseWriter: w}
		l.next.ServeHTTP(sw, r)
		gone := sw.status == http.StatusNoContent
		if gone && !owner {
			// A session the SDK ended that had no entry here yet.
			l.g.CancelSession(sid)
		}
		if owner || gone {
			l.sessions.deleted(sid, gone)
		}
		return
	case http.MethodPost:
	case http.MethodGet:
		if l.sessions != nil && sid != "" && !l.sdkOnly && l.serveStream(w, r, sid) {
			return
		}
		fallthrough
	default:
		if l.sessions != nil && sid != "" {
			l.sessions.begin(sid, false)
			defer l.sessions.end(sid, false)
		}
		l.next.ServeHTTP(w, r)
		return
	}
	body, ok := readPostBody(w, r, l.body, l.log)
	if !ok {
		return
	}
	setPostBody(r, body)
	if !l.batchTaken(w, r, sid, body) {
		return
	}
	var keys []string
	if l.stateless {
		keys = l.statelessCancels(r, body)
		if !l.sdkOnly && l.fastStateless(w, r, body, keys) {
			return
		}
	}
	if l.sessions != nil && sid != "" && !l.sdkOnly {
		if l.fastCall(w, r, sid, body) {
			return
		}
		l.fastCancels(r, sid, body)
	}
	if l.sessions != nil {
		if sid == "" {
			switch l.sessions.admit(principalID(r), member(r)) {
			case refusedBusy:
				w.Header().Set("Retry-After", "5")
				http.Error(w, "too many sessions: every one is busy (serve --max-sessions)", http.StatusServiceUnavailable)
				return
			case refusedShare:
				w.Header().Set("Retry-After", "5")
				http.Error(w, fmt.Sprintf("too many sessions: %s holds %d, its share of the gateway's sessions, and every one is busy; end one (DELETE) or wait (serve --max-sessions-per-principal)",
					principalID(r), l.sessions.share), http.StatusServiceUnavailable)
				return
			}
			// Recorded as the answer starts, before the client can read
			// its session ID: its next request (the standalone stream's
			// GET, at once) finds the session live.
			cw := &createdWriter{ResponseWriter: w, c: l.sessions, userID: principalID(r)}
			defer cw.record()
			w = cw
		} else {
			l.sessions.begin(sid, true)
			defer l.sessions.end(sid, true)
		}
	}
	w, r, release := l.g.BindHTTP(w, r, keys...)
	defer release()
	l.next.ServeHTTP(w, r)
}

// maxBatch is the most messages one JSON-RPC batch may hold (protocols
// before 2025-06-18 have batches): the SDK would run every call of a 4 MiB
// batch at once, some 20,000 from one request.
const maxBatch = 64

// batchTaken reports whether r's body, body, is not a batch, or one the
// gateway takes; otherwise it answers 400 as the SDK refuses a batch. A
// batch may hold at most maxBatch messages, and none is taken in a session
// whose protocol has none (2025-06-18 and later), whatever the request's
// Mcp-Protocol-Version says: the SDK asks only that header, which its
// client chooses.
func (l *httpLife) batchTaken(w http.ResponseWriter, r *http.Request, sid string, body []byte) bool {
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) == 0 || b[0] != '[' {
		return true
	}
	if n := len(postMessages(r, body)); n > maxBatch {
		http.Error(w, fmt.Sprintf("JSON-RPC batch of %d messages: at most %d are taken in one request", n, maxBatch), http.StatusBadRequest)
		return false
	}
	if l.sessions == nil || sid == "" {
		return true
	}
	if v := l.sessions.protocol(sid, principalID(r)); v >= "2025-06-18" {
		http.Error(w, fmt.Sprintf("JSON-RPC batching is not supported in 2025-06-18 and later (session version: %s)", v), http.StatusBadRequest)
		return false
	}
	return true
}

// postBody is a POST's body read whole into memory (by readPostBody, or by
// BindHTTP for a handler that had not): the handlers further in read it
// from memory, readPostBody does not read it again (a scale-out gateway's
// router reads it before the handler it routes to), and its messages are
// decoded once (postMessages).
type postBody struct {
	*bytes.Reader
	data []byte
	// msgs are data's messages once postParse has read them; params
	// are the params of its one plain tools/call (plain: scanCall read
	// it).
	msgs   []rpcMessage
	params fastParams
	plain  bool
	parsed bool
}

func (*postBody) Close() error { return nil }

// Bytes returns the whole body: BindHTTP reads it without a copy.
func (b *postBody) Bytes() []byte { return b.data }

// setPostBody makes body, read whole, r's body. The messages of the body
// it replaces are kept when it is the same body.
func setPostBody(r *http.Request, body []byte) {
	pb := &postBody{Reader: bytes.NewReader(body), data: body}
	if old, ok := r.Body.(*postBody); ok && old.parsed && sameBytes(old.data, body) {
		pb.msgs, pb.params, pb.plain, pb.parsed = old.msgs, old.params, old.plain, true
	}
	r.Body = pb
}

// sameBytes reports whether a and b are the same slice of memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// postMessages returns the messages of r's POST body, body (parsePost).
func postMessages(r *http.Request, body []byte) []rpcMessage {
	msgs, _, _ := postParse(r, body)
	return msgs
}

// postParse is parsePost of r's POST body, body, read once however many
// of the gateway's handlers look (a router, then the handler it routes
// to, then the fast path).
func postParse(r *http.Request, body []byte) (msgs []rpcMessage, p fastParams, plain bool) {
	pb, ok := r.Body.(*postBody)
	if !ok || !sameBytes(pb.data, body) {
		return parsePost(body)
	}
	if !pb.parsed {
		pb.msgs, pb.params, pb.plain = parsePost(body)
		pb.parsed = true
	}
	return pb.msgs, pb.params, pb.plain
}

// readPostBody reads a POST's body within timeout, at most the SDK's
// limit. On failure it has answered the client.
func readPostBody(w http.ResponseWriter, r *http.Request, timeout time.Duration, log *slog.Logger) ([]byte, bool) {
	if pb, ok := r.Body.(*postBody); ok && len(pb.data) <= mcp.DefaultMaxRequestBodyBytes {
		return pb.data, true // read whole already, within the limits
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(timeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
	if err == nil {
		// What follows (the answer, an SSE stream) may take as long as
		// it takes; the server's watch for a closed connection must not
		// fail. (After a failure the deadline stays: the connection is
		// not read again.)
		_ = rc.SetReadDeadline(time.Time{})
		return body, true
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
	case errors.Is(err, os.ErrDeadlineExceeded):
		log.Info("cut off a client whose request body was too slow", "remote", r.RemoteAddr, "limit_ms", timeout.Milliseconds())
		w.Header().Set("Connection", "close")
		http.Error(w, "request body not received in time", http.StatusRequestTimeout)
	default:
		http.Error(w, "reading the request body failed", http.StatusBadRequest)
	}
	return nil, false
}

// statelessCancels returns the keys of the calls in body and cancels the
// calls named by a notifications/cancelled in it. A stateless client is
// known by its credentials and address: another client cannot cancel its
// calls by guessing request ids.
func (l *httpLife) statelessCancels(r *http.Request, body []byte) []string {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	sum := sha256.Sum256([]byte(r.Header.Get("Authorization") + "\x00" + host))
	who := hex.EncodeToString(sum[:8]) + "\x00"
	var keys []string
	for _, m := range postMessages(r, body) {
		switch {
		case m.Method == "notifications/cancelled":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
				l.g.CancelHTTP(who + compactJSON(p.RequestID))
			}
		case len(m.ID) > 0 && m.Method != "":
			keys = append(keys, who+compactJSON(m.ID))
		}
	}
	return keys
}

// fastCancels cancels the fast path's calls of session sid that a
// notifications/cancelled in body names; the SDK gets the body too, for
// its own.
func (l *httpLife) fastCancels(r *http.Request, sid string, body []byte) {
	if !l.sessions.owns(sid, principalID(r)) {
		return // another principal's session: the SDK refuses the request
	}
	for _, m := range postMessages(r, body) {
		if m.Method != "notifications/cancelled" {
			continue
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
			l.g.CancelHTTP(cancelKey(sid, compactJSON(p.RequestID)))
		}
	}
}

// principalID is the user ID of r's principal, as the SDK keeps it with
// a session ("" without one).
func principalID(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// member reports whether r's principal is a team member (a gateway key's
// or an access token's), whose sessions have a share of the cap.
func member(r *http.Request) bool {
	return PrincipalFromTokenInfo(auth.TokenInfoFromContext(r.Context())).Keyed()
}

// createdWriter records the session a POST without one made (or none)
// when the answer starts, or when the handler returns without one.
type createdWriter struct {
	http.ResponseWriter
	c      *sessionCap
	userID string
	done   bool
}

func (w *createdWriter) record() {
	if !w.done {
		w.done = true
		w.c.created(w.Header().Get(sessionIDHeader), w.userID)
	}
}

func (w *createdWriter) WriteHeader(code int) {
	w.record()
	w.ResponseWriter.WriteHeader(code)
}

func (w *createdWriter) Write(b []byte) (int, error) {
	w.record()
	return w.ResponseWriter.Write(b)
}

func (w *createdWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusWriter notes the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func compactJSON(b []byte) string {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b)
	}
	return out.String()
}

type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// parsePost reads a POST body: one JSON-RPC message or a batch. A plain
// tools/call, the common body, is read by scanCall (the same message as
// decodeMessages reads: FuzzScanCall), and its params come with it
// (plain); anything else is decoded.
func parsePost(body []byte) (msgs []rpcMessage, p fastParams, plain bool) {
	if m, p, ok := scanCall(body); ok {
		return []rpcMessage{m}, p, true
	}
	return decodeMessages(body), fastParams{}, false
}

// decodeMessages decodes a POST body with encoding/json.
func decodeMessages(body []byte) []rpcMessage {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var ms []rpcMessage
		_ = json.Unmarshal(body, &ms)
		return ms
	}
	var m rpcMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	return []rpcMessage{m}
}

// sessionCap keeps the live sessions with their last use, to end the one
// idle longest when a new one would exceed the cap.
//
// A session that ends leaves its entry behind until the next prune, which
// asks the SDK's server which sessions it still has: at the cap (so that
// an ended session is never mistaken for the idlest live one), and when
// the entries have doubled since the last prune (so that ended sessions
// cost at most as much as the live ones). No goroutine waits on each
// session: on an idle gateway that goroutine was most of what a session
// cost it (docs/benchmarks.md, "Idle sessions").
type sessionCap struct {
	mu      sync.Mutex
	max     int
	share   int // the most sessions one team member holds
	pending int // admitted, not yet created
	// pendingBy counts pending by principal user ID.
	pendingBy map[string]int
	live      map[string]*liveSession
	added     uint64 // entries ever added: each entry's seq
	pruneAt   int    // prune when live grows to this
	srv       *mcp.Server
	g         *Gateway
	log       *slog.Logger
	// timeout ends a session no POST has been in for this long (the
	// SDK's SessionTimeout, kept here: the fast path's POSTs never reach
	// the SDK's timer).
	timeout time.Duration
}

type liveSession struct {
	last time.Time
	busy int // requests in progress
	ss   *mcp.ServerSession
	seq  uint64 // when it was added (sessionCap.added)
	// posts are the POSTs in progress: the idle timer runs while none is.
	posts int
	timer *time.Timer
	// What the fast path checks a call against, from the session's
	// initialize: the principal's user ID, the protocol version; and
	// whether the client can be asked (it declared elicitation: a call
	// that asks is handed over to the SDK, http_handoff.go).
	userID   string
	protocol string
	askable  bool
	// closing is set while the session's DELETE is served.
	closing bool
	// fast are the request IDs of the fast path's calls in flight.
	fast map[string]struct{}
	// stream is the session's standalone stream, when served on its own
	// connection (http_stream.go).
	stream *sseStream
}

// minPrune is the fewest entries at which created prunes.
const minPrune = 64

// prune drops the entries of sessions the SDK's server no longer has. It
// must be called without c.mu held; entries added while it asks are kept.
func (c *sessionCap) prune() {
	c.mu.Lock()
	before := c.added
	c.mu.Unlock()
	alive := map[*mcp.ServerSession]bool{}
	for ss := range c.srv.Sessions() {
		alive[ss] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, s := range c.live {
		if s.seq <= before && s.ss != nil && !alive[s.ss] {
			s.stop()
			delete(c.live, id)
		}
	}
	c.pruneAt = max(2*len(c.live), minPrune)
}

// admitResult is admit's answer.
type admitResult int

const (
	admitted     admitResult = iota
	refusedBusy              // at the cap, every session is busy
	refusedShare             // at its share, every session of the member's is busy
)

// admit makes room for a new session of the principal with userID,
// ending the one idle longest if need be (that principal's own first;
// only its own when it is a member at its share); refusedBusy if every
// session is busy, refusedShare if every one of a member's share is.
func (c *sessionCap) admit(userID string, member bool) admitResult {
	c.mu.Lock()
	if c.fits(userID, member) {
		c.reserve(userID)
		c.mu.Unlock()
		return admitted
	}
	c.mu.Unlock()
	c.prune()
	c.mu.Lock()
	if c.fits(userID, member) {
		c.reserve(userID)
		c.mu.Unlock()
		return admitted
	}
	// A member at its share ends one of its own or gets none: holding
	// sessions busy (a stream open in each), one member must not fill
	// the cap and lock the others out.
	atShare := member && c.held(userID) >= c.share
	// The session idle longest of the principal asking, if it has one
	// idle, else of anyone: one principal opening sessions in a loop
	// ends its own, not those of the others sharing the gateway.
	var oldID string
	var old *liveSession
	own := false
	for id, s := range c.live {
		// A session whose one request is a stream its client has left is
		// as idle as one with none (net/http would have ended that GET).
		idle := s.busy == 0 || s.busy == 1 && s.stream != nil && s.stream.gone()
		mine := s.userID == userID
		if !idle || (atShare && !mine) {
			continue
		}
		if old == nil || (mine && !own) || (mine == own && s.last.Before(old.last)) {
			oldID, old, own = id, s, mine
		}
	}
	if old == nil {
		c.mu.Unlock()
		if atShare {
			c.log.Warn("refused a new session: every session of its principal's share is busy", "principal", userID, "max_sessions_per_principal", c.share)
			return refusedShare
		}
		c.log.Warn("refused a new session: every session is busy", "max_sessions", c.max)
		return refusedBusy
	}
	old.stop()
	delete(c.live, oldID)
	c.reserve(userID)
	c.mu.Unlock()
	c.log.Info("ended the session idle longest to make room for a new one", "max_sessions", c.max, "idle_ms", time.Since(old.last).Milliseconds())
	c.g.CancelSession(oldID)
	if ss := c.session(old, oldID); ss != nil {
		// An idle session closes at once; do not let one that does not
		// hold up the new client.
		closed := make(chan struct{})
		go func() { ss.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(time.Second):
		}
	}
	return admitted
}

// fits reports, under c.mu, whether a new session of the principal with
// userID fits the cap, and a member's its share.
func (c *sessionCap) fits(userID string, member bool) bool {
	return len(c.live)+c.pending < c.max && (!member || c.held(userID) < c.share)
}

// held counts, under c.mu, the sessions of the principal with userID:
// live (as far as the entries know) and admitted.
func (c *sessionCap) held(userID string) int {
	n := c.pendingBy[userID]
	for _, s := range c.live {
		if s.userID == userID {
			n++
		}
	}
	return n
}

// reserve counts, under c.mu, a session admitted for userID until created
// records it.
func (c *sessionCap) reserve(userID string) {
	c.pending++
	c.pendingBy[userID]++
}

// created records the session a POST without one made (id "" if none),
// for the principal with userID.
func (c *sessionCap) created(id, userID string) {
	var ss *mcp.ServerSession
	if id != "" {
		for s := range c.srv.Sessions() {
			if s.ID() == id {
				ss = s
				break
			}
		}
	}
	s := &liveSession{last: time.Now(), ss: ss, userID: userID}
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil {
			s.protocol = ip.ProtocolVersion
			s.askable = ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
		}
		if c.timeout > 0 {
			s.timer = time.AfterFunc(c.timeout, func() { c.expire(id, s) })
		}
	}
	c.mu.Lock()
	c.pending--
	if c.pendingBy[userID]--; c.pendingBy[userID] <= 0 {
		delete(c.pendingBy, userID)
	}
	if ss != nil {
		c.added++
		s.seq = c.added
		c.live[id] = s
	}
	grown := len(c.live) >= max(c.pruneAt, minPrune)
	c.mu.Unlock()
	if grown {
		c.prune()
	}
}

func (c *sessionCap) session(s *liveSession, id string) *mcp.ServerSession {
	if s.ss != nil {
		return s.ss
	}
	for ss := range c.srv.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// begin notes a request of session id in progress; post says it is a
// POST, which holds the idle timer.
func (c *sessionCap) begin(id string, post bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.live[id]; s != nil {
		s.begin(post)
	}
}

func (c *sessionCap) end(id string, post bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.live[id]; s != nil {
		s.end(post, c.timeout)
	}
}

func (s *liveSession) begin(post bool) {
	s.busy++
	s.last = time.Now()
	if post {
		s.posts++
		if s.posts == 1 && s.timer != nil {
			s.timer.Stop()
		}
	}
}

func (s *liveSession) end(post bool, timeout time.Duration) {
	if s.busy > 0 {
		s.busy--
	}
	s.last = time.Now()
	if post && s.posts > 0 {
		s.posts--
		if s.posts == 0 && s.timer != nil {
			s.timer.Reset(timeout)
		}
	}
}

// stop stops the session's idle timer for good.
func (s *liveSession) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// expire ends session s, idle for the timeout, unless a POST began since.
func (c *sessionCap) expire(id string, s *liveSession) {
	c.mu.Lock()
	if c.live[id] != s || s.posts > 0 {
		c.mu.Unlock()
		return
	}
	delete(c.live, id)
	c.mu.Unlock()
	s.ss.Close()
}

// closing marks session id as being ended (its DELETE), or no longer.
func (c *sessionCap) closing(id string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.live[id]; s != nil {
		s.closing = on
	}
}

// deleted ends the entry of session id after its DELETE: gone if the SDK
// ended it, else as it was.
func (c *sessionCap) deleted(id string, gone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.live[id]
	if s == nil {
		return
	}
	if gone {
		s.stop()
		delete(c.live, id)
		return
	}
	s.closing = false
}

// owns reports whether session id is live and was opened by the
// principal with userID: another principal's request for it (a session
// ID that leaked) must not end or cancel anything of it.
func (c *sessionCap) owns(id, userID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.live[id]
	return s != nil && s.ss != nil && s.userID == userID
}

// protocol returns the protocol session id of the principal with userID
// was initialized on, or "" if it is not known.
func (c *sessionCap) protocol(id, userID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.live[id]; s != nil && s.userID == userID {
		return s.protocol
	}
	return ""
}

// beginFast begins a fast-path call with request ID idKey in session id,
// if the session takes one: live, not being ended, of the principal with
// userID, initialized on a protocol before 2026-07-28 (the one
// protoHeader names, if any), and with a client that cannot be asked.
// dup reports an ID already in flight there (nothing begun).
func (c *sessionCap) beginFast(id, userID, protoHeader, idKey string) (ss *mcp.ServerSession, askable, dup, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.live[id]
	if s == nil || s.ss == nil || s.closing || s.userID != userID ||
		s.protocol == "" || s.protocol >= "2026-07-28" || (protoHeader != "" && protoHeader != s.protocol) {
		return nil, false, false, false
	}
	if _, ok := s.fast[idKey]; ok {
		return s.ss, s.askable, true, true
	}
	if s.fast == nil {
		s.fast = map[string]struct{}{}
	}
	s.fast[idKey] = struct{}{}
	s.begin(true)
	return s.ss, s.askable, false, true
}

// endFast ends what beginFast began.
func (c *sessionCap) endFast(id, idKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.live[id]; s != nil {
		delete(s.fast, idKey)
		s.end(true, c.timeout)
	}
}
