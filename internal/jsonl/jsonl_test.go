package jsonl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// pipe returns the two ends of a real OS pipe.
func pipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// input is a connection's input and the end that feeds it: an OS pipe,
// which the connection reads itself, or an io.Pipe, which it reads
// through its reader goroutine.
func input(t *testing.T, pollable bool) (io.ReadCloser, io.WriteCloser) {
	if pollable {
		return pipe(t)
	}
	return io.Pipe()
}

func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	return s
}

// within fails the test if f does not return in d (a deadlock guard, not
// a timing assertion).
func within[T any](t *testing.T, d time.Duration, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: no answer in %v", what, d)
		panic("unreachable")
	}
}

// TestInterop runs the SDK's own IOTransport on one side and jsonl on the
// other, both ways round, over OS pipes: calls, concurrent calls, and a
// close that ends the other side.
func TestInterop(t *testing.T) {
	for _, jsonlServer := range []bool{true, false} {
		t.Run(fmt.Sprintf("jsonlServer=%v", jsonlServer), func(t *testing.T) {
			ctx := context.Background()
			c2sR, c2sW := pipe(t)
			s2cR, s2cW := pipe(t)
			var st, ct mcp.Transport
			if jsonlServer {
				st = &jsonl.Transport{Reader: c2sR, Writer: s2cW}
				ct = &mcp.IOTransport{Reader: s2cR, Writer: c2sW}
			} else {
				st = &mcp.IOTransport{Reader: c2sR, Writer: s2cW}
				ct = &jsonl.Transport{Reader: s2cR, Writer: c2sW}
			}
			ss, err := echoServer().Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 50)
			for i := range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					want := fmt.Sprintf("hello %d ✓ \"quoted\"\n", i)
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": want}})
					if err != nil {
						errs <- err
						return
					}
					if got := res.Content[0].(*mcp.TextContent).Text; got != want {
						errs <- fmt.Errorf("echo %q came back %q", want, got)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			cs.Close()
			within(t, 10*time.Second, "server session end after the client closed", func() error { return ss.Wait() })
		})
	}
}

// rawClient speaks JSON lines to a server served over jsonl.
type rawClient struct {
	t   *testing.T
	w   io.Writer
	r   *bufio.Reader
	out chan string
}

func serveRaw(t *testing.T) (*rawClient, *mcp.ServerSession) {
	t.Helper()
	c2sR, c2sW := pipe(t)
	s2cR, s2cW := pipe(t)
	ss, err := echoServer().Connect(context.Background(), &jsonl.Transport{Reader: c2sR, Writer: s2cW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	rc := &rawClient{t: t, w: c2sW, r: bufio.NewReader(s2cR), out: make(chan string, 100)}
	go func() {
		defer close(rc.out)
		for {
			line, err := rc.r.ReadString('\n')
			if err != nil {
				return
			}
			rc.out <- line
		}
	}()
	return rc, ss
}

func (c *rawClient) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, s); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next line the server wrote ("" once it closed).
func (c *rawClient) next() string {
	c.t.Helper()
	select {
	case l := <-c.out:
		return l
	case <-time.After(10 * time.Second):
		c.t.Fatal("no line from the server in 10s")
		return ""
	}
}

func (c *rawClient) initialize(version string) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	if l := c.next(); !strings.Contains(l, `"protocolVersion":"`+version+`"`) {
		c.t.Fatalf("initialize answered %s", l)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
}

// TestFraming: what a peer may write between and inside messages.
func TestFraming(t *testing.T) {
	c, _ := serveRaw(t)
	c.initialize("2025-06-18")
	// Blank lines, CRLF, and a message pretty-printed over several lines
	// (not what the spec asks, but what the SDK accepts).
	c.send("\n  \r\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\r\n")
	if l := c.next(); !strings.Contains(l, `"id":2`) || !strings.Contains(l, `"result":{}`) {
		t.Errorf("ping after blank lines answered %q", l)
	}
	c.send("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 3,\n  \"method\": \"tools/call\",\n  \"params\": {\"name\": \"echo\", \"arguments\": {\"text\": \"a{b\\\"[\"}}\n}\n")
	if l := c.next(); !strings.Contains(l, `"id":3`) || !strings.Contains(l, `a{b\"[`) {
		t.Errorf("multi-line call answered %q", l)
	}
}

// TestBatch: a 2025-03-26 client may batch; the answers come back as one
// array. From 2025-06-18 a batch ends the connection, as in the SDK.
func TestBatch(t *testing.T) {
	c, _ := serveRaw(t)
	c.initialize("2025-03-26")
	c.send(`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"in a batch"}}}]` + "\n")
	l := c.next()
	var resps []map[string]any
	if err := json.Unmarshal([]byte(l), &resps); err != nil || len(resps) != 2 {
		t.Fatalf("batch answered %q (%v), want an array of 2 responses", l, err)
	}
	if resps[0]["id"] != "a" || resps[1]["id"] != float64(7) || !strings.Contains(l, "in a batch") {
		t.Errorf("batch answers out of order or wrong: %s", l)
	}

	c2, ss2 := serveRaw(t)
	c2.initialize("2025-06-18")
	c2.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n")
	within(t, 10*time.Second, "the session to end on a forbidden batch", func() error { return ss2.Wait() })
	for l := range c2.out {
		if strings.Contains(l, `"id":2`) && strings.Contains(l, "result") {
			t.Errorf("a batch was answered under 2025-06-18: %s", l)
		}
	}
}

// readOne reads the first message from a connection fed with input
// through a pipe that stays open (so a reader waiting for more input
// would hang: within catches it).
func readOne(t *testing.T, input string, limit int) (jsonrpc.Message, error) {
	t.Helper()
	r, w := pipe(t)
	conn, err := (&jsonl.Transport{Reader: r, Writer: nopWriteCloser{io.Discard}, MaxLineLength: limit}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go io.WriteString(w, input)
	type result struct {
		m   jsonrpc.Message
		err error
	}
	res := within(t, 10*time.Second, fmt.Sprintf("reading %.40q", input), func() result {
		m, err := conn.Read(context.Background())
		return result{m, err}
	})
	return res.m, res.err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestBadInput: what is not a message fails at once with ErrInvalidFrame
// (or ErrFrameTooLarge), without waiting for more input.
func TestBadInput(t *testing.T) {
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	for _, tc := range []struct {
		name, input string
		want        error
	}{
		{"log line on stdout", "Server started on stdio\n", jsonl.ErrInvalidFrame},
		{"log line with a brace", "starting {debug}\n", jsonl.ErrInvalidFrame},
		{"broken object on an open line", `{"jsonrpc": x` + "\n", jsonl.ErrInvalidFrame},
		{"raw newline inside a string", "{\"jsonrpc\":\"2.0\",\"method\":\"a\nb\"}\n", jsonl.ErrInvalidFrame},
		{"two values on a line", `{"jsonrpc":"2.0","method":"a"} {"jsonrpc":"2.0","method":"b"}` + "\n", jsonl.ErrInvalidFrame},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n", jsonl.ErrInvalidFrame},
		{"response without id", `{"jsonrpc":"2.0","result":{}}` + "\n", jsonl.ErrInvalidFrame},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}` + "\n", jsonl.ErrInvalidFrame},
		{"empty batch", "[]\n", jsonl.ErrInvalidFrame},
		{"too deep", `{"jsonrpc":"2.0","method":"x","params":` + deep + "}\n", jsonl.ErrInvalidFrame},
		{"too long", `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 5000) + `"}` + "\n", jsonl.ErrFrameTooLarge},
		{"too long over lines", "{\n" + strings.Repeat(`"a":1,`+"\n", 1000), jsonl.ErrFrameTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := readOne(t, tc.input, 4096)
			if !errors.Is(err, tc.want) {
				t.Errorf("read %v, %v; want %v", m, err, tc.want)
			}
		})
	}
	// The control: the same limit passes a message that fits, and a
	// "method" key with an empty name is still a request, as in the SDK.
	m, err := readOne(t, `{"jsonrpc":"2.0","id":1,"method":""}`+"\n", 4096)
	if req, ok := m.(*jsonrpc.Request); err != nil || !ok || req.Method != "" || !req.ID.IsValid() {
		t.Errorf(`{"method":""} read as %#v, %v`, m, err)
	}
	// Keys match exactly: "METHOD" is not "method", so this is no request
	// for ping (encoding/json would fold the case and make it one).
	m, err = readOne(t, `{"jsonrpc":"2.0","id":1,"METHOD":"ping"}`+"\n", 4096)
	if _, isReq := m.(*jsonrpc.Request); err != nil || isReq {
		t.Errorf(`{"METHOD":"ping"} read as %#v, %v; want a response (no method key)`, m, err)
	}
}

// TestLongMultiLineMessage: a message pretty-printed over 100,000 lines is
// read whole; each byte is scanned a bounded number of times (a rescan per
// line would take minutes here, and within would fail).
func TestLongMultiLineMessage(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\n\"jsonrpc\": \"2.0\",\n\"method\": \"notifications/message\",\n\"params\": {\"data\": [\n")
	for i := range 100_000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  %d", i)
	}
	b.WriteString("\n]}}\n")
	m, err := readOne(t, b.String(), 0)
	req, ok := m.(*jsonrpc.Request)
	if err != nil || !ok || req.Method != "notifications/message" {
		t.Fatalf("read %T %v", m, err)
	}
	var p struct{ Data []int }
	if err := json.Unmarshal(req.Params, &p); err != nil || len(p.Data) != 100_000 || p.Data[99_999] != 99_999 {
		t.Errorf("params: %d numbers, %v", len(p.Data), err)
	}
}

// TestCloseUnblocksRead: Close ends a Read that waits for input.
func TestCloseUnblocksRead(t *testing.T) {
	r, _ := pipe(t)
	conn, _ := (&jsonl.Transport{Reader: r, Writer: nopWriteCloser{io.Discard}}).Connect(context.Background())
	done := make(chan error, 1)
	go func() { _, err := conn.Read(context.Background()); done <- err }()
	time.Sleep(20 * time.Millisecond)
	conn.Close()
	err := within(t, 10*time.Second, "Read after Close", func() error { return <-done })
	if err == nil {
		t.Error("Read returned no error after Close")
	}
}

// A tolerant connection answers each bad frame with a JSON-RPC error whose
// id is null and reads on, whether it reads a pipe itself or through its
// reader goroutine; a message over the limit still ends it.
func TestTolerantAnswersBadFrames(t *testing.T) {
	for _, pollable := range []bool{true, false} {
		t.Run(fmt.Sprintf("pollable=%v", pollable), func(t *testing.T) {
			in, feed := input(t, pollable)
			outR, outW := pipe(t)
			c, err := (&jsonl.Transport{Reader: in, Writer: outW, Tolerant: true, MaxLineLength: 4096}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go io.WriteString(feed, "garbage\n"+`{"foo":1}`+"\n"+`{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n"+
				`{"jsonrpc":"2.0","method":"x","params":"`+strings.Repeat("a", 5000)+`"}`+"\n")
			m := within(t, 10*time.Second, "read past the bad frames", func() jsonrpc.Message {
				m, err := c.Read(context.Background())
				if err != nil {
					t.Errorf("read: %v", err)
				}
				return m
			})
			if req, ok := m.(*jsonrpc.Request); !ok || req.Method != "ping" {
				t.Fatalf("read %#v; want the ping after the bad frames", m)
			}
			br := bufio.NewReader(outR)
			for _, code := range []float64{-32700, -32600} {
				line, err := br.ReadBytes('\n')
				var r map[string]any
				if err != nil || json.Unmarshal(line, &r) != nil {
					t.Fatalf("answer: %q, %v", line, err)
				}
				e, _ := r["error"].(map[string]any)
				if id, has := r["id"]; !has || id != nil || e == nil || e["code"] != code {
					t.Errorf("answer %s; want id null and code %v", line, code)
				}
			}
			err = within(t, 10*time.Second, "read the oversized frame", func() error {
				_, err := c.Read(context.Background())
				return err
			})
			if !errors.Is(err, jsonl.ErrFrameTooLarge) {
				t.Errorf("oversized frame: %v; want ErrFrameTooLarge", err)
			}
		})
	}
}

// A tolerant connection answers a batch the session's protocol forbids
// (2025-06-18 and later) with an error, as any bad frame, and reads on
// (review 15).
func TestTolerantAnswersAForbiddenBatch(t *testing.T) {
	in, feed := pipe(t)
	outR, outW := pipe(t)
	c, err := (&jsonl.Transport{Reader: in, Writer: outW, Tolerant: true}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(feed, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`+"\n")
	m := within(t, 5*time.Second, "initialize", func() jsonrpc.Message { m, _ := c.Read(context.Background()); return m })
	res := &jsonrpc.Response{ID: m.(*jsonrpc.Request).ID, Result: []byte(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)}
	if err := c.Write(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	io.WriteString(feed, `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`+"\n"+`{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
	m = within(t, 5*time.Second, "read after the batch", func() jsonrpc.Message {
		m, err := c.Read(context.Background())
		if err != nil {
			t.Errorf("a tolerant connection ended on a batch: %v", err)
		}
		return m
	})
	if req, ok := m.(*jsonrpc.Request); !ok || req.ID.Raw() != int64(3) {
		t.Errorf("read %#v; want the ping with id 3", m)
	}
	br := bufio.NewReader(outR)
	line := within(t, 5*time.Second, "the answer to the batch", func() []byte {
		br.ReadBytes('\n') // the initialize result
		line, _ := br.ReadBytes('\n')
		return line
	})
	if !strings.Contains(string(line), `"id":null`) || !strings.Contains(string(line), `-32600`) {
		t.Errorf("answer to the batch: %s", line)
	}
}

// A message many times the read buffer, on both kinds of reader, arrives
// whole and byte for byte, as do the small ones around it.
func TestLongMessagesSpanReads(t *testing.T) {
	for _, pollable := range []bool{true, false} {
		t.Run(fmt.Sprintf("pollable=%v", pollable), func(t *testing.T) {
			in, feed := input(t, pollable)
			_, outW := pipe(t)
			c, err := (&jsonl.Transport{Reader: in, Writer: outW}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sizes := []int{10, 16<<10 - 40, 16 << 10, 300 << 10, 5}
			go func() {
				for i, n := range sizes {
					fmt.Fprintf(feed, `{"jsonrpc":"2.0","id":%d,"method":"x","params":{"s":"%s"}}`+"\n", i, strings.Repeat(string(rune('a'+i)), n))
				}
			}()
			for i, n := range sizes {
				m := within(t, 10*time.Second, "read a message", func() jsonrpc.Message {
					m, err := c.Read(context.Background())
					if err != nil {
						t.Errorf("message %d: %v", i, err)
					}
					return m
				})
				req, ok := m.(*jsonrpc.Request)
				var p struct{ S string }
				if !ok || json.Unmarshal(req.Params, &p) != nil || p.S != strings.Repeat(string(rune('a'+i)), n) {
					t.Fatalf("message %d (%d bytes of params) did not arrive whole", i, n)
				}
			}
		})
	}
}

// With MaxCallsInFlight, a batch — still allowed before 2025-06-18 — of
// more messages than that is refused as a bad frame, and the calls after
// it are read: read whole, a 16 MiB batch of calls would have passed the
// bound by 150,000 calls at once.
func TestLongBatchRefused(t *testing.T) {
	in, feed := pipe(t)
	outR, outW := pipe(t)
	c, err := (&jsonl.Transport{Reader: in, Writer: outW, Tolerant: true, MaxCallsInFlight: 2}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(feed, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`+"\n"+
		`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`+"\n")
	m := within(t, 5*time.Second, "read after the long batch", func() jsonrpc.Message {
		m, err := c.Read(context.Background())
		if err != nil {
			t.Errorf("read: %v", err)
		}
		return m
	})
	if req, ok := m.(*jsonrpc.Request); !ok || req.ID.Raw() != int64(4) {
		t.Errorf("read %#v; want the ping with id 4 (the batch of 2)", m)
	}
	br := bufio.NewReader(outR)
	line := within(t, 5*time.Second, "the answer to the long batch", func() []byte {
		line, _ := br.ReadBytes('\n')
		return line
	})
	if !strings.Contains(string(line), `"id":null`) || !strings.Contains(string(line), `-32600`) || !strings.Contains(string(line), "batch of 3 messages") {
		t.Errorf("answer to the long batch: %s", line)
	}
}
