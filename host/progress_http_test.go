package host

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scanAll passes stream through a progressScanBody in chunks of size n
// (the whole stream when n <= 0) with token 7 registered, and returns what
// came out and how many notifications for 7 were counted.
func scanAll(t testing.TB, stream []byte, n int) ([]byte, int) {
	r := newProgressRouter()
	tok, unregister := r.register("", func(*mcp.ProgressNotificationParams) {})
	defer unregister()
	if tok != 1 {
		t.Fatalf("first token = %d", tok)
	}
	body := &progressScanBody{ReadCloser: io.NopCloser(&chunked{data: stream, n: n}), progress: r}
	out, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return out, r.pending[tok]
}

type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := len(c.data)
	if c.n > 0 && c.n < k {
		k = c.n
	}
	k = copy(p[:min(k, len(p))], c.data)
	c.data = c.data[k:]
	return k, nil
}

const progressEvent = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d}}`

// TestProgressScanBody: every progress notification for a registered call
// is counted once, however the stream is cut into reads, whatever else the
// stream holds; the bytes pass through unchanged.
func TestProgressScanBody(t *testing.T) {
	var b strings.Builder
	b.WriteString(": a comment\n\nevent: message\nid: 1\n")
	b.WriteString("data: " + strings.Replace(progressEvent, "%d", "1", 1) + "\r\n\r\n")
	b.WriteString("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"notifications/progress\"}}\n\n")
	b.WriteString("data: " + strings.Replace(strings.Replace(progressEvent, "%d", "2", 1), `"progressToken":1`, `"progressToken":99`, 1) + "\n\n") // another call's
	b.WriteString("data: {\"jsonrpc\":\"2.0\",\n")                                                                                                 // one event over two data lines
	b.WriteString("data: \"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":3}}\n\n")
	b.WriteString("data: " + strings.Repeat("x", maxScannedEvent) + "\n\n") // too big: passed on unexamined
	b.WriteString("data: " + strings.Replace(progressEvent, "%d", "4", 1) + "\n\n")
	b.WriteString("data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n")
	stream := []byte(b.String())
	for _, n := range []int{0, 1, 2, 3, 7, 64, 4096} {
		out, count := scanAll(t, stream, n)
		if !bytes.Equal(out, stream) {
			t.Fatalf("chunks of %d: the stream changed", n)
		}
		if count != 3 {
			t.Errorf("chunks of %d: %d progress notifications counted for the call, want 3", n, count)
		}
	}
}

// FuzzProgressScanBody: any stream, cut anywhere, passes through byte for
// byte, and the scanner never keeps more than its bound.
//
//	go test ./host -run '^$' -fuzz FuzzProgressScanBody -fuzztime 60s
func FuzzProgressScanBody(f *testing.F) {
	f.Add([]byte("data: "+strings.Replace(progressEvent, "%d", "1", 1)+"\n\n"), 3)
	f.Add([]byte("data: {\ndata: \"method\":\"notifications/progress\"}\r\n\r\n: x\n"), 1)
	f.Fuzz(func(t *testing.T, stream []byte, n int) {
		r := newProgressRouter()
		_, unregister := r.register("", func(*mcp.ProgressNotificationParams) {})
		defer unregister()
		body := &progressScanBody{ReadCloser: io.NopCloser(&chunked{data: stream, n: n % 97}), progress: r}
		out, err := io.ReadAll(body)
		if err != nil || !bytes.Equal(out, stream) {
			t.Fatalf("stream changed or failed: %v", err)
		}
		if len(body.line) > maxScannedEvent || len(body.data) > maxScannedEvent {
			t.Fatalf("scanner kept %d+%d bytes", len(body.line), len(body.data))
		}
	})
}
