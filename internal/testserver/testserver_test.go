package testserver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.MaybeRun()
	os.Exit(m.Run())
}

// legacy pins a session to the last protocol before 2026-07-28, where
// server-to-client requests and logging/setLevel still exist.
const legacy = "2025-11-25"

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}

// child is a test server process connected through the SDK's CommandTransport.
type child struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	t      *mcp.CommandTransport
}

func newChild(t *testing.T, name string, args ...string) *child {
	t.Helper()
	exe, argv := testserver.Command(name, args...)
	cmd := exec.Command(exe, argv...)
	c := &child{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	cmd.WaitDelay = time.Second
	c.t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 300 * time.Millisecond}
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	return c
}

type connectOpts struct {
	version string
	client  *mcp.ClientOptions
	timeout time.Duration
}

// connect starts server name and connects a client to it.
func connect(t *testing.T, name string, args ...string) (*mcp.ClientSession, *child) {
	t.Helper()
	return connectWith(t, connectOpts{}, name, args...)
}

func connectWith(t *testing.T, o connectOpts, name string, args ...string) (*mcp.ClientSession, *child) {
	t.Helper()
	c := newChild(t, name, args...)
	cs, err := c.connect(o)
	if err != nil {
		t.Fatalf("connecting to %s: %v (stderr: %q)", name, err, c.stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, c
}

func (c *child) connect(o connectOpts) (*mcp.ClientSession, error) {
	opts := o.client
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	if opts.Capabilities == nil {
		opts.Capabilities = &mcp.ClientCapabilities{}
	}
	if o.timeout == 0 {
		o.timeout = 10 * time.Second
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "testserver-test", Version: "v0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	return client.Connect(ctx, c.t, &mcp.ClientSessionOptions{ProtocolVersion: o.version})
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s at %s: %v", tool, time.Now().Format("15:04:05.000"), err)
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var echoTools = []string{
	"add", "add_prompt", "add_resource", "add_tool", "ask", "big", "cwd", "destructive", "echo", "env",
	"error_result", "headers", "idempotent_side_effect", "image", "log", "pid", "roots", "sample",
	"side_effect", "slow", "stderr",
}

func TestEchoBasics(t *testing.T) {
	t.Parallel()
	// Both protocol generations: the SDK's default probes with server/discover
	// (2026-07-28); legacy uses initialize.
	for _, version := range []string{"", legacy} {
		t.Run("version="+version, func(t *testing.T) {
			t.Parallel()
			cs, _ := connectWith(t, connectOpts{version: version}, "echo")
			if diff := cmp.Diff(echoTools, toolNames(t, cs)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			tests := []struct {
				tool    string
				args    map[string]any
				want    string
				isError bool
			}{
				{"echo", map[string]any{"text": "hi there"}, "hi there", false},
				{"add", map[string]any{"a": 2, "b": 3.5}, "5.5", false},
				{"error_result", map[string]any{"message": "boom"}, "boom", true},
				{"error_result", nil, "something went wrong", true},
				{"destructive", map[string]any{"target": "prod"}, "deleted prod (not really)", false},
				{"env", map[string]any{"names": []string{"TESTSERVER_SURELY_UNSET"}}, "TESTSERVER_SURELY_UNSET unset", false},
				{"pid", nil, "", false}, // checked below
				{"headers", nil, "no headers", false},
			}
			for _, tt := range tests {
				res := call(t, cs, tt.tool, tt.args)
				if res.IsError != tt.isError {
					t.Errorf("%s: isError = %v, want %v (%q)", tt.tool, res.IsError, tt.isError, textOf(res))
				}
				if tt.want != "" && textOf(res) != tt.want {
					t.Errorf("%s(%v) = %q, want %q", tt.tool, tt.args, textOf(res), tt.want)
				}
			}
			if pid := textOf(call(t, cs, "pid", nil)); pid == "" || pid == "0" || pid == "1" {
				t.Errorf("pid = %q", pid)
			}
			if got := len(textOf(call(t, cs, "big", map[string]any{"bytes": 300000}))); got != 300000 {
				t.Errorf("big returned %d bytes, want 300000", got)
			}
			img := call(t, cs, "image", nil)
			if len(img.Content) != 2 {
				t.Fatalf("image returned %d content blocks, want 2", len(img.Content))
			}
			if ic, ok := img.Content[0].(*mcp.ImageContent); !ok || ic.MIMEType != "image/png" || !bytes.HasPrefix(ic.Data, []byte("\x89PNG")) {
				t.Errorf("image content[0] = %#v, want a PNG", img.Content[0])
			}
			// A prompt and a resource.
			pr, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := pr.Messages[0].Content.(*mcp.TextContent).Text; got != "Say hello to Ada." {
				t.Errorf("greet = %q", got)
			}
			rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "test://echo/readme"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(rr.Contents[0].Text, "echo test server") {
				t.Errorf("readme = %q", rr.Contents[0].Text)
			}
		})
	}
}

func TestEchoAnnotations(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, "echo")
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	if a := tools["idempotent_side_effect"].Annotations; a == nil || !a.IdempotentHint {
		t.Errorf("idempotent_side_effect annotations = %+v, want idempotentHint", a)
	}
	if a := tools["side_effect"].Annotations; a == nil || a.IdempotentHint {
		t.Errorf("side_effect annotations = %+v, want not idempotent", a)
	}
	if a := tools["destructive"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("destructive annotations = %+v, want destructiveHint", a)
	}
	if a := tools["echo"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("echo annotations = %+v, want readOnlyHint", a)
	}
}

func TestSideEffect(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	exe, argv := testserver.Command("echo")
	cmd := exec.Command(exe, argv...)
	cmd.Env = append(os.Environ(), testserver.SideEffectEnv+"="+file)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i, tool := range []string{"side_effect", "side_effect", "idempotent_side_effect"} {
		res := call(t, cs, tool, map[string]any{"note": "n"})
		if res.IsError {
			t.Fatalf("%s: %s", tool, textOf(res))
		}
		n, err := testserver.CountSideEffects(file)
		if err != nil || n != i+1 {
			t.Errorf("after %d calls the file records %d runs (err %v)", i+1, n, err)
		}
		if want := fmt.Sprintf("(run %d)", i+1); !strings.Contains(textOf(res), want) {
			t.Errorf("%s answered %q, want %s", tool, textOf(res), want)
		}
	}
	// A run another process recorded meanwhile counts too (the server
	// counts only what was added since its last count).
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "run pid=1 elsewhere\n")
	f.Close()
	if res := call(t, cs, "side_effect", map[string]any{"note": "n"}); !strings.Contains(textOf(res), "(run 5)") {
		t.Errorf("after another process's run: %q, want run 5", textOf(res))
	}
	// Without a file the tool fails visibly instead of pretending.
	other, _ := connect(t, "echo", "-side-effect-file", "")
	if os.Getenv(testserver.SideEffectEnv) == "" {
		if res := call(t, other, "side_effect", nil); !res.IsError {
			t.Errorf("side_effect without a file: isError false (%q)", textOf(res))
		}
	}
}

func TestSlowProgressAndCancellation(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var progress []float64
	cs, _ := connectWith(t, connectOpts{client: &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
	}}, "echo")

	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 100, "steps": 4}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || textOf(res) != "slept 100 ms" {
		t.Fatalf("slow = %v, %v", res, err)
	}
	waitFor(t, "4 progress notifications", 2*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) == 4
	})
	if diff := cmp.Diff([]float64{1, 2, 3, 4}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}

	// Cancelling the call's context stops it (its deadline's error, not
	// the 20 s tool's end); the server goes on.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 20000}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow call past its context's deadline: %v, want context.DeadlineExceeded", err)
	}
	if got := textOf(call(t, cs, "echo", map[string]any{"text": "still here"})); got != "still here" {
		t.Errorf("echo after cancel = %q", got)
	}
}

func TestLogging(t *testing.T) {
	t.Parallel()
	got := make(chan *mcp.LoggingMessageParams, 4)
	opts := &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		got <- req.Params
	}}
	t.Run("legacy setLevel", func(t *testing.T) {
		cs, _ := connectWith(t, connectOpts{version: legacy, client: opts}, "echo")
		if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		call(t, cs, "log", map[string]any{"level": "warning", "message": "disk almost full"})
		select {
		case p := <-got:
			if p.Level != "warning" || p.Data != "disk almost full" {
				t.Errorf("log notification = %+v", p)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no log notification")
		}
	})
	t.Run("2026-07-28 logLevel meta", func(t *testing.T) {
		cs, _ := connectWith(t, connectOpts{client: opts}, "echo")
		params := &mcp.CallToolParams{Name: "log", Arguments: map[string]any{"message": "m"}}
		params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "debug"}
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-got:
			if p.Level != "info" || p.Data != "m" {
				t.Errorf("log notification = %+v", p)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no log notification")
		}
	})
}

func TestAskSampleRoots(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", legacy} {
		t.Run("version="+version, func(t *testing.T) {
			t.Parallel()
			var asked string
			opts := &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
				},
				CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled!"}}, nil
				},
				Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, opts)
			client.AddRoots(&mcp.Root{URI: "file:///work/a"}, &mcp.Root{URI: "file:///work/b"})
			c := newChild(t, "echo")
			cs, err := client.Connect(context.Background(), c.t, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := textOf(call(t, cs, "ask", map[string]any{"question": "Colour?"})); got != "answer: blue" || asked != "Colour?" {
				t.Errorf("ask = %q (asked %q)", got, asked)
			}
			if got := textOf(call(t, cs, "sample", nil)); got != "sampled!" {
				t.Errorf("sample = %q", got)
			}
			if got := textOf(call(t, cs, "roots", nil)); got != "file:///work/a\nfile:///work/b" {
				t.Errorf("roots = %q", got)
			}
		})
	}

	// A host that refuses sampling and declines elicitation.
	for _, version := range []string{"", legacy} {
		t.Run("refused/version="+version, func(t *testing.T) {
			t.Parallel()
			cs, _ := connectWith(t, connectOpts{version: version, client: &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			}}, "echo")
			if got := textOf(call(t, cs, "ask", nil)); got != "the user chose decline" {
				t.Errorf("ask = %q", got)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sample"})
			if err == nil && !res.IsError {
				t.Errorf("sample without sampling support succeeded: %q", textOf(res))
			}
		})
	}
}

func TestListChanged(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", legacy} {
		t.Run("version="+version, func(t *testing.T) {
			t.Parallel()
			tools, prompts, resources := make(chan bool, 4), make(chan bool, 4), make(chan bool, 4)
			cs, _ := connectWith(t, connectOpts{version: version, client: &mcp.ClientOptions{
				ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools <- true },
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts <- true },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources <- true },
			}}, "echo")
			for _, step := range []struct {
				tool string
				ch   chan bool
			}{{"add_tool", tools}, {"add_prompt", prompts}, {"add_resource", resources}} {
				call(t, cs, step.tool, map[string]any{"name": "fresh"})
				select {
				case <-step.ch:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s: no list_changed notification", step.tool)
				}
			}
			if !slices.Contains(toolNames(t, cs), "fresh") {
				t.Error("added tool not listed")
			}
			if got := textOf(call(t, cs, "fresh", map[string]any{"text": "new"})); got != "new" {
				t.Errorf("added tool = %q", got)
			}
			rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "test://echo/fresh"})
			if err != nil || rr.Contents[0].Text != "resource fresh" {
				t.Errorf("added resource = %v, %v", rr, err)
			}
		})
	}
}

func TestStderrTool(t *testing.T) {
	t.Parallel()
	cs, c := connect(t, "echo")
	call(t, cs, "stderr", map[string]any{"text": "a line for the log"})
	waitFor(t, "stderr line", 2*time.Second, func() bool { return strings.Contains(c.stderr.String(), "a line for the log") })
}
