package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/tasks"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

func TestMain(m *testing.M) {
	testserver.MaybeRun()
	os.Exit(m.Run())
}

const legacy = "2025-11-25"

// A world is the tasks test server, reached over one transport through
// the adapter by an SDK client that answers questions and collects
// progress.
type world struct {
	cs      *mcp.ClientSession
	log     string // the server's -log file
	mu      sync.Mutex
	shown   []string // progress messages
	asked   []string // questions
	protoOf string
}

type setup struct {
	protocol  string // "" (the newest: 2026-07-28) or legacy
	transport string // stdio, http, http-json
	opts      *tasks.Options
	noAdapter bool
	args      []string
	answer    string // the colour given; "" declines
}

func (s setup) name() string {
	p := s.protocol
	if p == "" {
		p = "2026-07-28"
	}
	return p + "/" + s.transport
}

// every is each revision on each transport. (Not the legacy HTTP+SSE
// transport: the Go SDK's SSE server refuses methods it does not know,
// tasks/* included, before the server sees them; host's
// TestServerEverythingTaskTool covers it with server-everything.)
func every() []setup {
	var out []setup
	for _, p := range []string{legacy, ""} {
		for _, tr := range []string{"stdio", "http", "http-json"} {
			out = append(out, setup{protocol: p, transport: tr})
		}
	}
	return out
}

func connect(t *testing.T, s setup) *world {
	t.Helper()
	w := &world{log: filepath.Join(t.TempDir(), "tasks.log")}
	args := append([]string{"-log", w.log}, s.args...)
	if s.protocol != "" {
		args = append(args, "-protocol", s.protocol)
	}
	a := tasks.New(s.opts)
	var transport mcp.Transport
	switch s.transport {
	case "stdio":
		name, argv := testserver.Command("tasks", args...)
		transport = &mcp.CommandTransport{Command: exec.Command(name, argv...)}
		if !s.noAdapter {
			transport = tasks.Wrap(transport, a)
		}
	case "http", "http-json":
		// The SDK's HTTP server offers 2026-07-28 only without sessions.
		srv := testhttp.Start(t, "tasks", testhttp.Options{Args: args, JSONResponse: s.transport == "http-json", Stateless: s.protocol == ""})
		rt := http.DefaultTransport
		if !s.noAdapter {
			rt = a.RoundTripper(rt)
		}
		transport = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: rt}, MaxRetries: 1}
		t.Cleanup(a.Close)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "tasks-test", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			w.mu.Lock()
			w.asked = append(w.asked, req.Params.Message)
			w.mu.Unlock()
			if s.answer == "" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colour": s.answer}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			w.mu.Lock()
			w.shown = append(w.shown, req.Params.Message)
			w.mu.Unlock()
		},
	})
	// The legacy SSE transport's stream lives as long as Connect's context.
	cs, err := client.Connect(ctxFor(t, 5*time.Minute), transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	w.cs = cs
	w.protoOf = cs.InitializeResult().ProtocolVersion
	return w
}

func (w *world) call(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	params.SetProgressToken("tok-" + tool)
	return w.cs.CallTool(ctx, params)
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// waitShown waits (a while) for n progress messages and returns those
// shown.
func (w *world) waitShown(n int) string {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		shown := strings.Join(w.shown, "; ")
		enough := len(w.shown) >= n
		w.mu.Unlock()
		if enough || time.Now().After(deadline) {
			return shown
		}
	}
}

func (w *world) logText() string {
	b, _ := os.ReadFile(w.log)
	return string(b)
}

// waitLog waits until the server's log holds s.
func (w *world) waitLog(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(w.logText(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's log never held %q:\n%s", s, w.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// giveUp calls never and cancels the call once the server's log holds
// when; the call must end with the cancellation.
func (w *world) giveUp(t *testing.T, when string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := w.call(ctx, "never", nil)
		done <- err
	}()
	w.waitLog(t, when)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("call: %v, want context.Canceled", err)
	}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A required task tool completes: the call returns the task's result, its
// status messages arrived as progress, and the server saw a task.
func TestTaskCompletes(t *testing.T) {
	t.Parallel()
	for _, s := range every() {
		t.Run(s.name(), func(t *testing.T) {
			t.Parallel()
			w := connect(t, s)
			res, err := w.call(ctxFor(t, 30*time.Second), "work", map[string]any{"text": "hello", "stages": 3})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if got := textOf(res); got != "worked: hello" || res.IsError {
				t.Fatalf("result %q (isError %v), want \"worked: hello\"", got, res.IsError)
			}
			// The SDK hands notifications to their handler concurrently
			// with the response read after them.
			want := "stage 1 of 3; stage 2 of 3; stage 3 of 3; done"
			if shown := w.waitShown(4); shown != want {
				t.Errorf("progress shown: %q, want the task's status messages: %q", shown, want)
			}
			rev := s.protocol
			if rev == "" {
				rev = "2026-07-28"
			}
			if !strings.Contains(w.logText(), "call work task "+rev) || w.protoOf != rev {
				t.Errorf("the server did not get a task-augmented call of %s (protocol %s):\n%s", rev, w.protoOf, w.logText())
			}
		})
	}
}

// Without the adapter, the same call fails: the server refuses a call
// that is not a task (what the adapter's tests would miss if it did
// nothing).
func TestWithoutAdapterTheCallFails(t *testing.T) {
	t.Parallel()
	for _, s := range []setup{{protocol: legacy, transport: "stdio"}, {transport: "http"}} {
		s.noAdapter = true
		t.Run(s.name(), func(t *testing.T) {
			t.Parallel()
			w := connect(t, s)
			_, err := w.call(ctxFor(t, 30*time.Second), "work", map[string]any{"text": "x"})
			if err == nil || !strings.Contains(w.logText(), "call work refused") {
				t.Fatalf("call without the adapter: %v, want the server's refusal\n%s", err, w.logText())
			}
		})
	}
}

// A plain tool and an optional one run as ordinary calls by default; with
// Optional, the optional one runs as a task (2025-11-25, where the client
// chooses; on 2026-07-28 the server chooses).
func TestOptionalAndPlain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    setup
		want string
	}{
		{setup{protocol: legacy, transport: "stdio"}, "plainly"},
		{setup{protocol: legacy, transport: "stdio", opts: &tasks.Options{Optional: true}}, "as a task"},
		{setup{protocol: legacy, transport: "http", opts: &tasks.Options{Optional: true}}, "as a task"},
		{setup{transport: "stdio"}, "as a task"},
	} {
		t.Run(fmt.Sprintf("%s/optional=%v", c.s.name(), c.s.opts != nil), func(t *testing.T) {
			t.Parallel()
			w := connect(t, c.s)
			ctx := ctxFor(t, 30*time.Second)
			res, err := w.call(ctx, "maybe", nil)
			if err != nil || textOf(res) != c.want {
				t.Fatalf("maybe: %v %v, want %q", res, err, c.want)
			}
			res, err = w.call(ctx, "plain", map[string]any{"text": "p"})
			if err != nil || textOf(res) != "plain: p" {
				t.Fatalf("plain: %v %v", res, err)
			}
		})
	}
}

// A 2026-07-28 task that has ended by the time the server answers the
// call: its CreateTaskResult says so without the outcome, which tasks/get
// then gives.
func TestCreatedEnded(t *testing.T) {
	t.Parallel()
	w := connect(t, setup{transport: "stdio", args: []string{"-ended-create"}})
	ctx := ctxFor(t, 30*time.Second)
	res, err := w.call(ctx, "maybe", nil)
	if err != nil || textOf(res) != "as a task" {
		t.Fatalf("maybe: %v %v, want \"as a task\"", res, err)
	}
	if _, err := w.call(ctx, "fail", nil); err == nil || !strings.Contains(err.Error(), "the tool broke") {
		t.Fatalf("fail: %v, want the task's error (the tool broke)", err)
	}
}

// input_required: the server's question reaches the client's elicitation
// handler (2025-11-25: on tasks/result's stream; 2026-07-28: as an input
// request the adapter hands the SDK and answers with tasks/update).
func TestInputRequired(t *testing.T) {
	t.Parallel()
	for _, s := range every() {
		s.answer = "teal"
		t.Run(s.name(), func(t *testing.T) {
			t.Parallel()
			w := connect(t, s)
			res, err := w.call(ctxFor(t, 30*time.Second), "ask", nil)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if got := textOf(res); got != "colour: teal" {
				t.Fatalf("result %q, want \"colour: teal\"", got)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if len(w.asked) != 1 || w.asked[0] != "Which colour?" {
				t.Errorf("questions asked: %q, want one: Which colour?", w.asked)
			}
		})
	}
}

// A task that fails ends the call with the task's JSON-RPC error.
func TestTaskFails(t *testing.T) {
	t.Parallel()
	for _, s := range every() {
		t.Run(s.name(), func(t *testing.T) {
			t.Parallel()
			w := connect(t, s)
			_, err := w.call(ctxFor(t, 30*time.Second), "fail", nil)
			if err == nil || !strings.Contains(err.Error(), "the tool broke") {
				t.Fatalf("call: %v, want the task's error (the tool broke)", err)
			}
		})
	}
}

// Bad answers end the call with a clear error naming the task: a ttl that
// passes, tasks/get answered with garbage, a task the server does not
// know; a task given up that may still run there is cancelled.
func TestBadTasks(t *testing.T) {
	t.Parallel()
	for _, s := range []setup{{protocol: legacy, transport: "stdio"}, {transport: "stdio"}, {protocol: legacy, transport: "http"}, {transport: "http-json"}} {
		for _, c := range []struct{ tool, want string }{
			{"expire", "its ttl of 300ms passed while it was still working; it was cancelled"},
			{"garbage", "the server answered tasks/get with something that is not a task"},
			{"unknown", "the server no longer knows the task (expired or lost): Failed to retrieve task: Task not found"},
		} {
			t.Run(s.name()+"/"+c.tool, func(t *testing.T) {
				t.Parallel()
				w := connect(t, s)
				_, err := w.call(ctxFor(t, 30*time.Second), c.tool, nil)
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "task ") {
					t.Fatalf("call: %v, want an error naming the task: %s", err, c.want)
				}
				if c.tool == "expire" || c.tool == "garbage" {
					w.waitLog(t, "cancel ")
				}
			})
		}
	}
}

// A call given up (its context ends: a timeout, a client gone) cancels
// its task with tasks/cancel.
func TestGivingUpCancelsTheTask(t *testing.T) {
	t.Parallel()
	for _, s := range every() {
		t.Run(s.name(), func(t *testing.T) {
			t.Parallel()
			w := connect(t, s)
			w.giveUp(t, "polled never") // once the client follows the task
			w.waitLog(t, "cancel ")
			// The connection still works.
			res, err := w.call(ctxFor(t, 30*time.Second), "plain", map[string]any{"text": "after"})
			if err != nil || textOf(res) != "plain: after" {
				t.Fatalf("a call after: %v %v", res, err)
			}
		})
	}
}

// A call given up before its answer came, whose server then answers with
// a task all the same, has that task cancelled. (Over sessions only: a
// stateless 2026-07-28 server cannot tie the client's notifications/cancelled
// to the call it holds, so -hold-create would hold for ever.)
func TestGivingUpBeforeTheTaskCancelsIt(t *testing.T) {
	t.Parallel()
	for _, s := range every() {
		if s.protocol == "" && s.transport != "stdio" {
			continue
		}
		s.args = []string{"-hold-create"}
		t.Run(s.name(), func(t *testing.T) {
			t.Parallel()
			w := connect(t, s)
			w.giveUp(t, "call never task") // before the server answers
			w.waitLog(t, "answered never after the client gave up")
			w.waitLog(t, "cancel ")
		})
	}
}

// Concurrent task calls on one connection each get their own result.
func TestConcurrentTasks(t *testing.T) {
	t.Parallel()
	for _, s := range []setup{{protocol: legacy, transport: "stdio"}, {transport: "http"}} {
		t.Run(s.name(), func(t *testing.T) {
			t.Parallel()
			w := connect(t, s)
			ctx := ctxFor(t, 60*time.Second)
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					want := fmt.Sprintf("n%d", i)
					res, err := w.call(ctx, "work", map[string]any{"text": want, "stages": 2})
					switch {
					case err != nil:
						errs <- err
					case textOf(res) != "worked: "+want:
						errs <- fmt.Errorf("got %q, want worked: %s", textOf(res), want)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
