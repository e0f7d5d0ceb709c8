package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// Issue 29, point 18: `serve --http` with sessions serves both protocol
// revisions on one endpoint. Before, it refused a 2026-07-28 client
// (which has no sessions) — the Inspector's CLI in its modern mode got
// "Unsupported protocol version: 2026-07-28", and the Go SDK's client fell
// back to 2025-11-25 — while stdio and --stateless accepted it.

// TestGatewayHTTPBothRevisionsGoSDK: the Go SDK's client on 2026-07-28
// (its default) and on 2025-11-25 against one `serve --http`: each gets
// its own revision, lists, calls, and is asked a permission question.
func TestGatewayHTTPBothRevisionsGoSDK(t *testing.T) {
	forEachHTTPGateway(t, func(t *testing.T, startGW func(t testing.TB, w *gatewayWorld, args ...string) (string, func())) {
		w := newGatewayWorld(t)
		w.servers(t, "alpha")
		w.permissions(t, []string{"mcp__alpha__echo"}, nil)
		base, stop := startGW(t, w, "--http", "127.0.0.1:0")
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for _, rev := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(rev, func(t *testing.T) {
				ev := &clientEvents{decision: "once", changed: make(chan struct{}, 1)}
				client := mcp.NewClient(&mcp.Implementation{Name: "revisions", Version: "1"}, ev.options())
				var opts *mcp.ClientSessionOptions
				if rev != "2026-07-28" {
					opts = &mcp.ClientSessionOptions{ProtocolVersion: rev}
				}
				cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, opts)
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ProtocolVersion; got != rev {
					t.Fatalf("negotiated %s, want %s", got, rev)
				}
				if hasSession := cs.ID() != ""; hasSession != (rev < "2026-07-28") {
					t.Errorf("session id %q on %s: want one only before 2026-07-28", cs.ID(), rev)
				}
				if !listNames(t, ctx, cs)["alpha__echo"] {
					t.Fatal("alpha__echo not listed")
				}
				if text, isErr := callText(t, ctx, cs, "alpha__echo", map[string]any{"text": "both"}); isErr || !strings.Contains(text, "both") {
					t.Errorf("allowed call: %q (isError %v)", text, isErr)
				}
				// No rule allows pid: the client is asked, answers once.
				if text, isErr := callText(t, ctx, cs, "alpha__pid", nil); isErr || pidRE.FindString(text) == "" {
					t.Errorf("asked call: %q (isError %v)", text, isErr)
				}
				ev.mu.Lock()
				defer ev.mu.Unlock()
				if len(ev.asked) != 1 || !strings.Contains(ev.asked[0], "Allow mcp__alpha__pid") {
					t.Errorf("questions: %q", ev.asked)
				}
			})
		}
	})
}

// TestGatewayHTTPBothRevisionsInspector: the MCP Inspector's CLI in both
// protocol eras against one `serve --http` (with sessions).
func TestGatewayHTTPBothRevisionsInspector(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	p := npmtest.Install(t)
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, []string{"mcp__alpha__echo"}, nil)
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0")
	defer stop()
	inspect := func(t *testing.T, era string, args ...string) []byte {
		t.Helper()
		a := append([]string{p.Inspector, "--cli", base + "/mcp", "--protocol-era", era}, args...)
		return runClient(t, w, "inspector "+era+" "+strings.Join(args, " "), 90*time.Second, p.Node, a...)
	}
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			var listed struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			out := inspect(t, era, "--method", "tools/list")
			if err := json.Unmarshal(out, &listed); err != nil || len(listed.Tools) == 0 {
				t.Fatalf("tools/list (%v):\n%s", err, out)
			}
			found := false
			for _, tool := range listed.Tools {
				found = found || tool.Name == "alpha__echo"
			}
			if !found {
				t.Errorf("alpha__echo not listed:\n%s", out)
			}
			out = inspect(t, era, "--method", "tools/call", "--tool-name", "alpha__echo", "--tool-arg", "text=from the inspector")
			var res struct {
				IsError bool `json:"isError"`
				Content []struct{ Text string }
			}
			if err := json.Unmarshal(out, &res); err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "from the inspector") {
				t.Errorf("tools/call (%v):\n%s", err, out)
			}
		})
	}
}
