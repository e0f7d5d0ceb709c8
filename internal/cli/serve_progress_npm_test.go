package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// TestGatewayTypeScriptClientEveryProgressStep: the official TypeScript
// SDK's client gets every progress notification of a call through `serve
// --stdio` and `serve --http`, the last one too (server-everything's
// trigger-long-running-operation, eight calls on each). A server sends its
// last step right before its result; the TypeScript client handles a
// notification in a microtask and a response at once, so when both come
// in one read the last step is dropped (typescript-sdk #2580), and serve
// --stdio wrote them back to back: about every other call lost its last
// step before jsonl.Transport.ProgressGap.
func TestGatewayTypeScriptClientEveryProgressStep(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	p := npmtest.Install(t)
	w := everythingGateway(t, p, "mcp__everything__trigger-long-running-operation")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--wait", "60s")
	t.Cleanup(stop)
	script, err := filepath.Abs("testdata/gateway/ts_call.mjs")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"stdio", "http"} {
		args := []string{script, "stdio", switchboardBin(t), "--workspace", w.ws, "serve", "--stdio", "--wait", "60s"}
		if mode == "http" {
			args = []string{script, "http", base + "/mcp"}
		}
		ww := *w
		ww.env = append(append([]string{}, w.env...), "SDK="+p.SDK, "CALLS=8",
			"TOOL=everything__trigger-long-running-operation", `TOOL_ARGS={"duration":0.15,"steps":3}`)
		out := runClient(t, &ww, "ts_call.mjs "+mode, 120*time.Second, p.Node, args...)
		var res struct {
			Calls []struct {
				IsError  bool      `json:"isError"`
				Text     string    `json:"text"`
				Progress []float64 `json:"progress"`
			} `json:"calls"`
		}
		if err := json.Unmarshal(out, &res); err != nil || len(res.Calls) != 8 {
			t.Fatalf("%s output (%v):\n%s", mode, err, out)
		}
		for i, c := range res.Calls {
			if c.IsError || !strings.Contains(c.Text, "Long running operation completed") {
				t.Errorf("%s call %d: isError %v, text %q", mode, i, c.IsError, c.Text)
			}
			if !slices.Equal(c.Progress, []float64{1, 2, 3}) {
				t.Errorf("%s call %d: progress %v, want [1 2 3]", mode, i, c.Progress)
			}
		}
	}
}
