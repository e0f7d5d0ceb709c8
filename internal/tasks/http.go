package tasks

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// RoundTripper returns an HTTP transport, over base, for the SDK's
// Streamable HTTP client: the adapter reads the JSON-RPC message of each
// POST and the answers of those it cares for.
//
// A call that becomes a task keeps its response stream: the adapter writes
// the task's progress and, at the end, the call's response into it, as a
// server would have. The adapter's own requests are POSTs that carry the
// call's headers (session, protocol version, credentials from base). The
// streams the adapter reads and passes on carry no event ids, so the SDK
// never resumes one of them against the server.
func (a *Adapter) RoundTripper(base http.RoundTripper) http.RoundTripper {
	return &roundTripper{a: a, base: base}
}

type roundTripper struct {
	a    *Adapter
	base http.RoundTripper
}

// The strings whose presence in a POST body makes the adapter decode it:
// the methods it looks at, and its own ids.
var (
	always  = [][]byte{[]byte(`"initialize"`), []byte(`"server/discover"`)}
	offered = map[revision][][]byte{ // the server offers tasks
		revV1: {[]byte(`"tools/call"`), []byte(`"tools/list"`)},
		revV2: {[]byte(`"tools/call"`)},
	}
	busy = [][]byte{[]byte(`"notifications/cancelled"`), []byte(`"` + ownPrefix)}
)

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.Body == http.NoBody {
		return t.base.RoundTrip(req)
	}
	body, err := peek(req)
	if err != nil {
		return nil, err
	}
	msg := t.sniff(body)
	if msg == nil {
		return t.base.RoundTrip(req)
	}
	l := &httpLink{t: t, header: req.Header, url: req.URL.String(), ctx: req.Context()}
	out := t.a.outgoing(req.Context(), msg, l)
	if out == nil {
		return accepted(req), nil
	}
	send := req
	if out != msg {
		if body, err = jsonrpc.EncodeMessage(out); err != nil {
			return nil, err
		}
		send = withBody(req, body)
	}
	call, _ := out.(*jsonrpc.Request)
	if call != nil && call.IsCall() && call.Method == "tools/call" && t.a.watching(call.ID) {
		return t.callRoundTrip(send, call, l)
	}
	resp, err := t.base.RoundTrip(send)
	if err != nil {
		t.a.sendFailed(out)
		return nil, err
	}
	if call == nil || !call.IsCall() || !t.a.watching(call.ID) {
		return resp, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		t.a.sendFailed(out)
		return resp, nil
	}
	return t.answer(resp, call, l, func() {})
}

// callRoundTrip makes a tools/call the adapter watches. When the SDK gives
// the call up (its request's context ends) before the answer came, the
// SDK gets its error at once, but the exchange goes on a while
// (Options.CancelWait): a server may still answer with a task, which the
// adapter then cancels.
func (t *roundTripper) callRoundTrip(req *http.Request, call *jsonrpc.Request, l *httpLink) (*http.Response, error) {
	ctx := req.Context()
	up, stopUp := context.WithCancel(context.WithoutCancel(ctx))
	stopWatch := context.AfterFunc(ctx, func() {
		t.a.givenUp(call.ID)
		time.AfterFunc(t.a.opts.CancelWait, stopUp)
	})
	done := func() { stopWatch(); stopUp() }
	type answer struct {
		resp *http.Response
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		resp, err := t.base.RoundTrip(req.WithContext(up))
		ch <- answer{resp, err}
	}()
	read := func(a answer) (*http.Response, error) {
		if a.err != nil {
			done()
			t.a.sendFailed(call)
			return nil, a.err
		}
		if a.resp.StatusCode < 200 || a.resp.StatusCode > 299 {
			t.a.sendFailed(call)
			a.resp.Body = &closer{ReadCloser: a.resp.Body, after: done}
			return a.resp, nil
		}
		return t.answer(a.resp, call, l, done)
	}
	select {
	case a := <-ch:
		return read(a)
	case <-ctx.Done():
		go func() { // the SDK has gone: read for a task to cancel
			if resp, err := read(<-ch); err == nil {
				resp.Body.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// closer runs after once its body is closed.
type closer struct {
	io.ReadCloser
	once  sync.Once
	after func()
}

func (c *closer) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.after)
	return err
}

// sniff decodes body when it may interest the adapter.
func (t *roundTripper) sniff(body []byte) jsonrpc.Message {
	if containsAny(body, always) || containsAny(body, offered[t.a.revision()]) ||
		(t.a.busy.Load() > 0 && containsAny(body, busy)) {
		if msg, err := jsonl.Decode(body); err == nil {
			return msg
		}
	}
	return nil
}

func containsAny(body []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(body, s) {
			return true
		}
	}
	return false
}

// peek reads a request's body without using it up: through GetBody, which
// the SDK's requests have (their body is in memory), else by reading it
// and putting it back.
func peek(req *http.Request) ([]byte, error) {
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(body))
	return body, err
}

func withBody(req *http.Request, body []byte) *http.Request {
	r := *req
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	return &r
}

// accepted is the answer to a POST the adapter kept from the server.
func accepted(req *http.Request) *http.Response {
	return &http.Response{
		Status: "202 Accepted", StatusCode: http.StatusAccepted,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody, Request: req,
	}
}

// watching says whether the adapter waits for the answer to id.
func (a *Adapter) watching(id jsonrpc.ID) bool {
	if a.busy.Load() == 0 {
		return false
	}
	a.mu.Lock()
	_, ok := a.watch[idKey(id)]
	a.mu.Unlock()
	return ok
}

// answer reads the answer to a POST the adapter watches, passing on what
// the SDK gets of it.
//
// done is called when the answer's own stream has been read.
func (t *roundTripper) answer(resp *http.Response, call *jsonrpc.Request, l *httpLink, done func()) (*http.Response, error) {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		data, err := io.ReadAll(io.LimitReader(resp.Body, mcp.DefaultMaxLineLength+1))
		resp.Body.Close()
		done()
		if err != nil {
			t.a.sendFailed(call)
			return nil, err
		}
		msg, err := jsonl.Decode(data)
		if err != nil {
			t.a.sendFailed(call)
			resp.Body = io.NopCloser(bytes.NewReader(data))
			return resp, nil
		}
		l.stream = newStream()
		out := t.a.incoming(msg, l)
		switch {
		case out == nil: // a task: the rest is the follower's
			return streamResponse(resp, l.stream), nil
		case out != msg:
			if data, err = jsonrpc.EncodeMessage(out); err != nil {
				return nil, err
			}
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		resp.ContentLength = int64(len(data))
		return resp, nil
	case "text/event-stream":
		l.stream = newStream()
		go func() {
			defer done()
			t.pass(resp.Body, call.ID, l)
		}()
		return streamResponse(resp, l.stream), nil
	}
	t.a.sendFailed(call)
	resp.Body = &closer{ReadCloser: resp.Body, after: done}
	return resp, nil
}

// pass reads a watched call's event stream, handing the adapter each
// message and the SDK what it gets of them. When the call's answer is a
// task, the stream is the follower's from then on.
func (t *roundTripper) pass(body io.ReadCloser, id jsonrpc.ID, l *httpLink) {
	defer body.Close()
	err := events(body, func(data []byte) bool {
		msg, err := jsonl.Decode(data)
		if err != nil {
			return true // the SDK would fail the connection; the adapter reads on
		}
		out := t.a.incoming(msg, l)
		if out != nil {
			// A write fails once the SDK has stopped reading (it gave the
			// call up): read on for a task to cancel, as long as the
			// exchange lasts (Options.CancelWait).
			_ = l.stream.write(out)
		}
		if r, ok := msg.(*jsonrpc.Response); ok && r.ID == id {
			if out != nil {
				l.stream.close()
			}
			return false
		}
		return true
	})
	if !l.following() {
		t.a.sendFailed(&jsonrpc.Request{ID: id, Method: "tools/call"})
		l.stream.closeWith(err)
	}
}

func streamResponse(resp *http.Response, s *stream) *http.Response {
	r := *resp
	r.Header = resp.Header.Clone()
	r.Header.Set("Content-Type", "text/event-stream")
	r.Header.Del("Content-Length")
	r.ContentLength = -1
	r.Body = s.r
	return &r
}

// events calls fn with the data of each event of an SSE stream until fn
// says stop or the stream ends.
func events(r io.Reader, fn func(data []byte) bool) error {
	br := bufio.NewReader(r)
	var data []byte
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		switch {
		case len(line) == 0:
			if len(data) > 0 && !fn(data) {
				return nil
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			if len(data)+len(v) > mcp.DefaultMaxLineLength {
				return fmt.Errorf("an event over %d bytes", mcp.DefaultMaxLineLength)
			}
			data = append(data, v...)
		}
	}
}

// readLine reads one line without its end (\n, \r\n).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > mcp.DefaultMaxLineLength {
			return nil, fmt.Errorf("a line over %d bytes", mcp.DefaultMaxLineLength)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
}

// stream is the event stream the SDK reads for one call.
type stream struct {
	r  *io.PipeReader
	mu sync.Mutex
	w  *io.PipeWriter
}

func newStream() *stream {
	r, w := io.Pipe()
	return &stream{r: r, w: w}
}

func (s *stream) write(msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	b.Grow(len(data) + 16)
	b.WriteString("event: message\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
	_, err = s.w.Write(b.Bytes())
	return err
}

func (s *stream) close() { s.w.Close() }

func (s *stream) closeWith(err error) { s.w.CloseWithError(err) }

// httpLink reaches the server with POSTs like the call's own, and the SDK
// through the call's response stream.
type httpLink struct {
	t      *roundTripper
	header http.Header
	url    string
	ctx    context.Context // the call's request: it ends when the SDK gives up
	stream *stream

	mu sync.Mutex
	f  *follower
}

func (l *httpLink) following() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f != nil
}

// errNoAnswer is a POST whose answer did not hold the response.
var errNoAnswer = errors.New("the server's answer held no response")

// send POSTs one of the adapter's requests. Messages of the server's in
// its answer (the requests it sends on tasks/result's stream) go to the
// SDK on the call's stream.
func (l *httpLink) send(ctx context.Context, req *jsonrpc.Request) error {
	data, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	for k, vs := range l.header {
		switch k = http.CanonicalHeaderKey(k); {
		case k == "Content-Length", k == "Last-Event-Id", k == "Mcp-Name", k == "Mcp-Method",
			strings.HasPrefix(k, "Mcp-Param-"):
		default:
			hreq.Header[k] = append([]string(nil), vs...)
		}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, text/event-stream")
	if hreq.Header.Get("Mcp-Protocol-Version") >= modern {
		hreq.Header.Set("Mcp-Method", req.Method)
		if req.Method != "tools/list" {
			var p taskIDParams
			if json.Unmarshal(req.Params, &p) == nil && p.TaskID != "" {
				hreq.Header.Set("Mcp-Name", headerValue(p.TaskID))
			}
		}
	}
	resp, err := l.t.base.RoundTrip(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got := false
	handle := func(data []byte) bool {
		msg, err := jsonl.Decode(data)
		if err != nil {
			return true
		}
		if r, ok := msg.(*jsonrpc.Response); ok && r.ID == req.ID {
			got = true
		}
		if out := l.t.a.incoming(msg, l); out != nil {
			_ = l.deliver(out)
		}
		return !got
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// 2026-07-28 answers some JSON-RPC errors with an HTTP error
		// status (an unknown task: 400), the error in the body.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if handle(data); got {
			return nil
		}
		if resp.StatusCode == http.StatusNotFound && hreq.Header.Get("Mcp-Session-Id") != "" {
			return errors.New("the server forgot the session (HTTP 404)")
		}
		return fmt.Errorf("%s: HTTP %s", req.Method, resp.Status)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		data, err := io.ReadAll(io.LimitReader(resp.Body, mcp.DefaultMaxLineLength+1))
		if err != nil {
			return err
		}
		handle(data)
	case "text/event-stream":
		if err := events(resp.Body, handle); err != nil {
			return err
		}
	}
	if !got {
		return errNoAnswer
	}
	return nil
}

func (l *httpLink) deliver(msg jsonrpc.Message) error {
	if l.stream == nil {
		return errClosed
	}
	return l.stream.write(msg)
}

// started watches the call's request: when the SDK gives the call up, its
// context ends (and its stream is closed), and the task is cancelled.
func (l *httpLink) started(f *follower) {
	l.mu.Lock()
	l.f = f
	l.mu.Unlock()
	go func() {
		select {
		case <-l.ctx.Done():
			f.halt()
		case <-f.finished:
		case <-l.t.a.closed:
		}
	}()
}

func (l *httpLink) done(*follower) { l.stream.close() }

// headerValue is a server-chosen value (a task id) as an HTTP header
// carries it, by the rule of the SDK's own Mcp-* headers (SEP-2243): as
// it is when it is printable ASCII without surrounding blanks, else
// base64 in the =?base64?…?= wrapper (a header cannot carry a line
// break or a control character, and Go refuses to send one).
func headerValue(s string) string {
	plain := !strings.HasPrefix(s, " ") && !strings.HasPrefix(s, "\t") && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\t") &&
		!(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
