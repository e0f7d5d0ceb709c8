package gateway

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A session's standalone SSE stream (its GET) carries what the server
// says outside any call — tools/list_changed above all — and for most of
// its life carries nothing. Served by net/http, an open stream holds the
// connection's goroutine (its stack grown by every handler on the way to
// the SDK's), net/http's watch for a closed connection, the connection's
// read and write buffers and the request: most of what an idle session
// cost the gateway (docs/benchmarks.md, "Idle sessions and resident
// size").
//
// serveStream takes such a GET's connection from net/http (Hijack) once
// the request is known to be a plain one of a live session, and has the
// SDK serve it on a ResponseWriter of the connection's own: the SDK keeps
// every rule of the stream (one per session, what goes on it, when it
// ends), but waits on a goroutine of a few frames, with no buffer while
// nothing is written. Nothing reads the connection: whether the client
// went away is asked when it matters — the next GET of the session (a
// stream the client dropped gives way to its new one), a failed write —
// and the session's own end (DELETE, the idle timeout, the gateway's
// shutdown) ends the stream.

// sseStream is a standalone stream served on a hijacked connection: the
// http.ResponseWriter the SDK writes the stream to.
type sseStream struct {
	mu     sync.Mutex
	conn   net.Conn
	header http.Header
	status int  // 0 until WriteHeader
	head   bool // the status line and headers are on the wire
	buf    []byte
	err    error
	cancel context.CancelFunc
	sid    string
	// wait bounds one write to the client (HTTPOptions.WriteTimeout): a
	// client that stops reading its stream loses it, and the SDK's
	// writer is not held.
	wait time.Duration
	// writing is true while a write to the client is under way (a test
	// sees a client stop reading by it).
	writing atomic.Bool
	// done is closed when the SDK is done with the stream and the
	// connection is closed.
	done chan struct{}
}

// serveStream serves r, a GET of session sid, on its own connection if
// it can; false if r is for the SDK's handler as it comes (nothing was
// written).
func (l *httpLife) serveStream(w http.ResponseWriter, r *http.Request, sid string) bool {
	if _, streamOK := accepts(r.Header.Values("Accept")); !canPeek || r.ProtoMajor != 1 || r.ProtoMinor < 1 ||
		len(r.Header.Values("Last-Event-ID")) > 0 || !streamOK {
		// HTTP/2 cannot be taken over, nor a stream watched without a
		// reader where sockets cannot be peeked at; the rest is the
		// SDK's to answer.
		return false
	}
	userID := principalID(r)
	st := &sseStream{sid: sid, wait: l.write, done: make(chan struct{})}
	old, ok := l.sessions.attachStream(sid, userID, st)
	if !ok {
		return false
	}
	if old != nil {
		// The session has a stream: the SDK refuses a second one (409),
		// unless the client went away from the first.
		if old.alive() {
			return false
		}
		old.end()
		select {
		case <-old.done:
		case <-time.After(time.Second):
			return false
		}
		if _, ok = l.sessions.attachStream(sid, userID, st); !ok {
			return false
		}
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		l.sessions.detachStream(sid, st)
		return false
	}
	_ = conn.SetDeadline(time.Time{})
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	st.mu.Lock() // another GET of the session may be asking alive
	st.conn, st.header, st.cancel = conn, w.Header().Clone(), cancel
	st.mu.Unlock()
	if !l.g.streams.add(st) {
		st.end() // the gateway is shutting down: the SDK's answer is cut
	}
	r2 := r.WithContext(ctx)
	r2.Body = http.NoBody
	// The request lives as long as the stream: it keeps the headers the
	// SDK reads of a GET (its checks of the session, the protocol
	// version, the origin), not the client's others — nor its
	// credentials, which the guard has turned into the context's
	// principal already.
	r2.Header = make(http.Header, len(streamHeaders))
	for _, k := range streamHeaders {
		if v := r.Header[k]; v != nil {
			r2.Header[k] = v
		}
	}
	go func() {
		defer close(st.done)
		defer l.g.streams.remove(st)
		defer l.sessions.detachStream(sid, st)
		l.next.ServeHTTP(st, r2)
		st.finish()
		cancel()
	}()
	return true
}

// streamHeaders are the headers the SDK reads of a stream's GET.
var streamHeaders = []string{"Accept", sessionIDHeader, "Mcp-Protocol-Version", "Origin", "Sec-Fetch-Site", "Last-Event-Id"}

func (s *sseStream) Header() http.Header { return s.header }

func (s *sseStream) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == 0 {
		s.status = code
	}
}

func (s *sseStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if s.err != nil {
		return 0, s.err
	}
	s.buf = append(s.buf, p...)
	return len(p), nil
}

// streaming reports whether the SDK answers with the stream (not with an
// error): its body goes out chunk by chunk as it is flushed.
func (s *sseStream) streaming() bool {
	return s.status == http.StatusOK && strings.HasPrefix(s.header.Get("Content-Type"), "text/event-stream")
}

// FlushError writes what the SDK wrote since the last flush as one chunk.
func (s *sseStream) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.streaming() {
		return s.err
	}
	return s.flushLocked(false)
}

func (s *sseStream) Flush() { _ = s.FlushError() }

func (s *sseStream) flushLocked(last bool) error {
	if s.err != nil {
		return s.err
	}
	var out bytes.Buffer
	if !s.head {
		s.writeHead(&out, -1)
		s.head = true
	}
	if len(s.buf) > 0 {
		out.WriteString(strconv.FormatInt(int64(len(s.buf)), 16))
		out.WriteString("\r\n")
		out.Write(s.buf)
		out.WriteString("\r\n")
	}
	if last {
		out.WriteString("0\r\n\r\n")
	}
	s.buf = nil // an idle stream holds no buffer
	if out.Len() == 0 {
		return nil
	}
	if err := s.send(out.Bytes()); err != nil {
		s.err = err
		s.cancel() // the client is gone: the SDK lets go of the stream
		return err
	}
	return nil
}

// send writes b to the client within s.wait.
func (s *sseStream) send(b []byte) error {
	_ = s.conn.SetWriteDeadline(time.Now().Add(s.wait))
	s.writing.Store(true)
	_, err := s.conn.Write(b)
	s.writing.Store(false)
	return err
}

// writeHead writes the status line and headers as net/http does, with
// Content-Length n (n >= 0) or a chunked body. The connection is closed
// after the answer: it no longer belongs to net/http.
func (s *sseStream) writeHead(out *bytes.Buffer, n int) {
	status := s.status
	if status == 0 {
		status = http.StatusOK
	}
	out.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	h := s.header.Clone()
	h.Del("Transfer-Encoding")
	h.Set("Connection", "close")
	if n >= 0 {
		h.Set("Content-Length", strconv.Itoa(n))
	} else {
		h.Set("Transfer-Encoding", "chunked")
	}
	if _, ok := h["Date"]; !ok {
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	_ = h.Write(out)
	out.WriteString("\r\n")
}

// finish ends the answer once the SDK is done with it: the last chunk of
// a stream, or the whole of an answer that was no stream (an error the
// SDK found); then the connection is closed.
func (s *sseStream) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		if s.head || s.streaming() {
			_ = s.flushLocked(true)
		} else {
			var out bytes.Buffer
			s.writeHead(&out, len(s.buf))
			out.Write(s.buf)
			_ = s.send(out.Bytes())
		}
	}
	s.buf = nil
	s.err = net.ErrClosed
	s.conn.Close()
}

// alive asks the stream's connection whether the client still holds it:
// a client that closed it has sent its end, which a peek at the socket
// finds (or, for a connection that cannot be peeked at — a listener's
// own kind — a read of a millisecond).
func (s *sseStream) alive() bool {
	gone, known, conn := s.peek()
	if known {
		return !gone
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	n, err := conn.Read(b[:])
	_ = conn.SetReadDeadline(time.Time{})
	return n == 0 && errors.Is(err, os.ErrDeadlineExceeded)
}

// gone reports whether the stream's client is known to have left it,
// without waiting (false where that cannot be asked at once).
func (s *sseStream) gone() bool {
	gone, known, _ := s.peek()
	return known && gone
}

// peek is peerGone of the stream's connection; a stream that ended is
// gone, one still being set up (no connection yet) is not. When known is
// false, conn is the connection to ask otherwise.
func (s *sseStream) peek() (gone, known bool, conn net.Conn) {
	s.mu.Lock()
	conn, err := s.conn, s.err
	s.mu.Unlock()
	switch {
	case err != nil:
		return true, true, nil
	case conn == nil:
		return false, true, nil
	}
	gone, known = peerGone(conn)
	return gone, known, conn
}

// end lets the SDK go of the stream and closes its connection (the SDK's
// goroutine then writes nothing more).
func (s *sseStream) end() {
	s.mu.Lock()
	cancel := s.cancel
	if s.err == nil {
		s.err = net.ErrClosed
	}
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// streamSet is a gateway's open streams, to end at its shutdown: their
// connections are no longer net/http's, whose own shutdown does not see
// them.
type streamSet struct {
	mu     sync.Mutex
	set    map[*sseStream]struct{}
	closed bool // endAll was called: the gateway is shutting down
}

// add counts s among the open streams; false once the gateway is shutting
// down.
func (ss *streamSet) add(s *sseStream) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.set == nil {
		ss.set = map[*sseStream]struct{}{}
	}
	ss.set[s] = struct{}{}
	return !ss.closed
}

func (ss *streamSet) remove(s *sseStream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.set, s)
}

// endAll ends every open stream.
func (ss *streamSet) endAll() {
	ss.mu.Lock()
	ss.closed = true
	all := make([]*sseStream, 0, len(ss.set))
	for s := range ss.set {
		all = append(all, s)
	}
	ss.mu.Unlock()
	for _, s := range all {
		s.end()
	}
}

// attachStream makes st the stream of session sid, if sid is a live
// session of the principal with userID that is not being ended and has
// no stream; otherwise it returns the stream it has (old), or false.
func (c *sessionCap) attachStream(sid, userID string, st *sseStream) (old *sseStream, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.live[sid]
	if s == nil || s.ss == nil || s.closing || s.userID != userID {
		return nil, false
	}
	if s.stream != nil && s.stream != st {
		return s.stream, true
	}
	s.stream = st
	s.begin(false)
	return nil, true
}

// detachStream ends what attachStream began.
func (c *sessionCap) detachStream(sid string, st *sseStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.live[sid]; s != nil && s.stream == st {
		s.stream = nil
		s.end(false, c.timeout)
	}
}
