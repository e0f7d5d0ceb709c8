package jsonl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// graceServer is an SDK server with a tool that takes a moment ("slow")
// and one that runs until cancelled ("hang", which reports its end on
// hangEnded).
func graceServer(hangEnded chan<- error) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "grace", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		hangEnded <- ctx.Err()
		return nil, nil, ctx.Err()
	})
	return s
}

const graceInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

// TestAnswerGraceAnswersAScript: with AnswerGrace, the calls a client
// wrote before closing its end are answered before the session ends; a
// call it cancelled is not waited for (the grace is an hour: waiting for
// it would hang the test); a call still running when the grace is over is
// cancelled and the session ends.
func TestAnswerGraceAnswersAScript(t *testing.T) {
	for _, pollable := range []bool{true, false} {
		t.Run(fmt.Sprintf("pollable=%v", pollable), func(t *testing.T) {
			t.Run("answered before the end", func(t *testing.T) {
				script := graceInit +
					`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}` + "\n"
				answers := runScript(t, pollable, time.Hour, graceServer(make(chan error, 1)), script)
				if _, ok := answers[1]; !ok {
					t.Errorf("initialize was not answered: %v", answers)
				}
				if got := answers[2]; !strings.Contains(got, "slow done") {
					t.Errorf("the slow call's answer = %q, want its result", got)
				}
			})
			t.Run("a hung call is cancelled after the grace", func(t *testing.T) {
				hangEnded := make(chan error, 1)
				script := graceInit +
					`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{}}}` + "\n"
				answers := runScript(t, pollable, 300*time.Millisecond, graceServer(hangEnded), script)
				if _, ok := answers[1]; !ok {
					t.Errorf("initialize was not answered: %v", answers)
				}
				if err := within(t, 30*time.Second, "the hung call's end", func() error { return <-hangEnded }); err == nil {
					t.Error("the hung call ended without being cancelled")
				}
				// And it is answered so: a script tells a cut call from a
				// lost one (before, it got no line at all).
				if got := answers[2]; !strings.Contains(got, `"code":-32000`) || !strings.Contains(got, "closed its input before this call was answered") {
					t.Errorf("the hung call's answer = %q, want the error saying the input's end cut it", got)
				}
			})
		})
	}
}

// runScript serves s on a jsonl transport with grace, writes script to its
// input and closes it, and returns the answers written, by id, once the
// session has ended (a deadlock guard bounds it).
func runScript(t *testing.T, pollable bool, grace time.Duration, s *mcp.Server, script string) map[int]string {
	t.Helper()
	inR, inW := input(t, pollable)
	outR, outW := pipe(t)
	ss, err := s.Connect(context.Background(), &jsonl.Transport{Reader: inR, Writer: outW, AnswerGrace: grace}, nil)
	if err != nil {
		t.Fatal(err)
	}
	answers := map[int]string{}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil {
				if prev, twice := answers[*m.ID]; twice {
					t.Errorf("call %d answered twice: %s, then %s", *m.ID, prev, sc.Text())
				}
				answers[*m.ID] = sc.Text()
			}
		}
	}()
	if _, err := io.WriteString(inW, script); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	within(t, 30*time.Second, "the session's end", func() error { return ss.Wait() })
	outW.Close() // the session closed its end; this one is the test's copy
	within(t, 30*time.Second, "the answers", func() struct{} { <-read; return struct{}{} })
	return answers
}

// TestAnswerGraceWaitsOnlyForUnansweredCalls: once the input ends, Read
// reports the end only when every call read is answered, a call the
// client cancelled aside (it gets no answer), however long the grace.
func TestAnswerGraceWaitsOnlyForUnansweredCalls(t *testing.T) {
	for _, pollable := range []bool{true, false} {
		t.Run(fmt.Sprintf("pollable=%v", pollable), func(t *testing.T) {
			inR, inW := input(t, pollable)
			_, outW := pipe(t)
			c, err := (&jsonl.Transport{Reader: inR, Writer: outW, AnswerGrace: time.Hour}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go func() {
				io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"+
					`{"jsonrpc":"2.0","id":"two","method":"ping"}`+"\n"+
					`{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n"+
					`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`+"\n")
				inW.Close()
			}()
			ctx := context.Background()
			for i := 0; i < 4; i++ {
				if err := within(t, 30*time.Second, "a message", func() error { _, err := c.Read(ctx); return err }); err != nil {
					t.Fatalf("message %d: %v", i+1, err)
				}
			}
			answer := func(id any) {
				jid, err := jsonrpc.MakeID(id)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Write(ctx, &jsonrpc.Response{ID: jid, Result: json.RawMessage(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
			answer(float64(1))
			ended := make(chan error, 1)
			go func() { _, err := c.Read(ctx); ended <- err }()
			select {
			case err := <-ended:
				t.Fatalf("Read reported %v while call \"two\" was unanswered", err)
			case <-time.After(100 * time.Millisecond):
			}
			answer("two")
			if err := within(t, 30*time.Second, "the end after the last answer", func() error { return <-ended }); err != io.EOF {
				t.Fatalf("Read after the last answer = %v, want io.EOF", err)
			}
		})
	}
}

// TestAnswerGraceLeavesAnOlderCall: a call read well before the input's
// end (a client that closes while an older call runs, having stopped
// waiting for it) is not waited for, however long the grace.
func TestAnswerGraceLeavesAnOlderCall(t *testing.T) {
	for _, pollable := range []bool{true, false} {
		t.Run(fmt.Sprintf("pollable=%v", pollable), func(t *testing.T) {
			_, c, inW, outR := callReadOut(t, pollable, 9)
			ctx := context.Background()
			// Older than answerRecent (500 ms) when the input ends.
			time.Sleep(700 * time.Millisecond)
			inW.Close()
			if err := within(t, 30*time.Second, "the end", func() error { _, err := c.Read(ctx); return err }); err != io.EOF {
				t.Fatalf("Read at the end = %v, want io.EOF without waiting for the older call", err)
			}
			// It was answered with the error saying why, and the server's
			// own late answer is not written after it.
			if err := c.Write(ctx, &jsonrpc.Response{ID: mustID(t, float64(9)), Result: json.RawMessage(`{"late":true}`)}); err != nil {
				t.Fatal(err)
			}
			c.Close()
			lines := readAll(t, outR)
			if strings.Count(lines, `"id":9`) != 1 || !strings.Contains(lines, `"code":-32000`) || strings.Contains(lines, "late") {
				t.Errorf("what the client read: %q, want one error answer for call 9", lines)
			}
		})
	}
}

// TestEndedBeforeTheGrace: Ended's channel closes as soon as the input's
// end is read, while Read still waits for an unanswered call's answer
// (what a program's SIGTERM handling reads to skip its own grace); it is
// open before the end.
func TestEndedBeforeTheGrace(t *testing.T) {
	for _, pollable := range []bool{true, false} {
		t.Run(fmt.Sprintf("pollable=%v", pollable), func(t *testing.T) {
			tr, c, inW := callRead(t, pollable, 1)
			ctx := context.Background()
			select {
			case <-tr.Ended():
				t.Fatal("Ended closed before the input ended")
			default:
			}
			readEnd := make(chan error, 1)
			go func() { _, err := c.Read(ctx); readEnd <- err }()
			inW.Close()
			select {
			case <-tr.Ended():
			case err := <-readEnd:
				t.Fatalf("Read reported %v before Ended closed, with call 1 unanswered", err)
			case <-time.After(30 * time.Second):
				t.Fatal("Ended did not close at the input's end")
			}
			select {
			case err := <-readEnd:
				t.Fatalf("Read reported %v with call 1 unanswered (the grace is an hour)", err)
			default:
			}
			id, _ := jsonrpc.MakeID(float64(1))
			if err := c.Write(ctx, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			if err := within(t, 30*time.Second, "the end after the answer", func() error { return <-readEnd }); err != io.EOF {
				t.Fatalf("Read after the answer = %v, want io.EOF", err)
			}
		})
	}
}

// callRead connects a transport with an hour's AnswerGrace and reads one
// call, a ping with id, from its input; the connection is closed when
// the test ends, and the input's end is the caller's.
func callRead(t *testing.T, pollable bool, id int) (*jsonl.Transport, mcp.Connection, io.WriteCloser) {
	t.Helper()
	tr, c, inW, _ := callReadOut(t, pollable, id)
	return tr, c, inW
}

// callReadOut is callRead, with the read end of what the connection
// writes.
func callReadOut(t *testing.T, pollable bool, id int) (*jsonl.Transport, mcp.Connection, io.WriteCloser, io.Reader) {
	t.Helper()
	inR, inW := input(t, pollable)
	outR, outW := pipe(t)
	tr := &jsonl.Transport{Reader: inR, Writer: outW, AnswerGrace: time.Hour}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go io.WriteString(inW, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)+"\n")
	if err := within(t, 30*time.Second, "the call", func() error { _, err := c.Read(context.Background()); return err }); err != nil {
		t.Fatal(err)
	}
	return tr, c, inW, outR
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// readAll reads r to its end (the writer closed), bounded.
func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	var b []byte
	within(t, 30*time.Second, "the output", func() error { var err error; b, err = io.ReadAll(r); return err })
	return string(b)
}
