package gateway

import (
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// stdioProgressGap is how long [Stdio] holds the answer to a call that
// asked for progress, counted from the last progress notification written
// before it: the client reading the pipe wakes up and reads the
// notification first. On Linux, when out is a pipe, the answer also waits
// until the client has read the notification (jsonl.Transport.ProgressGap).
const stdioProgressGap = 5 * time.Millisecond

// StdioAnswerGrace is how long, once in ends, the calls [Stdio] read just
// before the end (within half a second of it) get to be answered before
// the session ends and what is still running is cancelled
// (jsonl.Transport.AnswerGrace). Longer than the first tools/list's wait
// for servers still starting (serve's 2 s), so a script's list is
// answered.
const StdioAnswerGrace = 3 * time.Second

// StdioMaxCalls is how many calls of its client [Stdio] holds unanswered:
// past it, nothing more is read until one is answered, so a client that
// writes calls without reading their answers finds its writes waiting
// instead of the gateway holding every call it sent
// (jsonl.Transport.MaxCallsInFlight).
const StdioMaxCalls = 256

// Stdio returns the transport `switchboard serve --stdio` serves on, for
// [Gateway.Run]: one JSON-RPC message per line on in and out (usually
// os.Stdin and os.Stdout). A client's malformed line is answered with a
// JSON-RPC error instead of ending its session, and the answer to a call
// that asked for progress waits until 5 ms after the last progress
// notification written for it (the TypeScript SDK's client, 1.x, drops a
// notification it reads together with its call's answer). While
// [StdioMaxCalls] calls are unanswered, nothing more is read. When in ends
// (the client closed it), the calls read just before the end are answered
// first, for up to [StdioAnswerGrace]: a script that writes its requests
// and closes the pipe gets its answers. A call read earlier (a client
// that hangs up mid-call) is cancelled at once, as is one the client
// cancelled.
//
// When in is os.Stdin or out is os.Stdout and it is a pipe or a socket (as
// when an MCP client starts the program), it is read or written on a
// non-blocking duplicate of the descriptor through the Go runtime's
// poller; nothing else may read stdin or write stdout meanwhile. Call
// restore after Run returns: it puts the pipes back in blocking mode.
//
// Prefer it to [mcp.StdioTransport] in a program built with Go 1.26: a
// goroutine that enters a blocking read of stdin at the moment a garbage
// collection stops the world can hold the whole process, and so the
// call's answer, for 60 s (docs/benchmarks.md, "A call that stalled for a
// minute"). A read through the poller does not block in the kernel.
func Stdio(in io.Reader, out io.Writer) (t mcp.Transport, restore func()) {
	var restores []func()
	r, ok := in.(io.ReadCloser)
	if !ok {
		r = io.NopCloser(in)
	}
	if in == os.Stdin {
		stdin, undo := jsonl.Stdin()
		restores = append(restores, undo)
		r = stdin
	}
	var w io.WriteCloser = nopWriteCloser{out}
	if out == os.Stdout {
		stdout, undo := jsonl.Stdout()
		restores = append(restores, undo)
		if stdout != os.Stdout {
			w = stdout // a duplicate: closing it leaves fd 1 open
		}
	}
	t = jsonl.New(r, w, jsonl.Options{Tolerant: true, ProgressGap: stdioProgressGap, AnswerGrace: StdioAnswerGrace, MaxCallsInFlight: StdioMaxCalls})
	return t, func() {
		for _, undo := range restores {
			undo()
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
