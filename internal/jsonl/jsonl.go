// Package jsonl is the newline-delimited JSON-RPC connection Switchboard
// speaks over a pair of pipes: to every stdio server, and to the client of
// `switchboard serve --stdio`.
//
// It is a drop-in [mcp.Transport] for the SDK's [mcp.IOTransport] with the
// same wire behaviour (one JSON-RPC message or batch per line, a value may
// continue over several lines, batches only before protocol 2025-06-18, a
// bound on the bytes buffered for one message, the same case-sensitive
// decoding and nesting limit), built to decode each message once. The SDK
// v1.8.0 decodes a frame up to three times, each through a new decoder
// with a fresh 32 KiB buffer; on a relay that is most of the garbage and,
// on a 2-core machine, most of the latency (docs/benchmarks.md).
//
// # Fenced, to be deleted
//
// [New] is the only place that chooses between this package and the SDK's
// transport; host.Options.SDKStdioTransport takes the SDK's, and the host's
// tests of what a transport carries run on both (host's
// TestStdioTestsOnTheSDKTransport). The package can be deleted, and New's
// callers take &mcp.IOTransport{...}, once a go-sdk release's IOTransport:
//   - decodes each incoming line once, without a decoder and buffer per
//     frame, and reads in the caller's goroutine: measured as in
//     docs/benchmarks.md ("The relay's floors"), the SDK-only relay is then
//     as fast as the SDK relay on jsonl;
//   - exports its frame errors: a sentinel for a message over
//     MaxLineLength (v1.8.0's errFrameTooLarge is unexported) and an error
//     that carries the start of a frame that is not JSON-RPC, which the host
//     needs to name a result over the limit and a banner on stdout;
//   - can answer a bad frame with a JSON-RPC error and read on (Tolerant),
//     as `serve --stdio` does for its client.
//
// What else lives here moves then: [Decode] (the HTTP progress scan) is
// jsonrpc.DecodeMessage, [NestsDeeper] goes to the host's permit check, and
// [Stdin] and [Stdout] are only worth keeping for a transport that reads
// and writes non-blocking pipes itself.
package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrInvalidFrame is wrapped by every error about bytes on the pipe that
// are not a JSON-RPC message: a caller can say "the server wrote something
// that is not JSON-RPC" rather than "the connection broke".
var ErrInvalidFrame = errors.New("not a JSON-RPC message")

// FrameError is the error, wrapping ErrInvalidFrame, of a frame that was
// read whole but is not a JSON-RPC message. Head is the frame's start, so
// that a caller can show what was written instead ("a banner on stdout").
type FrameError struct {
	// Head is the frame's first line, at most frameHeadMax bytes, trimmed.
	Head string
	err  error
}

func (e *FrameError) Error() string { return e.err.Error() }
func (e *FrameError) Unwrap() error { return e.err }

const frameHeadMax = 200

// frameHead is the first line of data, trimmed and cut at frameHeadMax
// bytes (on a UTF-8 boundary).
func frameHead(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	data = bytes.TrimSpace(data)
	if len(data) > frameHeadMax {
		data = data[:frameHeadMax]
		for len(data) > 0 && !utf8.Valid(data) {
			data = data[:len(data)-1]
		}
	}
	return string(data)
}

// ErrFrameTooLarge is wrapped when one message exceeds the line limit.
var ErrFrameTooLarge = errors.New("JSON-RPC message exceeds the maximum line length")

// Transport connects over Reader (messages in) and Writer (messages out).
// Closing the connection closes both.
type Transport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxLineLength bounds the bytes buffered for one incoming message:
	// 0 means [mcp.DefaultMaxLineLength], a negative value no bound.
	MaxLineLength int
	// Tolerant answers an incoming frame that is not a JSON-RPC message
	// with a JSON-RPC error whose id is null (-32700 for bytes that do not
	// parse as JSON, -32600 for JSON that is not a message), as JSON-RPC
	// 2.0 asks of a server, and reads on; otherwise such a frame ends the
	// connection with an error wrapping [ErrInvalidFrame]. A message over
	// MaxLineLength ends it either way. For the serving side of a
	// connection: a client's one bad line should not end its session.
	Tolerant bool
	// ProgressGap holds the answer to a call that asked for progress, when
	// it is written within this long of a progress notification, until
	// that long has passed since the notification. For the serving
	// side: the TypeScript SDK's client handles a notification in a
	// microtask and a response at once, so a call's last progress step
	// that reaches it in one read with the call's answer is dropped
	// (typescript-sdk #2580); written back to back, as a relayed call's
	// last step and answer are, they are often read together. On Linux,
	// when the writer is a pipe or a Unix socket (a Node client's child
	// gets sockets), such an answer also waits (up to
	// [progressDrainLimit]) until the reader has read everything written
	// before it: a client kept off the CPU longer than the gap would
	// otherwise still read the two together.
	ProgressGap time.Duration
	// AnswerGrace, for the serving side, is how long the calls read just
	// before the input ended (within answerRecent of it) get to be
	// answered before Read reports the end, and the SDK cancels what is
	// still running: a client that writes its requests and closes its end
	// at once (a script's pipe) gets its answers. A call read earlier (a
	// client that hangs up mid-call) or one the client cancelled is not
	// waited for. If <= 0, Read reports the end at once.
	AnswerGrace time.Duration
	// MaxCallsInFlight, for the serving side, bounds the calls read and
	// not answered yet: while that many wait for their answers, Read
	// reads no more until one is answered. A client that writes calls
	// without reading the answers (or faster than they are answered)
	// then finds its writes waiting, as on any full pipe, instead of the
	// server holding every call it sent (a goroutine and a call each,
	// without bound). A batch is read whole, and one of more messages
	// than this is refused (-32600). If <= 0, no bound.
	MaxCallsInFlight int

	endedOnce, endOnce sync.Once
	ended              chan struct{} // see Ended
}

// Ended returns a channel that is closed once a connection of t has read
// the end of its input (the client closed its end), before AnswerGrace's
// wait begins. A program that gets SIGTERM after it knows nobody is left
// to read a late answer, and need not give its calls a grace.
func (t *Transport) Ended() <-chan struct{} { return t.endedChan() }

func (t *Transport) endedChan() chan struct{} {
	t.endedOnce.Do(func() { t.ended = make(chan struct{}) })
	return t.ended
}

// markEnded closes Ended's channel.
func (t *Transport) markEnded() {
	ch := t.endedChan()
	t.endOnce.Do(func() { close(ch) })
}

// Connect implements [mcp.Transport]. A pipe (a file in the runtime's
// poller) is read by Read itself; any other reader by a goroutine that
// Connect starts.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxLineLength
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &conn{
		r:        t.Reader,
		w:        t.Writer,
		out:      t.Writer,
		tolerant: t.Tolerant,
		gap:      t.ProgressGap,
		grace:    t.AnswerGrace,
		atEnd:    t.markEnded,
		start:    time.Now(),
		closed:   make(chan struct{}),
		maxCalls: t.MaxCallsInFlight,
	}
	if f, ok := t.Writer.(*os.File); ok && inPoller(f, true) {
		if w := rawWrite(f); w != nil {
			c.out = w
		}
	}
	if f, ok := t.Writer.(*os.File); ok && c.gap > 0 {
		c.unread = peerUnread(f)
	}
	if pollable(t.Reader) {
		// Read reads in the caller's goroutine: Close interrupts it.
		var in io.Reader = t.Reader
		if r := rawRead(t.Reader.(*os.File)); r != nil {
			in = r
		}
		c.br, c.limit = bufio.NewReaderSize(in, readBuffer), limit
		if c.maxCalls > 0 {
			c.hup = hungUp(t.Reader.(*os.File))
		}
	} else {
		// A blocking file (a terminal, a non-pipe stdin) would not wake
		// on Close: a goroutine reads, and Read waits on it or on Close.
		c.incoming = make(chan frame)
		go c.readLoop(limit)
	}
	return c, nil
}

// readBuffer is each connection's read buffer: the common message fits in
// one, and a longer one is read in several (readLine). A gateway holds
// one per server for the server's whole life, so it stays small: at 64
// KiB, 100 servers held 6.4 MB of them (docs/benchmarks.md, "The floor").
const readBuffer = 16 << 10

// pollable reports whether a Read blocked on r returns when r is closed:
// true for the pipes os/exec and os.Pipe make (they are in the runtime's
// poller, and only such files accept a deadline).
func pollable(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && inPoller(f, false)
}

// inPoller reports whether f is in the runtime's poller for reading (or
// writing): only such files accept a deadline.
func inPoller(f *os.File, write bool) bool {
	if write {
		return f.SetWriteDeadline(time.Time{}) == nil
	}
	return f.SetReadDeadline(time.Time{}) == nil
}

// frame is what the reading goroutine hands to Read: the decoded
// messages of one line (several for a batch), or the error that ended
// reading.
type frame struct {
	msgs  []jsonrpc.Message
	batch bool
	err   error
	// code is the JSON-RPC error code for an err that is about the
	// frame's content, which was read whole: the stream can go on.
	code int64
}

type conn struct {
	r   io.ReadCloser
	w   io.WriteCloser
	out io.Writer // w, or raw writes to its descriptor (rawPipe)

	// Either br (a pollable reader, read by Read itself) or incoming (fed
	// by readLoop).
	br       *bufio.Reader
	limit    int
	incoming chan frame
	queue    []jsonrpc.Message // rest of the last batch; Read is serial

	writeMu  sync.Mutex
	tolerant bool // see Transport.Tolerant

	// gap is Transport.ProgressGap; lastProgress is when the last progress
	// notification was written, as time since start, plus one (0: none);
	// progressCalls are the calls read that asked for progress (a
	// progressToken in their params), whose answers keep the gap.
	gap           time.Duration
	start         time.Time
	lastProgress  atomic.Int64
	unread        func() int // bytes written and not read yet (a pipe, on Linux), or nil
	progressMu    sync.Mutex
	progressCalls map[jsonrpc.ID]struct{}

	// mu guards the protocol watch and the batches being answered.
	mu sync.Mutex
	// initID is the ID of the initialize (or server/discover) call seen
	// in either direction; its answer settles noBatch.
	initID       jsonrpc.ID
	initSet      bool
	initDiscover bool
	// noBatch is set once the session's protocol forbids batches
	// (2025-06-18 and later; also every protocol with server/discover).
	noBatch bool
	batches map[jsonrpc.ID]*batch
	// grace is Transport.AnswerGrace; with it, unanswered holds the calls
	// read and not answered yet, with when each was read, and answered,
	// when set (at the input's end), is closed once none is left (see
	// awaitAnswers).
	grace      time.Duration
	atEnd      func() // Transport.markEnded
	unanswered map[jsonrpc.ID]time.Time
	answered   chan struct{}
	// cut are the calls answered by answerCut at the input's end: the
	// SDK's own answer to one, should it come, is not written.
	cut map[jsonrpc.ID]bool

	// maxCalls is Transport.MaxCallsInFlight; calls are the calls read
	// and not answered yet, while it is set, and room, when set, is
	// closed once there are fewer than maxCalls (a Read waits on it).
	maxCalls int
	calls    map[jsonrpc.ID]struct{}
	room     chan struct{}
	// hup, when set, reports whether the input's writer has gone (on
	// Linux, for a pipe or socket): a Read waiting for room reads on
	// then, to the end, so that a client that left is seen to have left.
	hup func() bool

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// batch collects the answers to the calls of one incoming batch, which
// JSON-RPC sends back as one array.
type batch struct {
	unresolved map[jsonrpc.ID]int
	responses  []*jsonrpc.Response
}

func (c *conn) SessionID() string { return "" }

func (c *conn) readLoop(limit int) {
	br := bufio.NewReaderSize(c.r, readBuffer)
	for {
		f := readOne(br, limit)
		select {
		case c.incoming <- f:
		case <-c.closed:
			return
		}
		if f.err != nil && !c.goesOn(f) {
			return
		}
	}
}

// goesOn reports whether the stream goes on after frame f failed: its
// content was bad, it was read whole, and the connection is tolerant.
func (c *conn) goesOn(f frame) bool {
	return c.tolerant && f.code != 0
}

// refuse answers a bad frame as JSON-RPC 2.0 asks: an error response whose
// id is null, since none could be read.
func (c *conn) refuse(f frame) error {
	msg := "Parse error"
	if f.code == codeInvalidRequest {
		msg = "Invalid Request"
	}
	data, err := json.Marshal(struct {
		Version string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{Version: "2.0", Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{f.code, msg + ": " + strings.TrimPrefix(f.err.Error(), ErrInvalidFrame.Error()+": ")}})
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.out.Write(append(data, '\n'))
	return err
}

// JSON-RPC 2.0's codes for a frame that is not a message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// readOne reads and decodes the next frame.
func readOne(br *bufio.Reader, limit int) (f frame) {
	data, err := readFrame(br, limit)
	switch {
	case err != nil:
		f.err = err
		if errors.Is(err, ErrInvalidFrame) {
			f.code = codeParseError // too deep: its lines were read whole
		}
	default:
		f.msgs, f.batch, f.err = decodeFrame(data)
		if f.err != nil {
			f.err = &FrameError{Head: frameHead(data), err: f.err}
			f.code = codeInvalidRequest
			if !json.Valid(data) {
				f.code = codeParseError
			}
		}
	}
	return f
}

// readFrame returns the next JSON value of the stream: one line, or
// several when a value continues over lines. Blank lines are skipped. The
// returned slice is the caller's (never reused).
func readFrame(br *bufio.Reader, limit int) ([]byte, error) {
	var (
		acc     []byte
		sc      scanner
		checked int // len(acc) at the last validPrefix
	)
	for {
		line, err := readLine(br, limit-len(acc), limit)
		if err != nil {
			if err == io.EOF && len(bytes.TrimSpace(acc)) > 0 {
				return nil, fmt.Errorf("%w: %s", ErrInvalidFrame, "unexpected end of input inside a message")
			}
			return nil, err
		}
		if acc == nil {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			acc = line
		} else {
			acc = append(acc, line...)
		}
		// The nesting scan goes on where it stopped: each byte is scanned
		// once, however many lines a value takes.
		switch sc.feed(line) {
		case scanComplete:
			return acc, nil
		case scanTooDeep:
			return nil, fmt.Errorf("%w: %v", ErrInvalidFrame, errTooDeep)
		}
		// An open object, array or string goes on over the next line, if
		// what came so far can begin a value at all (else the decoder says
		// why not, now rather than after more input). Checked on the first
		// line and then each time the value has doubled, so that a message
		// over many lines costs linear time, not quadratic.
		if checked == 0 || len(acc) >= 2*checked {
			checked = len(acc)
			if !validPrefix(acc) {
				return acc, nil
			}
		}
	}
}

// readLine reads through the next newline into a new slice, failing with
// ErrFrameTooLarge past budget bytes.
func readLine(br *bufio.Reader, budget, limit int) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if limit > 0 && len(out)+len(chunk) > budget {
			return nil, fmt.Errorf("%w (%d bytes)", ErrFrameTooLarge, limit)
		}
		if err == nil || err == bufio.ErrBufferFull {
			if out == nil && err == nil {
				// The common case: the whole line was in the buffer.
				return append(make([]byte, 0, len(chunk)), chunk...), nil
			}
			out = append(out, chunk...)
			if err == nil {
				return out, nil
			}
			continue
		}
		// EOF or a read error: a last line without its newline still counts.
		out = append(out, chunk...)
		if len(bytes.TrimSpace(out)) > 0 && err == io.EOF {
			return out, nil
		}
		return nil, err
	}
}

// validPrefix reports whether data is the beginning of a JSON object or
// array that more input could complete.
func validPrefix(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return false
	}
	var syn *json.SyntaxError
	err := json.Unmarshal(t, new(json.RawMessage))
	return errors.As(err, &syn) && syn.Offset >= int64(len(t)) && strings.HasPrefix(syn.Error(), "unexpected end of JSON input")
}

type scanState int

const (
	scanComplete scanState = iota
	scanOpen
	scanTooDeep
)

// maxDepth is the nesting limit of the SDK's decoder.
const maxDepth = 1000

var errTooDeep = fmt.Errorf("exceeded maximum nesting depth of %d", maxDepth)

// complete reports whether data holds a finished JSON value as far as
// nesting goes (malformed JSON is left to the decoder), or nests deeper
// than maxDepth.
func complete(data []byte) scanState {
	var sc scanner
	return sc.feed(data)
}

// NestsDeeper reports whether the JSON text data nests objects and arrays
// more than limit deep (strings are skipped; whether data is valid JSON is
// not checked).
func NestsDeeper(data []byte, limit int) bool {
	sc := scanner{limit: limit}
	return sc.feed(data) == scanTooDeep
}

// scanner follows the nesting of a JSON text fed to it in pieces.
type scanner struct {
	limit             int // deepest nesting allowed; 0 means maxDepth
	depth             int
	inString, escaped bool
}

func (sc *scanner) max() int {
	if sc.limit > 0 {
		return sc.limit
	}
	return maxDepth
}

// feed scans the next piece and reports the state after it.
func (sc *scanner) feed(data []byte) scanState {
	for _, b := range data {
		if sc.inString {
			switch {
			case sc.escaped:
				sc.escaped = false
			case b == '\\':
				sc.escaped = true
			case b == '"':
				sc.inString = false
			}
			continue
		}
		switch b {
		case '"':
			sc.inString = true
		case '{', '[':
			sc.depth++
			if sc.depth > sc.max() {
				return scanTooDeep
			}
		case '}', ']':
			sc.depth--
		}
	}
	if sc.inString || sc.depth > 0 {
		return scanOpen
	}
	return scanComplete
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, nil
	}
	if c.maxCalls > 0 {
		if err := c.awaitRoom(ctx); err != nil {
			return nil, err
		}
	}
	var f frame
	for {
		if c.br != nil {
			select {
			case <-c.closed:
				return nil, io.EOF
			default:
			}
			f = readOne(c.br, c.limit)
			if f.err != nil {
				select {
				case <-c.closed:
					return nil, io.EOF // the read failed because of Close
				default:
				}
			}
		} else {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case f = <-c.incoming:
			case <-c.closed:
				return nil, io.EOF
			}
		}
		if f.err == nil && f.batch {
			if err := c.acceptBatch(f.msgs); err != nil {
				f.err, f.code = err, codeInvalidRequest // a well-formed frame: the stream can go on
			}
		}
		if f.err == nil {
			break
		}
		if f.err == io.EOF {
			c.atEnd()
			if c.grace > 0 {
				c.answerCut(c.awaitAnswers(ctx))
			}
		}
		if !c.goesOn(f) {
			return nil, f.err
		}
		if err := c.refuse(f); err != nil {
			return nil, err
		}
	}
	for _, m := range f.msgs {
		if c.maxCalls > 0 {
			c.noteInFlight(m)
		}
		c.watchRead(m)
		if c.gap > 0 {
			c.noteProgressCall(m)
		}
		if c.grace > 0 {
			c.noteCall(m)
		}
	}
	c.queue = f.msgs[1:]
	return f.msgs[0], nil
}

// acceptBatch refuses a batch the session's protocol forbids and records
// the calls in it, whose answers go back together.
func (c *conn) acceptBatch(msgs []jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.noBatch {
		return errors.New("JSON-RPC batching is not supported in 2025-06-18 and later")
	}
	if c.maxCalls > 0 && len(msgs) > c.maxCalls {
		// Read whole, a longer batch would pass MaxCallsInFlight.
		return fmt.Errorf("a JSON-RPC batch of %d messages; at most %d are taken", len(msgs), c.maxCalls)
	}
	var b *batch
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			continue
		}
		if b == nil {
			b = &batch{unresolved: map[jsonrpc.ID]int{}}
		}
		if _, dup := b.unresolved[req.ID]; dup {
			return fmt.Errorf("duplicate message ID %v in a batch", req.ID.Raw())
		}
		if _, dup := c.batches[req.ID]; dup {
			return fmt.Errorf("%w: batch contains previously seen request %v", jsonrpc2ErrInvalidRequest, req.ID.Raw())
		}
		b.unresolved[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
	}
	if b == nil {
		return nil
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.unresolved {
		c.batches[id] = b
	}
	return nil
}

// jsonrpc2ErrInvalidRequest is the JSON-RPC "invalid request" error.
var jsonrpc2ErrInvalidRequest = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}

// envelopeRoom is the room a message's buffer has for its envelope
// beside the params or result: {"jsonrpc":"2.0","id":…,"method":"…",
// "params":…} and a newline is 65 bytes besides the method and the ID (an
// ID of up to ~60 bytes fits), and json.Compact doubles a buffer it has
// to grow.
const envelopeRoom = 128

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var data []byte
	if resp, ok := msg.(*jsonrpc.Response); ok {
		done, inBatch := c.answer(resp)
		if inBatch {
			if done == nil {
				return nil // the rest of the batch is still running
			}
			var err error
			if data, err = encodeBatch(done); err != nil {
				return err
			}
		}
	} else {
		c.watchRequest(msg)
	}
	if data == nil {
		var ok bool
		switch m := msg.(type) {
		case *jsonrpc.Request:
			data, ok = appendRequest(make([]byte, 0, len(m.Params)+len(m.Method)+envelopeRoom), m)
		case *jsonrpc.Response:
			data, ok = appendResponse(make([]byte, 0, len(m.Result)+envelopeRoom), m)
		}
		if !ok {
			data = nil
		}
	}
	if data == nil {
		var err error
		if data, err = jsonrpc.EncodeMessage(msg); err != nil {
			return fmt.Errorf("marshaling message: %v", err)
		}
	}
	data = append(data, '\n')
	progress := false
	if c.gap > 0 {
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if c.askedProgress(m.ID) {
				c.waitProgressGap()
			}
		case *jsonrpc.Request:
			progress = !m.IsCall() && m.Method == "notifications/progress"
		}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(data)
	if progress {
		c.lastProgress.Store(int64(time.Since(c.start)) + 1)
	}
	return err
}

// maxCallsRemembered bounds the calls remembered for their progress or,
// with AnswerGrace, until answered (a call whose answer is never written
// is not forgotten otherwise).
const maxCallsRemembered = 4096

// progressTokenKey is the key of a progress token in a call's params.
var progressTokenKey = []byte(`"progressToken"`)

// noteProgressCall remembers m if it is a call that asked for progress.
func (c *conn) noteProgressCall(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() || !bytes.Contains(req.Params, progressTokenKey) {
		return
	}
	c.progressMu.Lock()
	if c.progressCalls == nil || len(c.progressCalls) >= maxCallsRemembered {
		c.progressCalls = make(map[jsonrpc.ID]struct{})
	}
	c.progressCalls[req.ID] = struct{}{}
	c.progressMu.Unlock()
}

// askedProgress reports whether id is a call that asked for progress, and
// forgets it.
func (c *conn) askedProgress(id jsonrpc.ID) bool {
	c.progressMu.Lock()
	defer c.progressMu.Unlock()
	_, ok := c.progressCalls[id]
	delete(c.progressCalls, id)
	return ok
}

// waitProgressGap sleeps until the connection's gap has passed since the
// last progress notification written and, where the writer is a pipe whose
// unread bytes can be counted, until its reader has read everything (up to
// progressDrainLimit): the notification then reaches the client in a read
// of its own, whatever the client's scheduling.
func (c *conn) waitProgressGap() {
	last := c.lastProgress.Load()
	if last == 0 {
		return
	}
	if d := time.Duration(last-1) + c.gap - time.Since(c.start); d > 0 {
		time.Sleep(d)
	}
	if c.unread == nil {
		return
	}
	for deadline := time.Now().Add(progressDrainLimit); c.unread() > 0 && time.Now().Before(deadline); {
		time.Sleep(progressDrainPoll)
	}
}

// progressDrainLimit bounds how long an answer waits for its client to
// read the progress written before it; progressDrainPoll is how often the
// pipe is looked at meanwhile.
const (
	progressDrainLimit = time.Second
	progressDrainPoll  = 500 * time.Microsecond
)

// answer files resp under its batch, if it answers a batched call: done
// is the whole batch once its last answer is in.
func (c *conn) answer(resp *jsonrpc.Response) (done []*jsonrpc.Response, inBatch bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchAnswerLocked(resp)
	if c.calls != nil {
		c.answeredLocked(resp.ID)
	}
	if c.cut[resp.ID] {
		delete(c.cut, resp.ID)
		return nil, true // answered already (answerCut): nothing to write
	}
	if c.unanswered != nil {
		c.settleLocked(resp.ID)
	}
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.unresolved[resp.ID]] = resp
	delete(b.unresolved, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.unresolved) == 0 {
		return b.responses, true
	}
	return nil, true
}

func encodeBatch(resps []*jsonrpc.Response) ([]byte, error) {
	buf := []byte{'['}
	for i, r := range resps {
		raw, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("encoding batch message: %w", err)
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, raw...)
	}
	return append(buf, ']'), nil
}

func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed) // first: a Read that fails on the closed file says EOF
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}

// noteCall records a call read (AnswerGrace), and forgets one the client
// cancelled: it gets no answer.
func (c *conn) noteCall(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.IsCall() {
		now := time.Now()
		c.mu.Lock()
		if c.unanswered == nil || len(c.unanswered) >= maxCallsRemembered {
			c.unanswered = map[jsonrpc.ID]time.Time{}
		}
		c.unanswered[req.ID] = now
		c.mu.Unlock()
		return
	}
	if req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.settleLocked(id)
	c.mu.Unlock()
}

// settleLocked forgets a call answered (or cancelled). c.mu is held.
func (c *conn) settleLocked(id jsonrpc.ID) {
	delete(c.unanswered, id)
	if len(c.unanswered) == 0 && c.answered != nil {
		close(c.answered)
		c.answered = nil
	}
}

// answerRecent is how shortly before the input's end a call must have
// been read for AnswerGrace to wait for its answer: a script's pipe
// delivers its last requests and the end together; a client closing while
// an older call runs has stopped waiting for it.
const answerRecent = 500 * time.Millisecond

// awaitAnswers waits, at most AnswerGrace, until every call read shortly
// before the input's end has been answered, the connection is closed or
// ctx is done. It returns the calls the end cuts: those read earlier (the
// SDK cancels them at the end), and, when the grace ran out, those still
// unanswered.
func (c *conn) awaitAnswers(ctx context.Context) (cut []jsonrpc.ID) {
	since := time.Now().Add(-answerRecent)
	c.mu.Lock()
	// Nothing is read after the end: the older calls are cut, and what is
	// left is what to wait for.
	for id, read := range c.unanswered {
		if read.Before(since) && c.cutLocked(id) {
			cut = append(cut, id)
		}
	}
	if len(c.unanswered) == 0 {
		c.mu.Unlock()
		return cut
	}
	c.answered = make(chan struct{})
	done := c.answered
	c.mu.Unlock()
	t := time.NewTimer(c.grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.mu.Lock()
		for id := range c.unanswered {
			if c.cutLocked(id) {
				cut = append(cut, id)
			}
		}
		c.mu.Unlock()
	case <-c.closed:
	case <-ctx.Done():
	}
	return cut
}

// CodeCut is the JSON-RPC error code of the answer a call gets when the
// input ended before it was answered (AnswerGrace): a server error, as
// the MCP transports use for a call cancelled by the connection's end.
const CodeCut = -32000

// cutLocked takes call id, unanswered at the input's end, for one the end
// cuts (answerCut answers it), and reports whether it did: from now on the
// SDK's own answer to it is not written (answer), so that it gets one
// answer whichever comes first. A call of a batch is left to the batch.
// c.mu is held.
func (c *conn) cutLocked(id jsonrpc.ID) bool {
	delete(c.unanswered, id)
	if _, inBatch := c.batches[id]; inBatch {
		return false
	}
	if c.cut == nil {
		c.cut = map[jsonrpc.ID]bool{}
	}
	c.cut[id] = true
	return true
}

// answerCut answers each call of ids, which the input's end cut
// (cutLocked), with an error saying so, so that a client still reading —
// a script whose pipe ended — tells a cut call from a lost one.
func (c *conn) answerCut(ids []jsonrpc.ID) {
	var out []byte
	for _, id := range ids {
		data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: CodeCut,
			Message: "the client closed its input before this call was answered, so it was cancelled (it may or may not have run)"}})
		if err == nil {
			out = append(append(out, data...), '\n')
		}
	}
	if len(out) == 0 {
		return
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, _ = c.out.Write(out) // the client may be gone: nothing to do about it
}

// awaitRoom waits until fewer than maxCalls calls read are unanswered (the
// client reads its answers), the client has closed its end (hup: what is
// left is read, up to the end, which ends the session), the connection is
// closed or ctx is done.
func (c *conn) awaitRoom(ctx context.Context) error {
	var tick <-chan time.Time
	for {
		c.mu.Lock()
		if len(c.calls) < c.maxCalls {
			c.mu.Unlock()
			return nil
		}
		if c.room == nil {
			c.room = make(chan struct{})
		}
		room := c.room
		c.mu.Unlock()
		if c.hup != nil {
			if c.hup() {
				c.hup = func() bool { return true } // for good
				return nil
			}
			if tick == nil {
				t := time.NewTicker(hupPoll)
				defer t.Stop()
				tick = t.C
			}
		}
		select {
		case <-room:
		case <-tick:
		case <-c.closed:
			return io.EOF
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// hupPoll is how often a Read waiting for room looks whether the client
// has closed its end.
const hupPoll = 50 * time.Millisecond

// noteInFlight counts m if it is a call, until its answer is written.
func (c *conn) noteInFlight(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[jsonrpc.ID]struct{}{}
	}
	c.calls[req.ID] = struct{}{}
	c.mu.Unlock()
}

// answeredLocked forgets call id, answered, and wakes a Read waiting for
// room. c.mu is held.
func (c *conn) answeredLocked(id jsonrpc.ID) {
	if _, ok := c.calls[id]; !ok {
		return
	}
	delete(c.calls, id)
	if c.room != nil && len(c.calls) < c.maxCalls {
		close(c.room)
		c.room = nil
	}
}
