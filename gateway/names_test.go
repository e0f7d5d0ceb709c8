package gateway_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

var legalName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestServedNamesFitBehindClientPrefix: the gateway serves <server>__<tool>
// cut to its budget, so that behind a client's mcp__<entry>__ every name
// is a legal name of at most 64 characters; every name routes to its own
// tool, and the permission check sees the real server and tool.
func TestServedNamesFitBehindClientPrefix(t *testing.T) {
	for _, entry := range []string{"switchboard", "sb"} {
		t.Run(entry, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string][2]string{} // PermitRequest.Tool → server, tool
			permit := func(_ context.Context, req host.PermitRequest) error {
				mu.Lock()
				seen[req.Tool] = [2]string{req.Server, req.ToolName}
				mu.Unlock()
				return nil
			}
			budget := toolsurface.NameBudget(entry)
			f := startWith(t, fixtureOpts{permit: permit}, &gateway.Options{NameBudget: budget},
				stdio("a-server-with-a-rather-long-name", "longnames"), stdio("alpha", "echo"))
			ctx := ctxFor(t, 60*time.Second)
			names := toolNames(t, ctx, f.session)
			byName := map[string]bool{}
			for _, n := range names {
				if byName[n] {
					t.Errorf("%q listed twice", n)
				}
				byName[n] = true
				full := toolsurface.ClientPrefix(entry) + n
				if len(n) > budget || !legalName.MatchString(full) {
					t.Errorf("%q: %d characters served, %q is %d behind the client's prefix", n, len(n), full, len(full))
				}
				if strings.HasPrefix(n, "mcp__") {
					t.Errorf("%q still carries mcp__", n)
				}
			}
			if !byName["alpha__echo"] {
				t.Errorf("alpha__echo not served: %v", names)
			}
			for _, tool := range testserver.LongToolNames {
				name := toolsurface.ServedName("a-server-with-a-rather-long-name", tool, budget)
				if !byName[name] {
					t.Errorf("%q (tool %q) not served: %v", name, tool, names)
					continue
				}
				res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi"}})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %v", name, err, res)
				}
				got := textOf(t, res)
				if !strings.Contains(got, tool+": hi") || !strings.Contains(got, `tool="`+tool+`"`) {
					t.Errorf("%s answered %q, want the answer of %q", name, got, tool)
				}
			}
			// The permission check saw the host's names and the real pair.
			mu.Lock()
			defer mu.Unlock()
			for _, tool := range testserver.LongToolNames {
				want := toolsurface.ToolName("a-server-with-a-rather-long-name", tool)
				if got := seen[want]; got != [2]string{"a-server-with-a-rather-long-name", tool} {
					t.Errorf("permit for %s saw %v (all: %v)", want, got, seen)
				}
			}
		})
	}
}

// TestServedNameClashIsRefused: a tool whose served name would be an admin
// tool's is not served (and the admin tool still works); nothing is routed
// by guesswork.
func TestServedNameClashIsRefused(t *testing.T) {
	f := start(t, &gateway.Options{AdminTools: true}, stdio("switchboard", "echo", "-tool", "pause"), stdio("alpha", "echo"))
	ctx := ctxFor(t, 30*time.Second)
	names := toolNames(t, ctx, f.session)
	if !has(names, "switchboard__echo") || !has(names, gateway.PauseTool) {
		t.Fatalf("names %v", names)
	}
	res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: gateway.PauseTool, Arguments: map[string]any{"server": "alpha"}})
	if err != nil || res.IsError || !strings.Contains(textOf(t, res), "paused alpha") {
		t.Fatalf("pause: %v %v", err, res)
	}
}
