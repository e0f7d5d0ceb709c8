package gateway_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// TestNewPermitLazyArgs: with the host leaving the arguments to the
// Permit (host.Options.LazyPermitArgs), NewPermit still decides a call a
// rule with argument conditions could match on its arguments, and sends
// the arguments it decided on; a call no such rule could match runs.
func TestNewPermitLazyArgs(t *testing.T) {
	user := policy.Source{Scope: policy.ScopeUser, File: "settings.json"}
	pol := policy.New(
		policy.NewRule(policy.Allow, "mcp__alpha", user),
		policy.NewRule(policy.Deny, `mcp__alpha__echo(text:"secret*")`, user),
	)
	h := host.New(&config.Resolved{Servers: []config.ResolvedServer{stdio("alpha", "echo")}}, &host.Options{
		LookupEnv:      func(string) (string, bool) { return "", false },
		CloseGrace:     500 * time.Millisecond,
		Permit:         gateway.NewPermit(pol, nil, nil),
		LazyPermitArgs: true,
	})
	t.Cleanup(func() { h.Close() })
	ctx := ctxFor(t, 30*time.Second)
	text := func(res *mcp.CallToolResult) string {
		if res == nil || len(res.Content) == 0 {
			return ""
		}
		tc, _ := res.Content[0].(*mcp.TextContent)
		if tc == nil {
			return ""
		}
		return tc.Text
	}
	res, err := h.Call(ctx, "mcp__alpha__echo", json.RawMessage(`{"text":"hello"}`))
	if err != nil || text(res) != "hello" {
		t.Fatalf("allowed echo = %v, %v", res, err)
	}
	for _, raw := range []string{`{"text":"secret plan"}`, `{"text":"fine","text":"secret plan"}`} {
		_, err := h.Call(ctx, "mcp__alpha__echo", json.RawMessage(raw))
		var de *host.DeniedError
		if !errors.As(err, &de) || de.Decision.Action != policy.Deny || de.Decision.Rule == nil || !de.Decision.Rule.Pattern().HasArgs() {
			t.Errorf("echo %s = %v, want denied by the argument rule", raw, err)
		}
	}
	res, err = h.Call(ctx, "mcp__alpha__echo", json.RawMessage(`{"text":"secret plan","text":"fine"}`))
	if err != nil || text(res) != "fine" {
		t.Errorf("echo with text given twice = %v, %v; want the value decided on", res, err)
	}
	if _, err := h.Call(ctx, "mcp__alpha__env", json.RawMessage(`{"names":["HOME"]}`)); err != nil {
		t.Errorf("env = %v", err)
	}
}
