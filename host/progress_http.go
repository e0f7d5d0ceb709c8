package host

import (
	"bytes"
	"io"
	"mime"
	"net/http"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// Over HTTP the SDK's connections are its own (a wrapper would hide their
// unexported methods), so the progress notifications of a call are counted
// where their bytes pass: in the event streams the HTTP client reads. A
// server sends a call's progress on the same stream as its result, before
// it (Streamable HTTP's POST response, or the legacy transport's one event
// stream), and the body is read in order, so every notification is counted
// before the SDK has the result (see progressRouter).

// progressScanTransport counts the progress notifications in every
// text/event-stream response body it returns.
type progressScanTransport struct {
	base     http.RoundTripper
	progress *progressRouter
	server   string // whose streams it reads
}

func (t progressScanTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = &progressScanBody{ReadCloser: resp.Body, progress: t.progress, server: t.server}
	}
	return resp, err
}

// maxScannedEvent bounds the data of one event the scanner keeps: progress
// notifications are small, and a larger event is passed on unexamined.
const maxScannedEvent = 64 << 10

// progressScanBody passes an event stream through unchanged, noting each
// progress notification when the event that carries it ends.
type progressScanBody struct {
	io.ReadCloser
	progress *progressRouter
	server   string
	line     []byte // the current line so far
	data     []byte // the current event's data lines, joined
	tooBig   bool   // the current line or event outgrew maxScannedEvent
}

func (b *progressScanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.scan(p[:n])
	return n, err
}

func (b *progressScanBody) scan(chunk []byte) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			b.keep(chunk)
			return
		}
		b.keep(chunk[:i])
		b.endLine()
		chunk = chunk[i+1:]
	}
}

func (b *progressScanBody) keep(part []byte) {
	if b.tooBig || len(b.line)+len(part) > maxScannedEvent {
		b.tooBig = true
		return
	}
	b.line = append(b.line, part...)
}

// endLine handles one line of the stream (SSE: "data: …" lines make up an
// event, a blank line ends it).
func (b *progressScanBody) endLine() {
	line := bytes.TrimSuffix(b.line, []byte("\r"))
	b.line = b.line[:0]
	switch {
	case len(line) == 0:
		if !b.tooBig && len(b.data) > 0 {
			b.event(b.data)
		}
		b.data, b.tooBig = b.data[:0], false
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
		if len(b.data)+len(v)+1 > maxScannedEvent {
			b.tooBig = true
			return
		}
		if len(b.data) > 0 {
			b.data = append(b.data, '\n')
		}
		b.data = append(b.data, v...)
	}
}

func (b *progressScanBody) event(data []byte) {
	if !bytes.Contains(data, []byte(`"notifications/progress"`)) {
		return // the cheap test first: most events are not progress
	}
	if msg, err := jsonl.Decode(data); err == nil {
		b.progress.noteMessage(b.server, msg)
	}
}
