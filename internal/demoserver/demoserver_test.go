package demoserver_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/demoserver"
)

// TestMain lets this test binary be the demo server, as the switchboard
// binary's main does.
func TestMain(m *testing.M) {
	demoserver.MaybeRun()
	os.Exit(m.Run())
}

func connect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func inMemory(t *testing.T) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := demoserver.New().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return connect(t, ct)
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
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

func TestServer(t *testing.T) {
	t.Parallel()
	cs := inMemory(t)
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if len(tool.Description) < 20 || tool.Title == "" || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("tool %s: want a title, a real description and readOnlyHint: %+v", tool.Name, tool)
		}
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"add", "echo", "roll_dice", "word_count"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"text": "hello"}, "hello"},
		{"add", map[string]any{"a": 2, "b": 40}, "2 + 40 = 42"},
		{"add", map[string]any{"a": -1.5, "b": 0.25}, "-1.5 + 0.25 = -1.25"},
		{"word_count", map[string]any{"text": "one two\nthree"}, "3 words, 2 lines, 13 characters"},
		{"word_count", map[string]any{"text": ""}, "0 words, 0 lines, 0 characters"},
		{"word_count", map[string]any{"text": "it's done\n\n"}, "2 words, 2 lines, 11 characters"},
		{"word_count", map[string]any{"text": "héllo, wörld"}, "2 words, 1 lines, 12 characters"},
		{"roll_dice", map[string]any{"count": 3, "sides": 6, "seed": 7}, "rolled 3d6 (seed 7): [4 2 1] = 7"},
	}
	for _, tt := range tests {
		res := call(t, cs, tt.tool, tt.args)
		if res.IsError || textOf(res) != tt.want {
			t.Errorf("%s %v = %q (isError %v), want %q", tt.tool, tt.args, textOf(res), res.IsError, tt.want)
		}
	}
	// Dice are deterministic per seed, and differ between seeds.
	roll := func(seed int) string {
		return textOf(call(t, cs, "roll_dice", map[string]any{"count": 5, "sides": 20, "seed": seed}))
	}
	if a, b := roll(1), roll(1); a != b {
		t.Errorf("same seed, different rolls: %q vs %q", a, b)
	}
	if roll(1) == roll(2) {
		t.Error("different seeds gave the same rolls")
	}
	for _, args := range []map[string]any{{"count": 1000}, {"sides": 1}, {"count": -1}} {
		if res := call(t, cs, "roll_dice", args); !res.IsError {
			t.Errorf("roll_dice %v = %q, want an error result", args, textOf(res))
		}
	}
	pr, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "explain", Arguments: map[string]string{"topic": "MCP"}})
	if err != nil || !strings.Contains(pr.Messages[0].Content.(*mcp.TextContent).Text, "Explain MCP") {
		t.Errorf("explain prompt = %v, %v", pr, err)
	}
	if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "explain", Arguments: map[string]string{"topic": " "}}); err == nil {
		t.Error("explain with a blank topic is not an error")
	}
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "demo://readme"})
	if err != nil || rr.Contents[0].Text != demoserver.Readme {
		t.Errorf("readme = %v, %v", rr, err)
	}
}

// The argv of Command really runs the demo: this test binary, re-executed,
// serves it on its stdio until the client closes stdin, then exits 0.
func TestCommandRunsTheServer(t *testing.T) {
	t.Parallel()
	exe, args, err := demoserver.Command()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{demoserver.Arg}, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	cmd := exec.Command(exe, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	if got := textOf(call(t, cs, "add", map[string]any{"a": 1, "b": 1})); got != "1 + 1 = 2" {
		t.Errorf("add = %q", got)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing the session: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d after stdin closed, want 0; stderr:\n%s", code, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("the demo wrote to stderr:\n%s", stderr.String())
	}
}

// Arguments after Arg are refused, so a typo never runs something else.
func TestMaybeRunRefusesArguments(t *testing.T) {
	t.Parallel()
	exe, args, err := demoserver.Command()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append(args, "crash-mid-call")...)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "takes no arguments") {
		t.Errorf("exit status %d (%v), output %q; want 2 and a message", code, err, out)
	}
}

// Serve answers on out and ends with nil when the client closes its input.
func TestServeEndsAtEOF(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- demoserver.Serve(context.Background(), inR, outW); outW.Close() }()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"v0"}}}`+"\n")
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(line, `"name":"switchboard-demo"`) {
		t.Errorf("first line %q (%v): want an initialize result naming the server", line, err)
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v, want nil at EOF", err)
	}
}
