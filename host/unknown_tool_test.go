package host_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/host"
)

// TestUnknownToolError: a call of a name no server offers fails with an
// *UnknownToolError that says which server the name points at, and states
// the fact without a command of the CLI's.
func TestUnknownToolError(t *testing.T) {
	h := newHost(t, cfgOf(stdio("echo", "echo")), nil)
	ctx := ctxFor(t, 20*time.Second)
	for _, tc := range []struct {
		name string
		want host.UnknownToolError
		msg  string
	}{
		{"mcp__echo__nope", host.UnknownToolError{Name: "mcp__echo__nope", Server: "echo"},
			`unknown tool "mcp__echo__nope": server echo has no such tool`},
		{"mcp__ghost__echo", host.UnknownToolError{Name: "mcp__ghost__echo"},
			`unknown tool "mcp__ghost__echo": no configured server matches`},
		{"bash", host.UnknownToolError{Name: "bash"},
			`unknown tool "bash": MCP tool names look like mcp__<server>__<tool>`},
	} {
		_, err := h.Call(ctx, tc.name, nil)
		var ue *host.UnknownToolError
		if !errors.As(err, &ue) {
			t.Errorf("Call(%s) error = %v, want an *UnknownToolError", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, *ue); diff != "" {
			t.Errorf("Call(%s) error (-want +got):\n%s", tc.name, diff)
		}
		if got := err.Error(); got != tc.msg {
			t.Errorf("Call(%s) error = %q, want %q", tc.name, got, tc.msg)
		}
	}
}
