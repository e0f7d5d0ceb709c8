package switchboard

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// TestGateStates maps verdicts to host states with reasons.
func TestGateStates(t *testing.T) {
	lt := NewLaunchTrust(t.TempDir(), "/ws", &config.SettingsStack{}, time.Now)
	rs := &config.ResolvedServer{Name: "r", Scope: config.ScopeProject, Trust: config.TrustRepo, File: "/ws/.mcp.json", Written: config.Server{Command: "x"}}
	if st, why := lt.Gate(rs); st != host.StateNeedsApproval || !strings.Contains(why, "has not been approved") || strings.Contains(why, "switchboard") {
		t.Errorf("gate = %s %q", st, why)
	}
	lt.Store().Approve("/ws", rs, time.Now())
	if st, _ := lt.Gate(rs); st != "" {
		t.Errorf("approved: %s", st)
	}
	rs.Written.Command = "y"
	if st, why := lt.Gate(rs); st != host.StateApprovalStale || !strings.Contains(why, "(command)") {
		t.Errorf("stale: %s %q", st, why)
	}
	user := &config.ResolvedServer{Name: "u", Scope: config.ScopeUser, Trust: config.TrustUser}
	if st, _ := lt.Gate(user); st != "" {
		t.Errorf("user: %s", st)
	}
}

// A server denied for this run says so, and an approval lifts that.
func TestGateDeniedForThisRun(t *testing.T) {
	lt := NewLaunchTrust(t.TempDir(), "/ws", &config.SettingsStack{}, time.Now)
	rs := &config.ResolvedServer{Name: "r", Scope: config.ScopeProject, Trust: config.TrustRepo, File: "/ws/.mcp.json", Written: config.Server{Command: "x"}}
	lt.Deny("r")
	if st, why := lt.Gate(rs); st != host.StateNeedsApproval || !strings.Contains(why, "did not approve it for this run") {
		t.Errorf("denied: %s %q", st, why)
	}
	if err := lt.Approve(rs); err != nil {
		t.Fatal(err)
	}
	if st, _ := lt.Gate(rs); st != "" || lt.Denied("r") {
		t.Errorf("approved after a deny: %s", st)
	}
}

// Nil settings are no settings: the gate holds a repository's server and
// lets the user's start, as with an empty stack.
func TestLaunchTrustNilSettings(t *testing.T) {
	lt := NewLaunchTrust(t.TempDir(), "/ws", nil, nil)
	rs := &config.ResolvedServer{Name: "r", Scope: config.ScopeProject, Trust: config.TrustRepo, File: "/ws/.mcp.json", Written: config.Server{Command: "x"}}
	if st, _ := lt.Gate(rs); st != host.StateNeedsApproval {
		t.Errorf("repo server with nil settings: %s", st)
	}
	user := &config.ResolvedServer{Name: "u", Scope: config.ScopeUser, Trust: config.TrustUser}
	if st, _ := lt.Gate(user); st != "" {
		t.Errorf("user server with nil settings: %s", st)
	}
	if w := lt.SetSettings(nil); len(w) != 0 {
		t.Errorf("SetSettings(nil) = %v", w)
	}
}
