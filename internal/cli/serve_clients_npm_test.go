package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// clientEnv is the gateway world's environment for a real client: no
// variable of the coding client or model service the tests may run under
// (Claude Code would take CLAUDE_* and ANTHROPIC_* as its own settings),
// and Claude Code kept off the network.
func clientEnv(w *gatewayWorld) []string {
	var env []string
	for _, kv := range w.env {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CLAUDE") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "MCP_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "NO_COLOR=1")
}

// runClient runs a client program in the workspace and returns its stdout,
// failing the test (with both streams) when it does not exit 0. what names
// the run in the log.
func runClient(t *testing.T, w *gatewayWorld, what string, timeout time.Duration, name string, args ...string) []byte {
	t.Helper()
	return runClientEnv(t, w, what, timeout, clientEnv(w), name, args...)
}

// runClientEnv is runClient with the environment env.
func runClientEnv(t *testing.T, w *gatewayWorld, what string, timeout time.Duration, env []string, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir = env, w.ws
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s (%s %q): %v\nstdout: %s\nstderr: %s", what, name, args, err, out, stderr.String())
	}
	return out
}

var clientToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// TestGatewayBehindClaudeCodeAndInspector is issue 16's "Done means" with
// the real clients of testdata/npm: `install-gateway --client claude-code`
// into a temporary HOME whose Switchboard runs the npm reference servers
// and the longnames test server; then Claude Code (`claude mcp list`)
// sees the entry connected, the MCP Inspector's CLI, started with the
// command and arguments the entry holds, lists the gateway's tools — every
// one of which is at most 64 characters and a legal function name once
// Claude Code has put mcp__<entry>__ before it — and calls tools through
// it, a cut name included, under the allow rules of the user's settings.
func TestGatewayBehindClaudeCodeAndInspector(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	p := npmtest.Install(t)
	w := newGatewayWorld(t)
	files := filepath.Join(w.dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "notes.md"), []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	longCmd, longArgs := testserver.Command("longnames")
	// A server that takes its time to start (until the test releases it,
	// after Claude Code's look): the gateway must not keep Claude Code
	// waiting for it (issue 29, point 5).
	release := filepath.Join(w.dir, "release-slow")
	slowCmd, slowArgs := testserver.Command("slow-start", "-until-file", release)
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"slow":       map[string]any{"type": "stdio", "command": slowCmd, "args": slowArgs, "startup_timeout": 600000},
		"everything": map[string]any{"type": "stdio", "command": p.Node, "args": []string{p.Everything}},
		"memory": map[string]any{"type": "stdio", "command": p.Node, "args": []string{p.Memory},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(w.dir, "memory.jsonl")}},
		"filesystem": map[string]any{"type": "stdio", "command": p.Node, "args": []string{p.Filesystem, files}},
		"longnames":  map[string]any{"type": "stdio", "command": longCmd, "args": longArgs},
	}})
	// The Inspector's CLI cannot answer a permission question (an ask
	// would be a deny): the user allows what the test calls.
	w.permissions(t, []string{"mcp__everything__echo", "mcp__longnames"}, nil)

	out, err := w.command(t, "mcp", "install-gateway", "--client", "claude-code").CombinedOutput()
	if err != nil {
		t.Fatalf("install-gateway: %v\n%s", err, out)
	}
	var claudeJSON struct {
		MCPServers map[string]struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(w.home, ".claude.json"))
	if err != nil {
		t.Fatalf("install-gateway --client claude-code wrote no ~/.claude.json: %v\n%s", err, out)
	}
	if err := json.Unmarshal(b, &claudeJSON); err != nil {
		t.Fatalf("~/.claude.json: %v\n%s", err, b)
	}
	const entryName = "switchboard"
	entry, ok := claudeJSON.MCPServers[entryName]
	if !ok || entry.Command == "" {
		t.Fatalf("~/.claude.json has no %q entry:\n%s", entryName, b)
	}
	t.Logf("entry: %s %s", entry.Command, strings.Join(entry.Args, " "))

	// (a) Claude Code itself starts the entry and finds it connected, its
	// tools fetched (it gives up on tools/list after 5 s: "! Connected ·
	// tools fetch failed"), while a server is still starting.
	list := string(runClient(t, w, "claude mcp list", 90*time.Second, p.Claude, "mcp", "list"))
	if line := claudeListLine(list, entryName); !strings.Contains(line, "Connected") || strings.Contains(line, "failed") {
		t.Fatalf("claude mcp list does not show %q connected with its tools:\n%s", entryName, list)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	// (b) The Inspector's CLI runs the entry's command, as Claude Code
	// does, and lists the tools. It lists once and follows no
	// list_changed, so it waits for the servers with --wait, as such a
	// client should (docs/gateway.md, stdio).
	inspect := func(args ...string) []byte {
		t.Helper()
		what := "inspector " + strings.Join(args, " ")
		a := []string{p.Inspector, "--cli",
			"-e", "SWITCHBOARD_HOME=" + w.sbHome,
			"-e", "SWITCHBOARD_MANAGED_DIR=" + filepath.Join(w.dir, "managed"),
			entry.Command}
		a = append(append(append(a, entry.Args...), "--wait", "30s"), args...)
		return runClient(t, w, what, 90*time.Second, p.Node, a...)
	}
	wantServers := []string{"everything", "filesystem", "longnames", "memory", "slow"}
	var names []string
	// On a loaded machine an npm server can take longer than --wait,
	// and joins later.
	for deadline := time.Now().Add(60 * time.Second); ; {
		var listed struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if out := inspect("--method", "tools/list"); json.Unmarshal(out, &listed) != nil {
			t.Fatalf("Inspector tools/list output:\n%s", out)
		}
		names = names[:0]
		seen := map[string]int{}
		for _, tool := range listed.Tools {
			names = append(names, tool.Name)
			if s, _, ok := strings.Cut(tool.Name, "__"); ok {
				seen[s]++
			}
		}
		if seen["longnames"] == len(testserver.LongToolNames) && !slices.ContainsFunc(wantServers, func(s string) bool { return seen[s] == 0 }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway does not list the tools of all of %v (longnames: want %d): %v", wantServers, len(testserver.LongToolNames), names)
		}
		time.Sleep(time.Second) // kept: paces retries, each a new Inspector and gateway run (one-shot, so no event of theirs to wait for)
	}
	t.Logf("%d tools through the gateway", len(names))
	longest := ""
	for _, n := range names {
		claudeName := "mcp__" + entryName + "__" + n
		if len(claudeName) > 64 || !clientToolName.MatchString(claudeName) {
			t.Errorf("Claude Code would name a tool %q (%d characters): over 64 or not ^[a-zA-Z0-9_-]+$", claudeName, len(claudeName))
		}
		if len(claudeName) > len(longest) {
			longest = claudeName
		}
	}
	t.Logf("longest name behind Claude Code: %s (%d)", longest, len(longest))
	for _, want := range []string{"everything__echo", "memory__create_entities", "filesystem__list_directory", "longnames__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools lack %s: %v", want, names)
		}
	}
	// The 120-character tool is served under a cut name (first and last words, 8 hex
	// digits of the name hash), which the gateway routes by its table.
	long := testserver.LongToolNames[4]
	var cut string
	for _, n := range names {
		if strings.HasPrefix(n, "longnames__very_long_") {
			cut = n
		}
	}
	if !regexp.MustCompile(`_[0-9a-f]{8}$`).MatchString(cut) {
		t.Fatalf("the 120-character tool is served as %q, want a cut name with a hash suffix: %v", cut, names)
	}

	// (c) The Inspector calls through the gateway and gets the results.
	type callResult struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type, Text string
		} `json:"content"`
	}
	call := func(tool string, args ...string) callResult {
		t.Helper()
		a := []string{"--method", "tools/call", "--tool-name", tool}
		for _, kv := range args {
			a = append(a, "--tool-arg", kv)
		}
		out := inspect(a...)
		var res callResult
		if err := json.Unmarshal(out, &res); err != nil || len(res.Content) == 0 {
			t.Fatalf("Inspector tools/call %s output (%v):\n%s", tool, err, out)
		}
		return res
	}
	if res := call("everything__echo", "message=hello from the inspector"); res.IsError ||
		!strings.Contains(res.Content[0].Text, "Echo: hello from the inspector") || !strings.Contains(res.Content[0].Text, `server="everything"`) {
		t.Errorf("everything__echo through the gateway: %+v", res)
	}
	if res := call(cut, "text=cut but routed"); res.IsError || !strings.Contains(res.Content[0].Text, long+": cut but routed") {
		t.Errorf("%s through the gateway: %+v", cut, res)
	}
}

// claudeListLine is entry's line in what `claude mcp list` printed, list
// ("" if it has none).
func claudeListLine(list, entry string) string {
	var line string
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, entry+":") {
			line = l
		}
	}
	return line
}

// A one-shot client that lists before it calls (the Inspector's CLI, with
// no --wait) finds the tools of a server that takes most of a second to
// start, as an npx server whose package is cached does (about 1.5 s here):
// serve's first list waits up to two seconds for servers still connecting
// (DefaultServeConnectWait). With half a second it said "Tool
// 'everything__echo' not found on server." for every such call.
func TestInspectorOneShotCallThroughServe(t *testing.T) {
	p := npmtest.Install(t)
	w := newGatewayWorld(t)
	w.defaultWait = true // serve's own first-list wait is what is tested
	lateCmd, lateArgs := testserver.Command("slow-start", "-delay", "700ms")
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"late": map[string]any{"type": "stdio", "command": lateCmd, "args": lateArgs},
	}})
	w.permissions(t, []string{"mcp__late__echo"}, nil)
	a := append([]string{p.Inspector, "--cli",
		"-e", "SWITCHBOARD_HOME=" + w.sbHome,
		"-e", "SWITCHBOARD_MANAGED_DIR=" + filepath.Join(w.dir, "managed"),
		switchboardBin(t)}, w.args("serve", "--stdio")...)
	a = append(a, "--method", "tools/call", "--tool-name", "late__echo", "--tool-arg", "text=one shot")
	out := runClient(t, w, "inspector tools/call late__echo", 90*time.Second, p.Node, a...)
	var res struct {
		IsError bool `json:"isError"`
		Content []struct{ Type, Text string }
	}
	if err := json.Unmarshal(out, &res); err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "one shot") {
		t.Errorf("the Inspector's one-shot call (%v):\n%s", err, out)
	}
}
