package host_test

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// A gateway's own entry, as install-gateway writes it into a project's
// .mcp.json, is disabled with the reason, before launch trust: never
// needs-approval (issue 29, point 10). A server that merely runs a
// program named switchboard for another command is not one.
func TestGatewayEntryIsDisabledNotHeld(t *testing.T) {
	entry := resolved("switchboard", config.Server{Type: config.TypeStdio, Command: "switchboard", Args: []string{"serve", "--stdio", "--name-budget", "46"}})
	entry.Scope, entry.Trust = config.ScopeProject, config.TrustRepo
	other := resolved("tools", config.Server{Type: config.TypeStdio, Command: "switchboard", Args: []string{"tools", "--", "serve"}})
	other.Scope, other.Trust = config.ScopeProject, config.TrustRepo
	if !host.IsGatewayServer(&entry) || host.IsGatewayServer(&other) {
		t.Fatalf("IsGatewayServer: entry %v, other %v", host.IsGatewayServer(&entry), host.IsGatewayServer(&other))
	}
	h := newHost(t, cfgOf(entry, other), nil) // DefaultGate: project servers need approval
	if st := statusOf(h, "switchboard"); st.State != host.StateDisabled || st.Reason != host.GatewayEntryReason {
		t.Errorf("the gateway's entry: %s %q; want disabled, %q", st.State, st.Reason, host.GatewayEntryReason)
	}
	if st := statusOf(h, "tools"); st.State != host.StateNeedsApproval {
		t.Errorf("another project server: %s, want needs-approval", st.State)
	}
}
