package switchboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func servers(names ...string) map[string]any {
	m := map[string]any{}
	for _, n := range names {
		cmd, args := testserver.Command("echo")
		m[n] = map[string]any{"command": cmd, "args": args}
	}
	return map[string]any{"mcpServers": m}
}

// TestWatchReloadsConfigAndSettingsInOneStep: with Watch running, a server
// added to the configuration and an allow rule added to the settings take
// effect together, real files and a real server; the rule's removal takes
// the call away again; subscribers see the new server's states, and a
// subscription ends with its context.
func TestWatchReloadsConfigAndSettingsInOneStep(t *testing.T) {
	dir, home := newHome(t)
	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb := openAt(ctx, t, dir, home)
	defer sb.Close()
	var seen atomic.Int32
	subCtx, endSub := context.WithCancel(ctx)
	sb.Subscribe(subCtx, func(ev host.Event) {
		if ev.Server == "two" && ev.Kind == host.EventState {
			seen.Add(1)
		}
	})
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan error, 1)
	go func() { watched <- sb.Watch(watchCtx) }()

	call := func() error {
		_, err := sb.Call(ctx, "mcp__two__echo", map[string]any{"text": "hi"})
		return err
	}
	// until polls for a condition; the bound is a guard against a hang.
	until := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s", what)
			}
		}
	}

	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one", "two"))
	writeJSON(t, config.UserSettingsPath(home), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__two__echo"}}})
	until("the new server's call, allowed by the new rule", func() bool { return call() == nil })
	if seen.Load() == 0 {
		t.Error("the subscriber saw no state of the new server")
	}

	writeJSON(t, config.UserSettingsPath(home), map[string]any{})
	until("the call denied once the rule is gone", func() bool { return errors.Is(call(), host.ErrDenied) })

	endSub()
	before := seen.Load()
	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one"))
	until("the removed server gone", func() bool {
		for _, st := range sb.Status() {
			if st.Name == "two" {
				return false
			}
		}
		return true
	})
	if n := seen.Load(); n != before {
		t.Errorf("an ended subscription still got %d events", n-before)
	}
	stopWatch()
	if err := <-watched; !errors.Is(err, context.Canceled) {
		t.Errorf("Watch returned %v, want context.Canceled", err)
	}
}

// TestRepoSettingsFileMayOnlyTighten: Open refuses a settings file inside
// the repository that grants, before anything starts.
func TestRepoSettingsFileMayOnlyTighten(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, "settings.json")
	writeJSON(t, file, map[string]any{"enabledMcpjsonServers": []string{"evil"}})
	_, err := switchboard.Open(context.Background(), switchboard.Options{Workspace: ws, Home: filepath.Join(dir, "sb"), HomeDir: dir,
		Settings: config.Settings{"enabledMcpjsonServers": []any{"evil"}}, SettingsFile: file,
		LookupEnv: func(string) (string, bool) { return "", false }})
	var re *switchboard.RepoSettingsError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "may only tighten") {
		t.Fatalf("Open = %v, want a RepoSettingsError", err)
	}
}

// newHome makes a folder for a test and, in it, the Switchboard home
// "sb" (0700).
func newHome(t testing.TB) (dir, home string) {
	t.Helper()
	dir = t.TempDir()
	home = filepath.Join(dir, "sb")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir, home
}

// openAt opens a Switchboard over the Switchboard home home in the home
// directory dir, with managed settings under dir/managed and no
// environment.
func openAt(ctx context.Context, t testing.TB, dir, home string) *switchboard.Switchboard {
	t.Helper()
	sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// elicitOnly answers elicitations only: the rest is Headless's.
type elicitOnly struct{ switchboard.Headless }

// TestPartialPrompterLeavesTheRestHeadless: a Prompter that embeds
// Headless to answer only some questions leaves the others as a headless
// run does. Nobody reviewed the project server, so it needs approval (it
// was not "declined for this run"), and a call no rule allows names the
// rule to add (nobody "refused" it when asked).
func TestPartialPrompterLeavesTheRestHeadless(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "sb")
	ws := filepath.Join(dir, "repo")
	for _, d := range []string{home, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON(t, filepath.Join(home, "mcp.json"), servers("mine"))
	writeJSON(t, filepath.Join(ws, ".mcp.json"), servers("repo"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, p := range []switchboard.Prompter{nil, elicitOnly{}} {
		sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
			Workspace: ws, Prompter: p, LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		sb.Ready(ctx)
		for _, st := range sb.Status() {
			if st.Name == "repo" && (st.State != host.StateNeedsApproval || strings.Contains(st.Reason, "did not approve")) {
				t.Errorf("%T: repo is %s %q, want needs-approval, not declined", p, st.State, st.Reason)
			}
		}
		_, err = sb.Call(ctx, "mcp__mine__echo", map[string]any{"text": "hi"})
		if !errors.Is(err, host.ErrDenied) || !strings.Contains(err.Error(), "no permission rule allows mcp__mine__echo") {
			t.Errorf("%T: call = %v, want a deny naming the rule to add", p, err)
		}
		sb.Close()
	}
}

// TestReloadAfterCloseFails: after Close, Reload fails with host.ErrClosed,
// as Tools and Call do, and changes nothing: a server added to the file
// meanwhile is not taken into the configuration shown, and no subscriber
// hears of a reload.
func TestReloadAfterCloseFails(t *testing.T) {
	dir, home := newHome(t)
	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb := openAt(ctx, t, dir, home)
	var reloads atomic.Int32
	sb.Subscribe(ctx, func(ev host.Event) {
		if ev.Kind == switchboard.EventReloaded {
			reloads.Add(1)
		}
	})
	// Open's own Reload works, and is heard: the check below can fail.
	if _, err := sb.Reload(); err != nil || reloads.Load() != 1 {
		t.Fatalf("Reload before Close = %v with %d reload events, want nil and 1", err, reloads.Load())
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Tools(ctx, "anthropic"); !errors.Is(err, host.ErrClosed) {
		t.Fatalf("Tools after Close = %v, want host.ErrClosed", err)
	}

	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one", "two"))
	res, err := sb.Reload()
	if !errors.Is(err, host.ErrClosed) {
		t.Errorf("Reload after Close = %v, want host.ErrClosed", err)
	}
	if res.Changed() {
		t.Errorf("Reload after Close changed %+v", res)
	}
	if sb.Config().Server("two") != nil {
		t.Error("Reload after Close took the new server into Config")
	}
	if n := reloads.Load(); n != 1 {
		t.Errorf("Reload after Close published %d more reload events", n-1)
	}
}

// TestServerOfNoStatedTrustDoesNotStart: a config.ResolvedServer built by
// hand (an embedder's Options.Load) whose Trust is empty, or not a Trust
// at all, is not run as the user's own server (unsandboxed, unasked): it
// does not start, and its status and a call of its tool name the server
// and the field. The same server with TrustUser starts, so the test can
// fail.
func TestServerOfNoStatedTrustDoesNotStart(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "sb")
	cmd, args := testserver.Command("echo")
	def := config.Server{Type: config.TypeStdio, Command: cmd, Args: args}
	for _, tc := range []struct {
		name  string
		trust config.Trust
		want  host.State
		why   string
	}{
		{"user", config.TrustUser, host.StateConnected, ""},
		{"empty", "", host.StateError, "config.ResolvedServer.Trust is empty"},
		{"unknown", "trusted", host.StateError, `config.ResolvedServer.Trust is "trusted"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
				LookupEnv: func(string) (string, bool) { return "", false },
				Rules:     []policy.Rule{policy.NewRule(policy.Allow, "mcp__bare", policy.Source{Scope: policy.ScopeSession})},
				Load: func() (*config.Resolved, error) {
					return &config.Resolved{Servers: []config.ResolvedServer{{
						Name: "bare", Written: def, Effective: def, Scope: config.ScopeSession, Trust: tc.trust, Availability: config.Available,
					}}}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			sb.Ready(ctx)
			st := sb.Status()
			if len(st) != 1 || st[0].State != tc.want || !strings.Contains(st[0].Reason, tc.why) {
				t.Fatalf("status = %+v, want bare %s (%q)", st, tc.want, tc.why)
			}
			_, err = sb.Call(ctx, "mcp__bare__echo", map[string]any{"text": "hi"})
			if tc.why == "" {
				if err != nil {
					t.Fatalf("call of a user-trusted server: %v", err)
				}
				return
			}
			if !errors.Is(err, host.ErrNotConnected) || !strings.Contains(err.Error(), "bare") || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("call = %v, want ErrNotConnected naming bare and %q", err, tc.why)
			}
		})
	}
}

// TestListToolsWarnsOfServersStillConnecting: ListTools has Tools' list,
// and a warning for a server still connecting when it gave up waiting
// (Tools drops it); once that server is up its tools are listed and the
// warning is gone. After Close it fails as Tools does.
func TestListToolsWarnsOfServersStillConnecting(t *testing.T) {
	dir, home := newHome(t)
	release := filepath.Join(dir, "release")
	cfg := servers("ready")
	cmd, args := testserver.Command("slow-start", "-until-file", release)
	cfg["mcpServers"].(map[string]any)["late"] = map[string]any{"command": cmd, "args": args}
	writeJSON(t, filepath.Join(home, "mcp.json"), cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(string) (string, bool) { return "", false },
		Host:      func(o *host.Options) { o.ToolsWait = 200 * time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st := sb.Status(); len(st) == 2 && st[1].Name == "ready" && st[1].State == host.StateConnected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ready not connected within 30s: %+v", sb.Status())
		}
	}
	names := func(tools []json.RawMessage) (servers map[string]bool) {
		servers = map[string]bool{}
		for _, raw := range tools {
			var def struct{ Name string }
			if err := json.Unmarshal(raw, &def); err != nil {
				t.Fatal(err)
			}
			servers[strings.Split(def.Name, "__")[1]] = true
		}
		return servers
	}

	res, err := sb.ListTools(ctx, "anthropic")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Tools); !got["ready"] || got["late"] {
		t.Errorf("tools of %v, want ready's only", got)
	}
	if want := []string{"late: still connecting; not included yet"}; !slices.Equal(res.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Warnings, want)
	}
	tools, err := sb.Tools(ctx, "anthropic")
	if err != nil || len(tools) != len(res.Tools) {
		t.Errorf("Tools = %d tools, %v; want ListTools' %d", len(tools), err, len(res.Tools))
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !sb.Ready(ctx) {
		t.Fatalf("not ready: %+v", sb.Status())
	}
	if res, err = sb.ListTools(ctx, "anthropic"); err != nil {
		t.Fatal(err)
	}
	if got := names(res.Tools); !got["ready"] || !got["late"] || len(res.Warnings) != 0 {
		t.Errorf("once late is up: tools of %v, warnings %q; want both servers', none", got, res.Warnings)
	}

	sb.Close()
	if _, err := sb.ListTools(ctx, "anthropic"); !errors.Is(err, host.ErrClosed) {
		t.Errorf("ListTools after Close = %v, want host.ErrClosed", err)
	}
}

// approveAll approves every server it is asked about, and counts them.
type approveAll struct {
	switchboard.Headless
	asked *atomic.Int32
}

func (a approveAll) ApproveServer(context.Context, switchboard.Review) (bool, error) {
	a.asked.Add(1)
	return true, nil
}

// TestZeroAvailabilityIsAvailable: a config.ResolvedServer built by hand
// (an embedder's Options.Load) that leaves Availability out is taken as
// config.Available everywhere: it starts, and a repository's one is put
// to the Prompter before it starts (launch trust skipped it, so it was
// held for approval nobody was asked for, while the host took it as
// available). An Availability that is none of config's values does not
// start: its status names the field (it started, whatever the embedder
// meant by it).
func TestZeroAvailabilityIsAvailable(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "sb")
	ws := filepath.Join(dir, "repo")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd, args := testserver.Command("echo")
	def := config.Server{Type: config.TypeStdio, Command: cmd, Args: args}
	for _, tc := range []struct {
		name  string
		trust config.Trust
		avail config.Availability
		want  host.State
		asked int32
		why   string
	}{
		{"user", config.TrustUser, "", host.StateConnected, 0, ""},
		{"repo", config.TrustRepo, "", host.StateConnected, 1, ""},
		{"repo-available", config.TrustRepo, config.Available, host.StateConnected, 1, ""},
		{"unknown", config.TrustUser, "enabled", host.StateError, 0, `config.ResolvedServer.Availability is "enabled"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var asked atomic.Int32
			scope := config.ScopeUser
			if tc.trust == config.TrustRepo {
				scope = config.ScopeProject
			}
			sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"), Workspace: ws,
				LookupEnv: func(string) (string, bool) { return "", false }, Prompter: approveAll{asked: &asked},
				Load: func() (*config.Resolved, error) {
					return &config.Resolved{Workspace: ws, Servers: []config.ResolvedServer{{
						Name: tc.name, Written: def, Effective: def, Scope: scope, Trust: tc.trust, Availability: tc.avail,
						File: filepath.Join(ws, ".mcp.json"),
					}}}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			sb.Ready(ctx)
			st := sb.Status()
			if len(st) != 1 || st[0].State != tc.want || !strings.Contains(st[0].Reason, tc.why) {
				t.Errorf("status = %+v, want %s %s (%q)", st, tc.name, tc.want, tc.why)
			}
			if n := asked.Load(); n != tc.asked {
				t.Errorf("the Prompter was asked about %d servers, want %d", n, tc.asked)
			}
		})
	}
}
