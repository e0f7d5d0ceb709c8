package trust_test

import (
	"fmt"
	"os"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/trust"
)

// A repository's server is held until approved; changing its env after the
// approval makes the approval stale, naming what changed.
func Example() {
	home, _ := os.MkdirTemp("", "sb")
	defer os.RemoveAll(home)
	store := trust.Open(home)
	rs := &config.ResolvedServer{
		Name: "fs", Scope: config.ScopeProject, Trust: config.TrustRepo,
		Written: config.Server{Command: "npx", Args: []string{"-y", "server-fs", "."}},
	}
	fmt.Println(store.Check(rs, "/ws").Status)

	store.Approve("/ws", rs, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	fmt.Println(store.Check(rs, "/ws").Status)

	rs.Written.Env = map[string]string{"NODE_OPTIONS": "--require ./x.js"}
	v := store.Check(rs, "/ws")
	fmt.Println(v.Status, v.Changed, v.Describe(rs.Written))
	fmt.Println(trust.Danger("NODE_OPTIONS"))
	// Output:
	// needs-approval
	// approved
	// approval-stale [env] env (added NODE_OPTIONS)
	// NODE_OPTIONS changes how node loads code: this server can run any code before its own
}

// A repo-authored server sees only the base environment and what its
// definition names.
func ExampleEnviron() {
	rs := &config.ResolvedServer{
		Name: "gh", Scope: config.ScopeProject, Trust: config.TrustRepo,
		Written: config.Server{Command: "gh-mcp", Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
	}
	parent := []string{"PATH=/usr/bin", "HOME=/home/me", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=y"}
	fmt.Println(trust.PassedVariables(rs, parent))
	fmt.Println(trust.CommandLine("sh", []string{"-c", "echo hi; touch /tmp/x", "evil\x1b[2K"}))
	// Output:
	// [GITHUB_TOKEN HOME PATH]
	// sh -c 'echo hi; touch /tmp/x' $'evil\x1b[2K'
}

// An embedder's launch gate: settings the user controls first, then the
// store. The state names are host.State values, so a host.Gate can return
// host.State(state) directly.
func ExampleDecide() {
	home, _ := os.MkdirTemp("", "sb")
	defer os.RemoveAll(home)
	store := trust.Open(home)
	pre := trust.NewPreApproval(trust.SettingsSource{Label: "--settings", Settings: config.Settings{"enabledMcpjsonServers": []any{"docs"}}})
	gate := func(rs *config.ResolvedServer) (state, reason string) {
		v := trust.Decide(store, pre, rs, "/ws")
		return v.State(), v.Reason(rs)
	}
	for _, name := range []string{"docs", "fs"} {
		rs := &config.ResolvedServer{Name: name, Scope: config.ScopeProject, Trust: config.TrustRepo,
			File: "/ws/.mcp.json", Written: config.Server{Command: name + "-mcp"}}
		state, reason := gate(rs)
		fmt.Printf("%s: %q\n", name, state)
		if reason != "" {
			fmt.Println("  " + reason)
		}
	}
	// Output:
	// docs: ""
	// fs: "needs-approval"
	//   project server from /ws/.mcp.json has not been approved in this workspace
}
