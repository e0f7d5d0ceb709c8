package jsonl

import (
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options choose and configure the transport New makes.
type Options struct {
	// SDK picks the SDK's own [mcp.IOTransport] instead of [Transport]:
	// the same wire behaviour, decoded by the SDK. A fallback, and how the
	// tests check that the two behave alike. What only Transport does is
	// lost with it: Tolerant, a [FrameError] with the head of a frame that
	// is not JSON-RPC, [ErrFrameTooLarge] (the SDK's error for it is
	// unexported), and the raw pipe I/O.
	SDK bool
	// MaxLineLength bounds the bytes buffered for one incoming message:
	// 0 means [mcp.DefaultMaxLineLength], a negative value no bound.
	MaxLineLength int
	// Tolerant is [Transport.Tolerant]. The SDK's transport has no such
	// mode: with SDK, a bad frame ends the connection.
	Tolerant bool
	// ProgressGap is [Transport.ProgressGap] (not with SDK).
	ProgressGap time.Duration
	// AnswerGrace is [Transport.AnswerGrace] (not with SDK).
	AnswerGrace time.Duration
	// MaxCallsInFlight is [Transport.MaxCallsInFlight] (not with SDK).
	MaxCallsInFlight int
}

// New returns the transport over a pair of pipes, r (messages in) and w
// (messages out): the one place where Switchboard chooses between this
// package and the SDK's own stdio transport. Closing the connection closes
// both pipes.
func New(r io.ReadCloser, w io.WriteCloser, o Options) mcp.Transport {
	if o.SDK {
		return &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: o.MaxLineLength}
	}
	return &Transport{Reader: r, Writer: w, MaxLineLength: o.MaxLineLength, Tolerant: o.Tolerant, ProgressGap: o.ProgressGap, AnswerGrace: o.AnswerGrace, MaxCallsInFlight: o.MaxCallsInFlight}
}
