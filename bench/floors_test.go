package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// The test binary doubles as the Go test servers and as the floors, as the
// bench binary does.
func TestMain(m *testing.M) {
	testserver.MaybeRun()
	maybeRunClient()
	maybeRunFloor()
	maybeRunMeasured()
	os.Exit(m.Run())
}

// The SDK-only relay, in both variants, lists the Go echo server's tools
// and relays a call to it, result and error flag included, over real
// processes.
func TestSDKRelayRelaysEcho(t *testing.T) {
	for _, variant := range []string{"sdk", "jsonl"} {
		t.Run(variant, func(t *testing.T) { testSDKRelay(t, variant) })
	}
}

func testSDKRelay(t *testing.T, variant string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srvCmd, srvArgs := testserver.Command("echo")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(self, append([]string{sdkRelayArg, variant, srvCmd}, srvArgs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := floorClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to the relay: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "echo") {
		t.Fatalf("the relay lists %v, want the echo server's tools (echo among them)", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "through the floor"}})
	if err != nil {
		t.Fatalf("echo through the relay: %v\n%s", err, stderr.String())
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("echo through the relay returned %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "through the floor" {
		t.Fatalf("echo through the relay returned %#v, want the text back", res.Content[0])
	}
	// A tool error comes back as the server sent it: isError set, not a
	// protocol error.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "error_result", Arguments: map[string]any{"message": "no"}})
	if err != nil {
		t.Fatalf("error_result through the relay: %v", err)
	}
	if !res.IsError {
		t.Fatalf("error_result through the relay returned %+v, want isError", res)
	}
}

// runFanout runs the SDK-only fan-out on servers and returns its output and
// error.
func runFanout(t *testing.T, servers map[string]stdioServer) (fanoutResult, string, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "servers.json")
	if err := writeJSON(file, map[string]any{"mcpServers": servers}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, sdkFanoutArg, file)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	t.Cleanup(func() {
		if cmd.ProcessState == nil && cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitBounded(cmd, time.Minute); err != nil {
		return fanoutResult{}, stderr.String(), err
	}
	var res fanoutResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("fan-out printed %q: %v", out.String(), err)
	}
	return res, stderr.String(), nil
}

func TestSDKFanoutConnectsEveryServer(t *testing.T) {
	cmd, args := testserver.Command("echo")
	res, stderr, err := runFanout(t, servers("fast", 3, stdioServer{Type: "stdio", Command: cmd, Args: args}))
	if err != nil {
		t.Fatalf("fan-out: %v\n%s", err, stderr)
	}
	if res.Connected != 3 || res.Tools < 3 {
		t.Fatalf("fan-out reported %+v, want 3 connected servers and their tools", res)
	}
}

// One server that cannot start fails the whole run, loudly and by name:
// the bench must not time a fan-out that skipped servers.
func TestSDKFanoutFailsNamingTheServer(t *testing.T) {
	cmd, args := testserver.Command("echo")
	cfg := servers("fast", 2, stdioServer{Type: "stdio", Command: cmd, Args: args})
	cfg["broken"] = stdioServer{Type: "stdio", Command: filepath.Join(t.TempDir(), "no-such-server")}
	_, stderr, err := runFanout(t, cfg)
	if err == nil {
		t.Fatal("fan-out with a server that cannot start succeeded")
	}
	if !strings.Contains(stderr, "broken:") || !strings.Contains(stderr, "1 of 3 servers failed") {
		t.Fatalf("fan-out's error does not name the failed server:\n%s", stderr)
	}
}
