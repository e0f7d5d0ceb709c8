package switchboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

// profileHome writes a home with the echo test servers named, each
// marked by an environment variable (SB_VIEW_TEST=<marker>-<name>) so
// that its processes can be counted, and user settings.
func profileHome(t testing.TB, marker string, settings map[string]any, names ...string) (dir, home string) {
	t.Helper()
	dir = t.TempDir()
	home = filepath.Join(dir, "sb")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	for _, n := range names {
		cmd, args := testserver.Command("echo")
		m[n] = map[string]any{"command": cmd, "args": args, "env": map[string]string{"SB_VIEW_TEST": marker + "-" + n}}
	}
	writeJSON(t, filepath.Join(home, "mcp.json"), map[string]any{"mcpServers": m})
	writeJSON(t, config.UserSettingsPath(home), settings)
	return dir, home
}

// serverProcesses counts the running test-server processes whose
// environment holds SB_VIEW_TEST=value (Linux: -1 elsewhere).
func serverProcesses(t testing.TB, value string) int {
	t.Helper()
	return testServerProcesses(t, func(kv string) bool { return kv == "SB_VIEW_TEST="+value })
}

// testServerProcesses counts the running test-server processes with an
// environment entry ("K=V") that match accepts (Linux: -1 elsewhere).
func testServerProcesses(t testing.TB, match func(kv string) bool) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return -1
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if argv := strings.Split(string(cmd), "\x00"); len(argv) < 2 || argv[1] != testserver.Arg {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if slices.ContainsFunc(strings.Split(string(env), "\x00"), match) {
			n++
		}
	}
	return n
}

func toolNames(t *testing.T, ctx context.Context, sb *switchboard.Switchboard) []string {
	t.Helper()
	tools, err := sb.Tools(ctx, shape.Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, raw := range tools {
		var d struct{ Name string }
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Name)
	}
	return out
}

// TestProfileViewsShareOneProcess (issue 34): a main agent opened on
// profile "main" and a sub-agent's view of profile "sub" (which extends
// it) run over one process per server: the sub-agent's call reaches the
// very process the main agent's does, and no second copy is started. The
// server no profile of theirs includes never starts. The view shows only
// its servers and the tools its filter leaves, refuses the rest, and its
// deny rule tightens only the view.
func TestProfileViewsShareOneProcess(t *testing.T) {
	marker := "v" + strings.ReplaceAll(t.Name(), "/", "-")
	allow := []string{"mcp__fs__pid", "mcp__docs__pid", "mcp__docs__echo", "mcp__docs__side_effect", "mcp__docs__add"}
	dir, home := profileHome(t, marker, map[string]any{
		"permissions": map[string]any{"allow": allow},
		"profiles": map[string]any{
			"main": map[string]any{"servers": []string{"fs", "docs"}},
			"sub": map[string]any{"extends": []string{"main"}, "servers": []string{"docs"}, "disabledTools": []string{"add"},
				"permissions": map[string]any{"deny": []string{"mcp__docs__side_effect"}}},
		},
	}, "fs", "docs", "other")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	main, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(string) (string, bool) { return "", false }, Profile: "main"})
	if err != nil {
		t.Fatal(err)
	}
	defer main.Close()
	sub, err := main.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	if got := sub.Profile(); got != "sub" {
		t.Errorf("Profile() = %q, want sub", got)
	}

	pid := func(sb *switchboard.Switchboard, name string) string {
		t.Helper()
		res, err := sb.Call(ctx, name, map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Raw == nil || len(res.Raw.Content) == 0 {
			t.Fatalf("%s: no content", name)
		}
		tc, _ := res.Raw.Content[0].(*mcp.TextContent)
		if tc == nil {
			t.Fatalf("%s: content %T", name, res.Raw.Content[0])
		}
		return tc.Text
	}
	mainPid, subPid := pid(main, "mcp__docs__pid"), pid(sub, "mcp__docs__pid")
	if mainPid != subPid || mainPid == "" {
		t.Errorf("main agent's docs answered as %q, the sub-agent's as %q: want one process", mainPid, subPid)
	}
	// fs starts beside docs and may still be starting: a call waits for
	// it, so that its processes are counted running.
	pid(main, "mcp__fs__pid")
	for name, want := range map[string]int{"docs": 1, "fs": 1, "other": 0} {
		if n := serverProcesses(t, marker+"-"+name); n >= 0 && n != want {
			t.Errorf("%d processes of server %s, want %d", n, name, want)
		}
	}

	if got, want := toolNames(t, ctx, sub), []string{"mcp__docs__"}; !allPrefixed(got, want[0]) || slices.Contains(got, "mcp__docs__add") || !slices.Contains(got, "mcp__docs__echo") {
		t.Errorf("sub-agent's tools = %v, want docs's only, without add", got)
	}
	if got := toolNames(t, ctx, main); !slices.Contains(got, "mcp__fs__pid") || !slices.Contains(got, "mcp__docs__add") || slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "mcp__other__") }) {
		t.Errorf("main agent's tools = %v, want fs's and docs's, none of other's", got)
	}
	var st []string
	for _, s := range sub.Status() {
		st = append(st, s.Name)
	}
	if !slices.Equal(st, []string{"docs"}) {
		t.Errorf("sub-agent's status lists %v, want [docs]", st)
	}
	// The Switchboard opened on profile main lists the server it leaves
	// out, disabled; the sub-agent's view lists only its own (above).
	listed := false
	for _, s := range main.Status() {
		if s.Name == "other" {
			listed = true
			if s.State != host.StateDisabled || !strings.Contains(s.Reason, `not in profile "main"`) {
				t.Errorf("other: %s (%s), want disabled as not in profile main", s.State, s.Reason)
			}
		}
	}
	if !listed {
		t.Error("main's status does not list other, which its profile leaves out")
	}

	if _, err := sub.Call(ctx, "mcp__fs__pid", map[string]any{}); err == nil {
		t.Error("the sub-agent called a server its profile leaves out")
	}
	if _, err := sub.Call(ctx, "mcp__docs__add", map[string]any{"a": 1, "b": 2}); !errors.Is(err, host.ErrFiltered) {
		t.Errorf("sub-agent's call of a hidden tool: %v, want ErrFiltered", err)
	}
	if _, err := sub.Call(ctx, "mcp__docs__side_effect", map[string]any{}); !errors.Is(err, host.ErrDenied) {
		t.Errorf("sub-agent's call denied by its profile: %v, want ErrDenied", err)
	}
	if _, err := main.Call(ctx, "mcp__docs__side_effect", map[string]any{}); err != nil {
		t.Errorf("main agent's call (the profile's deny is the sub-agent's only): %v", err)
	}

	// Closing the view leaves the servers running for the main agent.
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if got := pid(main, "mcp__docs__pid"); got != mainPid {
		t.Errorf("after the view closed, docs answered as %q, want %q", got, mainPid)
	}
}

func allPrefixed(names []string, prefix string) bool {
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) {
			return false
		}
	}
	return len(names) > 0
}

// TestUnknownProfile: a name no profile has is an error listing the
// valid ones, and nothing starts.
func TestUnknownProfile(t *testing.T) {
	marker := "v" + t.Name()
	dir, home := profileHome(t, marker, map[string]any{
		"profiles": map[string]any{"review": map[string]any{"servers": []string{"fs"}}, "code": map[string]any{}},
	}, "fs")
	_, err := switchboard.Open(context.Background(), switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(string) (string, bool) { return "", false }, Profile: "reveiw"})
	var ue *switchboard.UnknownProfileError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "code, review") {
		t.Fatalf("Open = %v, want an UnknownProfileError listing code, review", err)
	}
	if n := serverProcesses(t, marker+"-fs"); n > 0 {
		t.Errorf("%d processes started for an unknown profile", n)
	}
}

// TestProfileViewsDeferDifferently (issue 34): two views over one docs
// process defer its tools differently by their profiles' own "defer" and
// "noDefer": the lean sub-agent lists tool_search and docs's pid only,
// the other view every tool and no tool_search; a tool_search hit loads
// the tool into the lean view alone.
func TestProfileViewsDeferDifferently(t *testing.T) {
	marker := "v" + t.Name()
	dir, home := profileHome(t, marker, map[string]any{
		"profiles": map[string]any{
			"lean": map[string]any{"defer": []string{"mcp__docs__*"}, "noDefer": []string{"mcp__docs__pid"}},
			"full": map[string]any{"servers": []string{"docs"}},
		},
	}, "docs")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb := openAt(ctx, t, dir, home)
	defer sb.Close()
	lean, err := sb.View("lean")
	if err != nil {
		t.Fatal(err)
	}
	full, err := sb.View("full")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, ctx, lean); !slices.Equal(got, []string{"mcp__docs__pid", "tool_search"}) {
		t.Errorf("lean view lists %v, want [mcp__docs__pid tool_search]", got)
	}
	fullTools := toolNames(t, ctx, full)
	if slices.Contains(fullTools, "tool_search") || !slices.Contains(fullTools, "mcp__docs__echo") || !slices.Contains(fullTools, "mcp__docs__pid") {
		t.Errorf("full view lists %v, want every docs tool and no tool_search", fullTools)
	}
	res, err := lean.Call(ctx, "tool_search", map[string]any{"query": "select:mcp__docs__echo"})
	if err != nil || res.Raw == nil || res.Raw.IsError {
		t.Fatalf("tool_search in the lean view: %v %+v", err, res)
	}
	if got := toolNames(t, ctx, lean); !slices.Contains(got, "mcp__docs__echo") || slices.Contains(got, "mcp__docs__add") {
		t.Errorf("after tool_search the lean view lists %v, want echo loaded and add still deferred", got)
	}
	if got := toolNames(t, ctx, sb); !slices.Equal(got, fullTools) {
		t.Errorf("the Switchboard beneath lists %v, want %v (no profile, no deferral)", got, fullTools)
	}
	if n := serverProcesses(t, marker+"-docs"); n >= 0 && n != 1 {
		t.Errorf("%d processes of docs, want 1", n)
	}
}

// An unknown profile's error, where the settings define none, names no
// command of the CLI's: an embedder's users have no switchboard command.
func TestUnknownProfileNamesNoCommand(t *testing.T) {
	dir := t.TempDir()
	_, err := switchboard.Open(context.Background(), switchboard.Options{Home: filepath.Join(dir, "sb"), HomeDir: dir,
		ManagedDir: filepath.Join(dir, "managed"), LookupEnv: func(string) (string, bool) { return "", false }, Profile: "x"})
	if !errors.Is(err, switchboard.ErrUnknownProfile) || strings.Contains(err.Error(), "`switchboard") {
		t.Fatalf("Open = %v, want ErrUnknownProfile naming no switchboard command", err)
	}
}

// TestProfileExtendingKeepsItsOwnDeferral: a user profile that extends a
// repository's profile decides what its agent sees up front itself: its
// own "defer" is not overridden by the repository's "noDefer" (extending
// narrows what may be called, not how the user presents it), and the
// repository's server list still narrows it.
func TestProfileExtendingKeepsItsOwnDeferral(t *testing.T) {
	marker := "v" + t.Name()
	dir, home := profileHome(t, marker, map[string]any{
		"profiles": map[string]any{
			"mine": map[string]any{"extends": []string{"repo-base"}, "defer": []string{"mcp__docs__*"}, "noDefer": []string{"mcp__docs__pid"}},
		},
	}, "docs", "other")
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, ".switchboard"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(work, ".switchboard", "settings.json"), map[string]any{
		"profiles": map[string]any{
			"repo-base": map[string]any{"servers": []string{"docs"}, "noDefer": []string{"mcp__docs__echo", "mcp__docs__add"}},
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, Workspace: work, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	mine, err := sb.View("mine")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, ctx, mine); !slices.Equal(got, []string{"mcp__docs__pid", "tool_search"}) {
		t.Errorf("mine lists %v, want [mcp__docs__pid tool_search]: its own defer over the repository's noDefer", got)
	}
	base, err := sb.View("repo-base")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, ctx, base); !slices.Contains(got, "mcp__docs__echo") || slices.Contains(got, "mcp__other__echo") {
		t.Errorf("repo-base lists %v, want docs's echo and nothing of other", got)
	}
}

// docsAndSecret opens a Switchboard with two servers, "docs" (echo and
// pid) and "secret" (three tools no enabledTools of echo and pid shows),
// and the profiles given; the listing has settled.
func docsAndSecret(t *testing.T, ctx context.Context, profiles map[string]any) *switchboard.Switchboard {
	t.Helper()
	dir, home := profileHome(t, "v"+t.Name(), map[string]any{"profiles": profiles})
	cmd, args := testserver.Command("echo")
	many, manyArgs := testserver.Command("many-tools", "-n", "3")
	writeJSON(t, filepath.Join(home, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"docs":   map[string]any{"command": cmd, "args": args},
		"secret": map[string]any{"command": many, "args": manyArgs},
	}})
	sb := openAt(ctx, t, dir, home)
	t.Cleanup(func() { sb.Close() })
	sb.Ready(ctx)
	return sb
}

// toolSearchIn returns whether profile's view lists tool_search, and its
// description.
func toolSearchIn(t *testing.T, ctx context.Context, sb *switchboard.Switchboard, profile string) (bool, string) {
	t.Helper()
	v, err := sb.View(profile)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := v.Tools(ctx, shape.Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range tools {
		var d struct{ Name, Description string }
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		if d.Name == "tool_search" {
			return true, d.Description
		}
	}
	return false, ""
}

// TestProfileToolSearchNamesOnlyWhatItShows: tool_search's description,
// in a view whose profile hides every tool of a server by its tool
// filters, names only the servers whose tools the view shows: the model
// learns nothing of the other (here "secret", whose tools are all hidden
// by enabledTools).
func TestProfileToolSearchNamesOnlyWhatItShows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb := docsAndSecret(t, ctx, map[string]any{
		"lean": map[string]any{"enabledTools": []string{"echo", "pid"}, "defer": []string{"mcp__*"}},
		"all":  map[string]any{"defer": []string{"mcp__*"}},
	})
	for name, want := range map[string]string{"lean": "deferred: docs)", "all": "deferred: docs, secret)"} {
		if _, desc := toolSearchIn(t, ctx, sb, name); !strings.Contains(desc, want) {
			t.Errorf("%s: tool_search says %q, want it to name %q", name, desc, want)
		}
	}
}

// TestProfileToolSearchNotKeptByAHiddenDownServer: a server that is down
// (paused here) keeps tool_search listed, so that the tool block does not
// change while it reconnects, when its last tools would be deferred, but
// not in a view whose profile hides every one of them: there tool_search
// would be a tool with nothing to find, and the model told of deferred
// tools it can never reach.
func TestProfileToolSearchNotKeptByAHiddenDownServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb := docsAndSecret(t, ctx, map[string]any{
		"lean": map[string]any{"enabledTools": []string{"echo", "pid"}, "defer": []string{"mcp__secret__*"}},
		"all":  map[string]any{"defer": []string{"mcp__secret__*"}},
	})
	if _, err := sb.Host().Tools(ctx); err != nil { // secret's tools are known
		t.Fatal(err)
	}
	if err := sb.Host().Pause("secret"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"lean": false, "all": true} {
		if listed, _ := toolSearchIn(t, ctx, sb, name); listed != want {
			t.Errorf("%s, secret paused: tool_search listed %v, want %v", name, listed, want)
		}
	}
}
