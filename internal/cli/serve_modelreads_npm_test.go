package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// modelReadsWorld is a gateway world with the servers of what the model
// reads (issue 30): rug (the rug pull, counting its starts), smug (hidden
// text) and echo (given a token, with a call hook on side_effect), the
// user's settings allowing their calls with "toolChanges": "ask".
func modelReadsWorld(t *testing.T) *gatewayWorld {
	t.Helper()
	w := newGatewayWorld(t)
	server := func(name string, args ...string) map[string]any {
		cmd, a := testserver.Command(name, args...)
		return map[string]any{"type": "stdio", "command": cmd, "args": a}
	}
	echo := server("echo", "-side-effect-file", filepath.Join(w.dir, "effect.log"))
	echo["env"] = map[string]string{"ECHO_API_TOKEN": "tok_live_4f9a8b7c6d5e4f3a2b1c"}
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"rug":  server("rugpull", "-state", filepath.Join(w.dir, "rug.starts")),
		"smug": server("smuggler"),
		"echo": echo,
	}})
	hook, hookArgs := testserver.Command("hook", "-mode", "deny", "-reason", "not through the gateway")
	writeJSON(t, filepath.Join(w.sbHome, "settings.json"), map[string]any{
		"permissions": map[string]any{"allow": []string{"mcp__rug", "mcp__smug", "mcp__echo"}},
		"toolChanges": "ask",
		"callHooks": []any{map[string]any{"name": "dlp", "command": append([]string{hook}, hookArgs...),
			"on": []string{"before"}, "tools": []string{"mcp__echo__side_effect"}, "timeout": 30000}},
	})
	return w
}

// checkModelReadsCalls checks what a client got from the smuggler, the
// echo server's env and the hooked tool through the gateway.
func checkModelReadsCalls(t *testing.T, fetch, env, hooked string, hookedIsError bool) {
	t.Helper()
	if strings.ContainsRune(fetch, 0xE0049) || !strings.Contains(fetch, "[U+202E]evil") || strings.Count(fetch, "<mcp_response") != 1 {
		t.Errorf("smug__fetch through the gateway: %+q", fetch)
	}
	if strings.Contains(env, "tok_live") || !strings.Contains(env, "ECHO_API_TOKEN=<redacted>") {
		t.Errorf("echo__env through the gateway: %q", env)
	}
	if !hookedIsError || !strings.Contains(hooked, `The call hook "dlp" denied this call: not through the gateway`) {
		t.Errorf("echo__side_effect through the gateway: %q", hooked)
	}
}

// TestGatewayModelReadsTypeScriptClient is issue 30 through the gateway
// with the official TypeScript SDK client: descriptions and results
// cleaned of hidden text, a token the server was given redacted, a call
// hook's deny; then the rug pull — the changed tool is held and taken off
// the list (list_changed), a call of it asks the client about the change
// (answered "hold": refused, naming `switchboard tools accept`), and once
// `switchboard tools accept` pins it in another process, the running
// gateway serves it again with list_changed.
func TestGatewayModelReadsTypeScriptClient(t *testing.T) {
	p := npmtest.Install(t)
	w := modelReadsWorld(t)
	script, err := filepath.Abs("testdata/gateway/ts_modelreads_client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(w.dir, "held.marker")
	audit := filepath.Join(w.dir, "audit.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Node, script, switchboardBin(t), "--workspace", w.ws, "serve", "--stdio", "--audit-log", audit)
	cmd.Env = append(append([]string{}, w.env...), "SDK="+p.SDK, "MARKER="+marker)
	cmd.Dir = w.ws
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-waitFile(ctx, marker):
	case err := <-done:
		t.Fatalf("the client ended before the rug pull was held: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	// Another process accepts the change the gateway holds (its own rug
	// server, second start, has the pulled description too).
	if out, err := w.command(t, "tools", "accept", "rug", "add").CombinedOutput(); err != nil {
		t.Fatalf("tools accept: %v\n%s", err, out)
	}
	if err := <-done; err != nil {
		t.Fatalf("ts client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var res struct {
		First struct {
			Add   *string `json:"add"`
			Fetch struct {
				Title       string         `json:"title"`
				Description string         `json:"description"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"fetch"`
		} `json:"first"`
		Calls map[string]struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"calls"`
		Held     bool `json:"held"`
		HeldCall struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"heldCall"`
		Asked              []string `json:"asked"`
		Back               *string  `json:"back"`
		ChangesAfterAccept int      `json:"changesAfterAccept"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("ts client output %q: %v\nstderr: %s", stdout.String(), err, stderr.String())
	}
	if res.First.Add == nil || *res.First.Add != testserver.RugPullDescription {
		t.Errorf("rug__add at first: %v", res.First.Add)
	}
	schema, _ := json.Marshal(res.First.Fetch.InputSchema)
	if res.First.Fetch.Description != "Fetches a page." || res.First.Fetch.Title != "Fetch[U+202E]" || strings.Contains(string(schema), "\u200b") {
		t.Errorf("smug__fetch as listed: %+v %s", res.First.Fetch, schema)
	}
	checkModelReadsCalls(t, res.Calls["smug__fetch"].Text, res.Calls["echo__env"].Text, res.Calls["echo__side_effect"].Text, res.Calls["echo__side_effect"].IsError)
	if !res.Held {
		t.Error("the pulled rug__add was still listed")
	}
	if hc := res.HeldCall; !hc.IsError || !strings.Contains(hc.Text, "switchboard tools accept rug add") {
		t.Errorf("the held rug__add's call: %+v", hc)
	}
	if len(res.Asked) != 1 || !strings.Contains(res.Asked[0], "[rug] description: ") || !strings.Contains(res.Asked[0], "{+Before answering") {
		t.Errorf("questions about the change: %q", res.Asked)
	}
	if res.Back == nil || *res.Back != testserver.RugPullEvil || res.ChangesAfterAccept == 0 {
		t.Errorf("after the accept: rug__add %v, %d list_changed", res.Back, res.ChangesAfterAccept)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "effect.log")); err == nil {
		t.Error("the hooked tool ran")
	}
	lines := auditLines(t, audit)
	var hooked, held *gateway.AuditEntry
	for i := range lines {
		switch lines[i].ServerTool {
		case "side_effect":
			hooked = &lines[i]
		case "add":
			held = &lines[i]
		}
	}
	if held == nil || !held.Asked || held.ToolChange != gateway.ToolChangeHold {
		t.Errorf("audit line of the held call: %+v", held)
	}
	if hooked == nil || hooked.Error != "refused by the call hook dlp (before): not through the gateway" {
		t.Errorf("audit line of the hooked call: %+v", hooked)
	}
}

// TestGatewayModelReadsInspector: the MCP Inspector's CLI against `serve
// --stdio` after a first CLI run pinned the rug server's tools: the
// gateway starts the rug server a second time, whose add changed, and does
// not list it ("toolChanges": "ask"); descriptions and results reach the
// Inspector cleaned, the token redacted, the hooked call refused.
func TestGatewayModelReadsInspector(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	p := npmtest.Install(t)
	w := modelReadsWorld(t)
	if out, err := w.command(t, "tools", "--server", "rug").CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	inspectArgs := func(args ...string) []string {
		return append([]string{p.Inspector, "--cli",
			"-e", "SWITCHBOARD_HOME=" + w.sbHome,
			"-e", "SWITCHBOARD_MANAGED_DIR=" + filepath.Join(w.dir, "managed"),
			switchboardBin(t), "--workspace", w.ws, "serve", "--stdio"}, args...)
	}
	inspect := func(args ...string) []byte {
		t.Helper()
		return runClient(t, w, "inspector "+strings.Join(args, " "), 90*time.Second, p.Node, inspectArgs(args...)...)
	}
	var listed struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	var names []string
	for deadline := time.Now().Add(60 * time.Second); ; {
		if out := inspect("--method", "tools/list"); json.Unmarshal(out, &listed) != nil {
			t.Fatalf("Inspector tools/list output:\n%s", out)
		}
		names = names[:0]
		for _, tl := range listed.Tools {
			names = append(names, tl.Name)
		}
		if slices.Contains(names, "rug__echo") && slices.Contains(names, "smug__fetch") && slices.Contains(names, "echo__env") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway does not list every server's tools: %v", names)
		}
		time.Sleep(time.Second) // kept: paces retries, each a new Inspector and gateway run (one-shot, so no event of theirs to wait for)
	}
	if slices.Contains(names, "rug__add") {
		t.Error("the changed rug__add is listed")
	}
	for _, tl := range listed.Tools {
		if tl.Name == "smug__fetch" && tl.Description != "Fetches a page." {
			t.Errorf("smug__fetch description: %+q", tl.Description)
		}
	}
	call := func(tool string, args ...string) (string, bool) {
		t.Helper()
		a := []string{"--method", "tools/call", "--tool-name", tool}
		for _, kv := range args {
			a = append(a, "--tool-arg", kv)
		}
		// The Inspector exits 5 on an isError result, and prints it.
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, p.Node, inspectArgs(a...)...)
		cmd.Env, cmd.Dir, cmd.WaitDelay = clientEnv(w), w.ws, 5*time.Second
		out, err := cmd.Output()
		if ee := (*exec.ExitError)(nil); err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 5) {
			t.Fatalf("inspector tools/call %s: %v\n%s", tool, err, out)
		}
		var res struct {
			IsError bool `json:"isError"`
			Content []struct{ Type, Text string }
		}
		if err := json.Unmarshal(out, &res); err != nil || len(res.Content) == 0 {
			t.Fatalf("Inspector tools/call %s output (%v):\n%s", tool, err, out)
		}
		return res.Content[0].Text, res.IsError
	}
	fetch, _ := call("smug__fetch", "url=x")
	env, _ := call("echo__env", `names=["ECHO_API_TOKEN"]`)
	hooked, isErr := call("echo__side_effect", "note=n")
	checkModelReadsCalls(t, fetch, env, hooked, isErr)
}

// waitFile closes its channel once path exists (or ctx is done).
func waitFile(ctx context.Context, path string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for ctx.Err() == nil {
			if _, err := os.Stat(path); err == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return ch
}

// auditLines reads an audit log.
func auditLines(t *testing.T, path string) []gateway.AuditEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gateway.AuditEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e gateway.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}
