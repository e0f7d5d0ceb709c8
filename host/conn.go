package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/tasks"
)

// stderrDrain bounds the wait for a dead server's last stderr lines.
const stderrDrain = 300 * time.Millisecond

// killBound bounds the wait for a SIGKILLed server's exit where nothing
// else bounds it: the supervisor's own fallback, a direct kill, comes at
// two seconds.
const killBound = 3 * time.Second

// startingGrace is how long a server stopped before it served (its
// handshake failed, timed out, or the host stopped it) has between SIGTERM
// and SIGKILL (proc.Process.Terminate).
const startingGrace = 500 * time.Millisecond

var (
	errStartupTimeout = errors.New("startup timeout")
	errSpawn          = errors.New("cannot start")
)

// conn is one live session with a server, plus the process behind it for
// stdio servers.
type conn struct {
	session    *mcp.ClientSession
	proc       *proc.Process // nil for remote servers
	protocol   string
	serverInfo string
	grace      time.Duration
	clock      Clock // the Host's
	// recordsWrites says whether writeProbe flags are reliable (stdio);
	// for remote transports a request is assumed written once sent.
	recordsWrites bool
	// logging: the server offers log messages; calls ask for them.
	logging bool
	// raw writes tools/call requests of the host's own on a stdio
	// connection (rawcall.go); tasks follows the connection's task calls
	// (internal/tasks) and knows which tools run as tasks.
	raw     *rawCalls
	tasks   *tasks.Adapter
	endLife func() // ends a remote transport's lifetime context

	done        chan struct{} // closed when the session ended
	sessionLost atomic.Bool   // the server forgot our session (HTTP 404)
	dropCounted atomic.Bool   // the breaker counted this connection's drop (callOn)
	tooLarge    atomic.Bool   // it ended on a message over the line limit
	// badFrame is the first frame read that was not JSON-RPC (stdio): the
	// SDK does not always keep it in the error chain of a failed Connect.
	badFrame atomic.Pointer[jsonl.FrameError]
	// firstWrite is how the first request written to a stdio server
	// went (writeOK, writeFailed; 0 before it), and answered says that a
	// remote server answered a request of the handshake with a 2xx status:
	// evidence that the server/discover probe reached it (probeRead).
	firstWrite atomic.Int32
	answered   atomic.Bool
	closeOnce  sync.Once
	closing    atomic.Bool // the host is closing it on purpose
	abandoned  atomic.Bool // its process outlived SIGKILL; a Close of its own runs
	mu         sync.Mutex
	reason     string
	byProcess  bool // reason is the process's exit, not a protocol failure
}

// watch closes done when the session ends, and ends the session when the
// process exits (a grandchild holding stdout open must not keep a dead
// server "connected").
func (c *conn) watch() {
	c.done = make(chan struct{})
	go func() {
		err := c.session.Wait()
		var syntax *json.SyntaxError
		if errors.Is(err, jsonl.ErrFrameTooLarge) {
			c.tooLarge.Store(true)
		}
		if c.proc != nil && !c.closing.Load() && !errors.As(err, &syntax) && !errors.Is(err, jsonl.ErrInvalidFrame) && !errors.Is(err, jsonl.ErrFrameTooLarge) {
			// The pipe usually closes a moment before the exit is reaped;
			// the exit status says more than "connection closed".
			select {
			case <-c.proc.Done():
				c.setProcessReason()
			case <-c.clock.After(250 * time.Millisecond):
			}
		}
		c.setReason(err)
		close(c.done)
	}()
	if c.proc != nil {
		go func() {
			select {
			case <-c.proc.Done():
				c.setProcessReason()
				_ = c.session.Close()
			case <-c.done:
			}
		}()
	}
}

func (c *conn) setProcessReason() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reason == "" {
		c.reason, c.byProcess = processExit(c.proc).Error(), true
	}
}

func processExit(p *proc.Process) error {
	if err := p.ExitErr(); err != nil {
		return fmt.Errorf("server process exited: %v", err)
	}
	return errors.New("server process exited")
}

func (c *conn) setReason(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var syntax *json.SyntaxError
	bad := errors.Is(err, jsonl.ErrInvalidFrame) || errors.Is(err, jsonl.ErrFrameTooLarge) || errors.As(err, &syntax)
	// A bad frame says more than the exit that follows it (a server that
	// writes garbage and dies): whichever of the two was noticed first, the
	// frame is the reason.
	if c.reason != "" && !(bad && c.byProcess) {
		return
	}
	c.byProcess = false
	switch {
	case err == nil:
		c.reason = "connection closed"
	case errors.Is(err, jsonl.ErrFrameTooLarge):
		c.reason = "server sent a message over the " + fmt.Sprint(mcp.DefaultMaxLineLength>>20) + " MiB limit (a result too large to take), so the connection was closed"
	case errors.Is(err, jsonl.ErrInvalidFrame):
		c.reason = "server wrote output that is not JSON-RPC: " + strings.TrimPrefix(err.Error(), jsonl.ErrInvalidFrame.Error()+": ")
	case errors.As(err, &syntax):
		c.reason = "server wrote output that is not JSON-RPC: " + err.Error()
	default:
		c.reason = withoutURLs(err) // an HTTP server's URL may hold a credential
	}
}

// strayStdoutError is a handshake that failed on a stray stdout line
// (strayStdout): retrying with another protocol revision cannot help.
type strayStdoutError string

func (e strayStdoutError) Error() string { return string(e) }

// strayStdout names a handshake that failed on fe, a line that is not
// JSON-RPC (a banner or log line meant for stderr): the server's first
// words on stdout are the protocol, and such a line ends the connection.
func strayStdout(fe *jsonl.FrameError) (string, bool) {
	if fe == nil {
		return "", false
	}
	return "wrote a non-JSON line on stdout before initialize: " + fe.Head +
		" (stdout carries only JSON-RPC; the server must log to stderr)", true
}

// dropReason says why the connection ended, with the server's last stderr
// line when there is one.
func (c *conn) dropReason() string {
	if c.sessionLost.Load() {
		return "session expired on the server (HTTP 404)"
	}
	c.mu.Lock()
	r, byProcess := c.reason, c.byProcess
	c.mu.Unlock()
	if byProcess {
		c.proc.WaitStderr(stderrDrain)
		if l := reasonLine(c.proc.StderrTail(reasonTailLines)); l != "" {
			r += ": " + l
		}
	}
	return r
}

func (c *conn) stderrTail(n int) []string {
	if c.proc == nil {
		return nil
	}
	return c.proc.StderrTail(n)
}

// close ends the session and reaps the process: stdin is closed first, then
// SIGTERM and SIGKILL reach the whole process group. Idempotent.
func (c *conn) close() {
	c.closing.Store(true)
	c.closeOnce.Do(func() {
		c.setReason(errors.New("closed by host"))
		if c.session != nil { // nil when the handshake failed
			_ = c.session.Close()
		}
		if c.endLife != nil {
			c.endLife()
		}
		if c.proc != nil && !c.abandoned.Load() {
			_ = c.proc.Close(c.grace)
		}
	})
}

func (c *conn) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// writeProbeKey marks a call's context so the stdio connection can record
// that its request reached the pipe (a call cut by a dropped transport is
// retried only if its request was never written, or the tool is idempotent).
type writeProbeKey struct{}

func withWriteProbe(ctx context.Context, flag *atomic.Bool) context.Context {
	return context.WithValue(ctx, writeProbeKey{}, flag)
}

// probeTransport wraps a stdio transport so that writes of tools/call
// requests set the caller's write-probe flag, and progress notifications
// are counted as they are read (progressRouter). It must not wrap the SDK's
// own HTTP connections, whose unexported methods a wrapper would hide: over
// HTTP, progressScanTransport counts them in the response streams instead.
type probeTransport struct {
	inner      mcp.Transport
	progress   *progressRouter
	server     string                            // whose progress notifications it reads
	badFrame   *atomic.Pointer[jsonl.FrameError] // if set, gets the first bad frame read
	firstWrite *atomic.Int32                     // if set, gets how the first request's write went
	raw        *rawCalls                         // if set, the host's own calls go through the connection
}

func (t probeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if t.raw != nil {
		t.raw.conn = c
	}
	return probeConn{c, t.progress, t.server, t.badFrame, t.firstWrite, t.raw}, nil
}

type probeConn struct {
	mcp.Connection
	progress   *progressRouter
	server     string
	badFrame   *atomic.Pointer[jsonl.FrameError]
	firstWrite *atomic.Int32
	raw        *rawCalls // if set, takes the answers to the host's own calls
}

// How the first request written to a stdio server went (conn.firstWrite).
const (
	writeOK int32 = 1 + iota
	writeFailed
)

func (c probeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	for err == nil && c.raw != nil {
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			break
		}
		if !c.raw.deliver(resp) {
			msg = c.raw.swap(resp)
			break
		}
		msg, err = c.Connection.Read(ctx)
	}
	if err == nil && c.progress != nil {
		c.progress.noteMessage(c.server, msg)
	}
	var fe *jsonl.FrameError
	if err != nil && c.badFrame != nil && errors.As(err, &fe) {
		c.badFrame.CompareAndSwap(nil, fe)
	}
	return msg, err
}

func (c probeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	var replaced *jsonrpc.Request
	if req, ok := msg.(*jsonrpc.Request); ok && c.raw != nil && req.IsCall() {
		if rp, ok := ctx.Value(replayKey{}).(*replay); ok && req.Method == "tools/call" && rp.used.CompareAndSwap(false, true) {
			// The round the server answered already (rawcall.go): a
			// ping goes in its place, and its answer is read as that one.
			c.raw.expect(req.ID, rp.result)
			replaced, msg = req, &jsonrpc.Request{ID: req.ID, Method: "ping"}
		} else if req.Method != "tools/call" {
			// From the handshake's or a list's small params, not a
			// call's arguments (which may be large).
			c.raw.noteIdentity(req.Params)
		}
	}
	err := c.Connection.Write(ctx, msg)
	if err != nil && replaced != nil {
		c.raw.unexpect(replaced.ID)
	}
	if c.firstWrite != nil && c.firstWrite.Load() == 0 {
		if _, ok := msg.(*jsonrpc.Request); ok {
			outcome := writeOK
			if err != nil {
				outcome = writeFailed
			}
			c.firstWrite.CompareAndSwap(0, outcome)
		}
	}
	if err == nil {
		if flag, ok := ctx.Value(writeProbeKey{}).(*atomic.Bool); ok {
			if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
				flag.Store(true)
			}
		}
	}
	return err
}

// probeRead reports whether a stdio server that died during its handshake
// had read the first request written to it, the server/discover probe:
// only then can the probe be what it died of (a server that dies on an
// unknown first message; go-sdk issue #1177). One that exits at once, on
// its own (a missing module, a refused sandbox, a bad flag), died with the
// probe unread or before it could be written, and a retry pinned to an
// older revision would only double its time to the error. Where the
// unread bytes cannot be counted (stdinWatch), it reports true, as the
// host did before it could tell.
func (c *conn) probeRead(stdin *stdinWatch) bool {
	if c.firstWrite.Load() != writeOK {
		return false
	}
	n, known := stdin.unread()
	return !known || n == 0
}

// answerWitness records, in answered, that the server answered a POST of
// the handshake with a 2xx status: the server/discover probe reached a
// remote server. Without it (DNS, a refused connection, 401, a refused
// address) the probe cannot be what failed, as the SDK falls back from a
// probe the server rejects by itself.
type answerWitness struct {
	base     http.RoundTripper
	answered *atomic.Bool
}

func (w answerWitness) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost && resp.StatusCode/100 == 2 {
		w.answered.Store(true)
	}
	return resp, err
}
