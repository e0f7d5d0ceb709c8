package switchboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

// world makes a Switchboard directory with one user server, demo, and
// returns options that use it and nothing of the machine's own.
func world() (switchboard.Options, func()) {
	dir, _ := os.MkdirTemp("", "switchboard-example-")
	home := filepath.Join(dir, "sb")
	cmd, args := testserver.Command("demo") // any MCP server command works here
	os.MkdirAll(home, 0o700)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": cmd, "args": args}}})
	os.WriteFile(filepath.Join(home, "mcp.json"), b, 0o600)
	env := map[string]string{}
	return switchboard.Options{
		Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}, func() { os.RemoveAll(dir) }
}

// An agent's MCP layer: open the servers the person configured, hand the
// model their tools, run the calls it makes.
func Example() {
	opts, cleanup := world()
	defer cleanup()
	// The person's own rule; without it, a headless call is denied.
	opts.Settings = config.Settings{"permissions": map[string]any{"allow": []any{"mcp__demo__add"}}}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()

	tools, _ := sb.Tools(ctx, shape.Anthropic) // waits for servers still connecting
	fmt.Println(len(tools) > 0)
	res, err := sb.Call(ctx, "mcp__demo__add", json.RawMessage(`{"a": 2, "b": 3}`))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(strings.Contains(res.Text, "2 + 3 = 5"), strings.HasPrefix(res.Text, "<mcp_response"))
	// Output:
	// true
	// true true
}

// Headless, a call no rule allows is denied, naming the rule that would
// allow it.
func ExampleSwitchboard_Call_denied() {
	opts, cleanup := world()
	defer cleanup()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()
	_, err = sb.Call(ctx, "mcp__demo__add", map[string]any{"a": 2, "b": 3})
	fmt.Println(strings.Contains(fmt.Sprint(err), "no permission rule allows mcp__demo__add"))
	// Output:
	// true
}

// Every settings layer of a run, in precedence order, each labelled.
func ExampleReadSettings() {
	opts, cleanup := world()
	defer cleanup()
	os.WriteFile(config.UserSettingsPath(opts.Home), []byte(`{"permissions": {"deny": ["mcp__demo__delete"]}}`), 0o600)
	opts.Settings = config.Settings{"permissions": map[string]any{"ask": []any{"mcp__demo"}}}

	for _, l := range switchboard.ReadSettings(opts).Layers {
		fmt.Println(l.Scope, l.Scope.Trusted())
	}
	// Output:
	// flag true
	// user true
}

// A settings file inside the repository may only tighten.
func ExampleCheckSettingsFile() {
	dir, _ := os.MkdirTemp("", "repo-")
	defer os.RemoveAll(dir)
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	file := filepath.Join(dir, "team-settings.json")
	os.WriteFile(file, nil, 0o600)

	tighten := config.Settings{"permissions": map[string]any{"deny": []any{"mcp__github"}}}
	grant := config.Settings{"enableAllProjectMcpServers": true}
	fmt.Println(switchboard.CheckSettingsFile(file, tighten, dir, ""))
	err := switchboard.CheckSettingsFile(file, grant, dir, "")
	fmt.Println(err.(*switchboard.RepoSettingsError).Keys)
	// Output:
	// <nil>
	// [enableAllProjectMcpServers]
}

// The launch-trust gate on its own: a server a repository wrote waits for
// the person's approval; the person's own starts.
func ExampleLaunchTrust_Gate() {
	home, _ := os.MkdirTemp("", "sb-")
	defer os.RemoveAll(home)
	lt := switchboard.NewLaunchTrust(home, "/work/repo", &config.SettingsStack{}, nil)
	repo := &config.ResolvedServer{Name: "evil", Scope: config.ScopeProject, Trust: config.TrustRepo,
		File: "/work/repo/.mcp.json", Written: config.Server{Command: "npx", Args: []string{"evil-mcp"}}}
	state, _ := lt.Gate(repo)
	fmt.Println(state)
	lt.Approve(repo)
	state, _ = lt.Gate(repo)
	fmt.Printf("%q\n", state)
	// Output:
	// needs-approval
	// ""
}

// A run's own rules join the settings' (deny still wins).
func ExampleOptions_rules() {
	opts, cleanup := world()
	defer cleanup()
	opts.Rules = []policy.Rule{policy.NewRule(policy.Allow, "mcp__demo", policy.Source{Scope: policy.ScopeSession})}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()
	res, err := sb.Call(ctx, "mcp__demo__add", map[string]any{"a": 1, "b": 1})
	fmt.Println(err == nil && strings.Contains(res.Text, "1 + 1 = 2"))
	// Output:
	// true
}

// A project server nobody approved is held; a call of its tool says so
// with a typed error (no command to run: the front end adds that).
func ExampleNotApprovedError() {
	opts, cleanup := world()
	defer cleanup()
	ws, _ := os.MkdirTemp("", "repo-")
	defer os.RemoveAll(ws)
	cmd, args := testserver.Command("demo")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"repo": map[string]any{"command": cmd, "args": args}}})
	os.WriteFile(filepath.Join(ws, ".mcp.json"), b, 0o644)
	opts.Workspace = ws

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts) // headless: nobody is asked
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()
	sb.Ready(ctx)
	_, err = sb.Call(ctx, "mcp__repo__add", map[string]any{"a": 1, "b": 2})
	var na *switchboard.NotApprovedError
	if errors.As(err, &na) {
		fmt.Println(na.Server, na.State, errors.Is(err, switchboard.ErrNotApproved))
	}
	// Output:
	// repo needs-approval true
}

// Reload applies an edit of the configuration and settings in one step.
func ExampleSwitchboard_Reload() {
	opts, cleanup := world()
	defer cleanup()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()

	cmd, args := testserver.Command("demo")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo":  map[string]any{"command": cmd, "args": args},
		"other": map[string]any{"command": cmd, "args": args},
	}})
	os.WriteFile(filepath.Join(opts.Home, "mcp.json"), b, 0o600)
	res, err := sb.Reload()
	fmt.Println(res.Added, err)
	for _, st := range sb.Status() {
		fmt.Println(st.Name)
	}
	// Output:
	// [other] <nil>
	// demo
	// other
}

// A long call in the background: start it, answer the model at once, and
// collect the result later. Here the tool runs as an MCP task on its
// server (a tool that requires one, as server-everything's
// simulate-research-query does), which Switchboard follows to its end.
func ExampleSwitchboard_Start() {
	opts, cleanup := world()
	defer cleanup()
	cmd, args := testserver.Command("tasks") // a server whose tools run as tasks
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"jobs": map[string]any{"command": cmd, "args": args}}})
	os.WriteFile(filepath.Join(opts.Home, "mcp.json"), b, 0o600)
	opts.Settings = config.Settings{"permissions": map[string]any{"allow": []any{"mcp__jobs"}}}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()

	// Decided (permission rules, a question) before Start returns.
	call, err := sb.Start(ctx, "mcp__jobs__work", map[string]any{"text": "the report", "stages": 3})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("started call", call.ID()) // what the model is told now

	// Later: the calls still listed, and the one it asked about.
	for _, c := range sb.BackgroundCalls() {
		fmt.Println(c.ID(), c.Status().Tool)
	}
	res, err := sb.BackgroundCall("1").Wait(ctx)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(strings.Contains(res.Text, "worked: the report"), call.Status().State)
	// Output:
	// started call 1
	// 1 mcp__jobs__work
	// true done
}

// An agent that defines its servers in code, with no configuration file:
// Load hands them in as session servers (trusted as the person's own), and
// StrictMCPConfig leaves out the servers of the person's files.
func ExampleOptions_load() {
	opts, cleanup := world() // a temporary Home: the settings still come from there
	defer cleanup()
	cmd, args := testserver.Command("demo") // any MCP server command works here
	servers := map[string]config.Server{"calc": {Command: cmd, Args: args}}
	opts.Load = func() (*config.Resolved, error) {
		return config.Load(&config.LoadOptions{
			Home: opts.Home, HomeDir: opts.HomeDir, ManagedDir: opts.ManagedDir, LookupEnv: opts.LookupEnv,
			Session: servers, StrictMCPConfig: true,
		})
	}
	opts.Rules = []policy.Rule{policy.NewRule(policy.Allow, "mcp__calc", policy.Source{Scope: policy.ScopeSession})}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()
	sb.Ready(ctx)
	for _, st := range sb.Status() {
		fmt.Println(st.Name, st.Scope, st.State)
	}
	res, err := sb.Call(ctx, "mcp__calc__add", map[string]any{"a": 2, "b": 3})
	fmt.Println(err == nil && strings.Contains(res.Text, "2 + 3 = 5"))
	// Output:
	// calc session connected
	// true
}

// ListTools is Tools with a warning for each server whose tools are not
// in the list yet: here one still starting when the list is taken. The
// agent can say so, and list again once the server is up.
func ExampleSwitchboard_ListTools() {
	opts, cleanup := world()
	defer cleanup()
	started := filepath.Join(opts.HomeDir, "go") // the server below starts once this file exists
	cmd, args := testserver.Command("slow-start", "-until-file", started)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"late": map[string]any{"command": cmd, "args": args}}})
	os.WriteFile(filepath.Join(opts.Home, "mcp.json"), b, 0o600)
	// How long a list waits for servers still connecting (5 s by default).
	opts.Host = func(o *host.Options) { o.ToolsWait = 100 * time.Millisecond }

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()

	res, err := sb.ListTools(ctx, shape.Anthropic)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(len(res.Tools), res.Warnings)

	os.WriteFile(started, nil, 0o600)
	sb.Ready(ctx) // waits for every server, bounded by ctx alone
	res, _ = sb.ListTools(ctx, shape.Anthropic)
	fmt.Println(len(res.Tools) > 0, res.Warnings)
	// Output:
	// 0 [late: still connecting; not included yet]
	// true []
}
