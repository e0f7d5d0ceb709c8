package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// TestGatewayServesTaskToolsToPlainClients is issue 35's "Done means" for
// the gateway: server-everything's simulate-research-query, which requires
// a task, is served as a plain tool, and the TypeScript SDK's client and
// the MCP Inspector's CLI call it through `serve --stdio` and `serve
// --http` and get the report; the TypeScript client, which asks for
// progress, gets the task's status messages as progress.
func TestGatewayServesTaskToolsToPlainClients(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	p := npmtest.Install(t)
	w := newGatewayWorld(t)
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"type": "stdio", "command": p.Node, "args": []string{p.Everything}},
	}})
	w.permissions(t, []string{"mcp__everything__simulate-research-query"}, nil)
	const tool = "everything__simulate-research-query"
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0")
	t.Cleanup(stop)
	stdio := []string{switchboardBin(t), "--workspace", w.ws, "serve", "--stdio"}

	check := func(t *testing.T, what string, isError bool, text string) {
		t.Helper()
		if isError || !strings.Contains(text, "# Research Report: tides") || !strings.Contains(text, `tool="simulate-research-query"`) {
			t.Errorf("%s: isError %v, text:\n%s", what, isError, text)
		}
	}
	script, err := filepath.Abs("testdata/gateway/ts_call.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		for _, mode := range []string{"stdio", "http"} {
			args := append([]string{script, "stdio"}, stdio...)
			if mode == "http" {
				args = []string{script, "http", base + "/mcp"}
			}
			env := []string{"SDK=" + p.SDK, "TOOL=" + tool, `TOOL_ARGS={"topic":"tides"}`}
			ww := *w
			ww.env = append(append([]string{}, w.env...), env...)
			out := runClient(t, &ww, "ts "+mode, 120*time.Second, p.Node, args...)
			var res struct {
				IsError  bool     `json:"isError"`
				Text     string   `json:"text"`
				Progress []string `json:"progress"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("ts %s output: %v\n%s", mode, err, out)
			}
			check(t, "ts "+mode, res.IsError, res.Text)
			if !strings.Contains(strings.Join(res.Progress, "; "), "...") {
				t.Errorf("ts %s: progress %q, want the task's status messages", mode, res.Progress)
			}
		}
	})
	t.Run("inspector", func(t *testing.T) {
		t.Parallel()
		call := []string{"--method", "tools/call", "--tool-name", tool, "--tool-arg", "topic=tides"}
		for _, mode := range []string{"stdio", "http"} {
			args := append(append([]string{p.Inspector, "--cli"}, stdio...), call...)
			if mode == "http" {
				args = append([]string{p.Inspector, "--cli", "--transport", "http", "--server-url", base + "/mcp"}, call...)
			}
			out := runClient(t, w, "inspector "+mode, 120*time.Second, p.Node, args...)
			var res struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if err := json.Unmarshal(out, &res); err != nil || len(res.Content) == 0 {
				t.Fatalf("inspector %s output (%v):\n%s", mode, err, out)
			}
			check(t, "inspector "+mode, res.IsError, res.Content[0].Text)
		}
	})
}
