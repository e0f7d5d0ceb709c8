package gateway_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/trust"
)

// A tool held by pinning is not listed by the gateway; when the change is
// accepted the client gets list_changed and the tool is listed again, as
// it is now.
func TestGatewayHeldToolAndAccept(t *testing.T) {
	home := t.TempDir()
	f := startWith(t, fixtureOpts{host: func(o *host.Options) {
		o.Pins, o.ToolChanges = trust.OpenPins(home), config.ToolChangesAsk
	}}, nil, stdio("rug", "rugpull"))
	ctx := ctxFor(t, 30*time.Second)
	if names := toolNames(t, ctx, f.session); !slices.Contains(names, "rug__add") {
		t.Fatalf("add not served at first: %v", names)
	}
	if _, res := callText(t, f.session, &mcp.CallToolParams{Name: "rug__swap", Arguments: map[string]any{}}); res.IsError {
		t.Fatal("swap failed")
	}
	waitChanged := func(what string, cond func([]string) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			select {
			case <-f.changed:
			case <-time.After(200 * time.Millisecond):
			}
			if cond(toolNames(t, ctx, f.session)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20s: %v", what, toolNames(t, ctx, f.session))
			}
		}
	}
	waitChanged("held tool removed", func(n []string) bool { return !slices.Contains(n, "rug__add") })
	// Not listed, not callable: the client is told there is no such tool.
	if res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "rug__add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil && !res.IsError {
		t.Errorf("the held tool ran: %+v", res)
	}
	// Drain the notifications so far: the next one must be the accept's.
	for len(f.changed) > 0 {
		<-f.changed
	}
	if _, err := f.h.AcceptTools("rug", "add"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no list_changed after the accept")
	}
	tools, err := f.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "rug__add" && tl.Description != testserver.RugPullEvil {
			t.Errorf("accepted add: %q", tl.Description)
		}
	}
}

// The audit line of a call says what the host did on the call's way to
// the model: the call hooks' decisions, the deceptive text found in its
// result, the secrets replaced; a call a hook refused names the hook.
func TestAuditRecordsWhatTheModelReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	hookCmd, hookArgs := testserver.Command("hook", "-mode", "deny", "-reason", "no leaking")
	echo := stdio("echo", "echo")
	echo.Effective.Env = map[string]string{"ECHO_API_TOKEN": "tok_live_4f9a8b7c6d5e4f3a2b1c"}
	f := startWith(t, fixtureOpts{host: func(o *host.Options) {
		o.CallHooks = []config.CallHook{{Name: "dlp", Command: append([]string{hookCmd}, hookArgs...), Before: true,
			TimeoutMs: 20000, Tools: []string{"mcp__echo__side_effect"}}}
	}}, &gateway.Options{Audit: audit}, stdio("smug", "smuggler"), echo)
	got, _ := callText(t, f.session, &mcp.CallToolParams{Name: "smug__fetch", Arguments: map[string]any{"url": "x"}})
	if strings.ContainsRune(got, 0xE0049) || !strings.Contains(got, "[U+202E]evil") {
		t.Errorf("fetch through the gateway: %q", got)
	}
	got, _ = callText(t, f.session, &mcp.CallToolParams{Name: "echo__env", Arguments: map[string]any{"names": []string{"ECHO_API_TOKEN"}}})
	if strings.Contains(got, "tok_live") || !strings.Contains(got, "ECHO_API_TOKEN=<redacted>") {
		t.Errorf("env through the gateway: %q", got)
	}
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "echo__side_effect", Arguments: map[string]any{}})
	if !res.IsError || !strings.Contains(got, `The call hook "dlp" denied this call: no leaking`) {
		t.Errorf("hooked call: %q", got)
	}
	var lines []gateway.AuditEntry
	deadline := time.Now().Add(10 * time.Second)
	for len(lines) < 3 && time.Now().Before(deadline) {
		lines = readAudit(t, path)
		time.Sleep(20 * time.Millisecond)
	}
	if len(lines) != 3 {
		t.Fatalf("%d audit lines: %+v", len(lines), lines)
	}
	if e := lines[0]; len(e.Findings) == 0 || !strings.Contains(strings.Join(e.Findings, "; "), "tag characters removed") {
		t.Errorf("fetch line: %+v", e)
	}
	if e := lines[1]; len(e.Secrets) != 1 || !strings.Contains(e.Secrets[0], "known secret value") {
		t.Errorf("env line: %+v", e)
	}
	if e := lines[2]; len(e.Hooks) != 1 || e.Hooks[0].Decision != "deny" || !e.Hooks[0].Refused ||
		e.Error != "refused by the call hook dlp (before): no leaking" {
		t.Errorf("hooked line: %+v", e)
	}
}
