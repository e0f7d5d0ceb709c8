package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// everythingGateway is a gatewayWorld whose one server is server-everything
// of testdata/npm, run by node, with allow rules for allow.
func everythingGateway(t *testing.T, p npmtest.Paths, allow ...string) *gatewayWorld {
	t.Helper()
	w := newGatewayWorld(t)
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"type": "stdio", "command": p.Node, "args": []string{p.Everything}},
	}})
	w.permissions(t, allow, nil)
	return w
}

// TestGatewayServesTaskToolsToPlainClients is issue 35's "Done means" for
// the gateway: server-everything's simulate-research-query, which requires
// a task, is served as a plain tool, and the TypeScript SDK's client and
// the MCP Inspector's CLI call it through `serve --stdio` and `serve
// --http` and get the report; the TypeScript client, which asks for
// progress, gets the task's status messages as progress.
func TestGatewayServesTaskToolsToPlainClients(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	p := npmtest.Install(t)
	w := everythingGateway(t, p, "mcp__everything__simulate-research-query", "mcp__everything__trigger-long-running-operation")
	const tool = "everything__simulate-research-query"
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--wait", "60s")
	t.Cleanup(stop)
	// --wait: the Inspector's CLI lists once, and server-everything may
	// take longer than the first tools/list waits on a loaded machine.
	stdio := []string{switchboardBin(t), "--workspace", w.ws, "serve", "--stdio", "--wait", "60s"}

	check := func(t *testing.T, what string, isError bool, text string) {
		t.Helper()
		if isError || !strings.Contains(text, "# Research Report: tides") || !strings.Contains(text, `tool="simulate-research-query"`) {
			t.Errorf("%s: isError %v, text:\n%s", what, isError, text)
		}
	}
	// runTS runs a TypeScript client script of testdata/gateway through
	// serve --stdio or --http (mode), the tool to call in its environment.
	runTS := func(t *testing.T, file, mode string, env ...string) []byte {
		t.Helper()
		script, err := filepath.Abs(filepath.Join("testdata/gateway", file))
		if err != nil {
			t.Fatal(err)
		}
		args := append([]string{script, "stdio"}, stdio...)
		if mode == "http" {
			args = []string{script, "http", base + "/mcp"}
		}
		ww := *w
		ww.env = append(append([]string{}, w.env...), "SDK="+p.SDK, "TOOL="+tool, `TOOL_ARGS={"topic":"tides"}`)
		ww.env = append(ww.env, env...)
		return runClient(t, &ww, file+" "+mode, 120*time.Second, p.Node, args...)
	}
	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		for _, mode := range []string{"stdio", "http"} {
			out := runTS(t, "ts_call.mjs", mode)
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
	// Issue 35: a client of 2026-07-28 that declares the tasks extension
	// (the wire format written out here: no client at hand speaks it) gets
	// the call as a task of the gateway's and follows it with tasks/get to
	// the report.
	t.Run("extension", func(t *testing.T) {
		t.Parallel()
		post := func(id int, method string, params map[string]any) map[string]any {
			t.Helper()
			params["_meta"] = map[string]any{
				"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
				"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "ext", "version": "1"},
				"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
			}
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
			req, err := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method} {
				req.Header.Set(k, v)
			}
			if name, _ := params["name"].(string); name != "" {
				req.Header.Set("Mcp-Name", name)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			for _, line := range strings.Split(string(b), "\n") {
				var m struct {
					ID     int            `json:"id"`
					Result map[string]any `json:"result"`
				}
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m) == nil && m.ID == id && m.Result != nil {
					return m.Result
				}
			}
			t.Fatalf("%s: HTTP %d: %s", method, resp.StatusCode, b)
			return nil
		}
		created := post(1, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"topic": "tides"}})
		id, _ := created["taskId"].(string)
		if created["resultType"] != "task" || id == "" {
			t.Fatalf("the call was not made a task: %v", created)
		}
		for n := 2; ; n++ {
			got := post(n, "tasks/get", map[string]any{"taskId": id})
			if got["status"] == "working" && n < 1000 {
				time.Sleep(100 * time.Millisecond) // polling, bounded by the count
				continue
			}
			res, _ := got["result"].(map[string]any)
			content, _ := res["content"].([]any)
			var text string
			if len(content) > 0 {
				text, _ = content[0].(map[string]any)["text"].(string)
			}
			if got["status"] != "completed" {
				t.Fatalf("the task ended %v", got)
			}
			check(t, "extension", res["isError"] == true, text)
			return
		}
	})
	// Issue 35, point 3: a task-capable client (the TypeScript SDK's
	// experimental tasks API) runs the call as a task of the gateway's,
	// follows it to its result, cancels another, and a second client of
	// the same gateway finds neither.
	t.Run("typescript-tasks", func(t *testing.T) {
		t.Parallel()
		for _, mode := range []string{"stdio", "http"} {
			out := runTS(t, "ts_task.mjs", mode,
				"LONG=everything__trigger-long-running-operation", `LONG_ARGS={"duration":600,"steps":600}`,
				"ASKED=everything__echo", `ASKED_ARGS={"message":"asked first"}`)
			var res struct {
				Capability  map[string]any `json:"capability"`
				TaskID      string         `json:"taskId"`
				Statuses    []string       `json:"statuses"`
				IsError     bool           `json:"isError"`
				Text        string         `json:"text"`
				Error       *string        `json:"error"`
				RelatedTask string         `json:"relatedTask"`
				OwnGet      string         `json:"ownGet"`
				OwnList     []string       `json:"ownList"`
				LongCreated bool           `json:"longCreated"`
				OtherGet    *string        `json:"otherGet"`
				OtherResult *string        `json:"otherResult"`
				OtherCancel *string        `json:"otherCancel"`
				OtherList   []string       `json:"otherList"`
				LongCancel  string         `json:"longCancel"`
				LongGet     string         `json:"longGet"`
				LongResult  *string        `json:"longResult"`
				Fatal       string         `json:"fatal"`
				AskedText   string         `json:"askedText"`
				AskedError  *string        `json:"askedError"`
				Asks        int            `json:"asks"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("ts tasks %s output: %v\n%s", mode, err, out)
			}
			what := "ts tasks " + mode
			if res.Fatal != "" || res.Capability == nil || res.TaskID == "" || res.Error != nil || len(res.Statuses) == 0 || res.Statuses[len(res.Statuses)-1] != "completed" {
				t.Fatalf("%s: the call did not run as a task to its end:\n%s", what, out)
			}
			check(t, what, res.IsError, res.Text)
			if res.RelatedTask != res.TaskID || res.OwnGet != "completed" || !slices.Contains(res.OwnList, res.TaskID) {
				t.Errorf("%s: the client's own task as it sees it afterwards:\n%s", what, out)
			}
			if res.Asks != 1 || res.AskedError != nil || !strings.Contains(res.AskedText, "asked first") {
				t.Errorf("%s: the asked task (its question to the client):\n%s", what, out)
			}
			if !res.LongCreated || res.LongCancel != "cancelled" || res.LongGet != "cancelled" || res.LongResult == nil {
				t.Errorf("%s: the long task was not cancelled:\n%s", what, out)
			}
			// The other client: not found, nothing listed, nothing cancelled.
			for name, e := range map[string]*string{"tasks/get": res.OtherGet, "tasks/result": res.OtherResult, "tasks/cancel": res.OtherCancel} {
				if e == nil || !strings.Contains(*e, "not found") {
					t.Errorf("%s: another client's %s of the task: %v, want not found", what, name, e)
				}
			}
			if len(res.OtherList) != 0 {
				t.Errorf("%s: another client lists %q", what, res.OtherList)
			}
		}
	})
}
