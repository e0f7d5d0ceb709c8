package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// freshWorld is a gatewayWorld of a new user: a home with no
// ~/.switchboard, a workspace with only .git, and no managed folder.
// sbHome is where the Switchboard folder will be (~/.switchboard unless
// sbHome is given, which is then set as SWITCHBOARD_HOME); the managed
// folder is two levels below one that does not exist either.
func freshWorld(t *testing.T, sbHome string) *gatewayWorld {
	t.Helper()
	dir := t.TempDir()
	w := &gatewayWorld{dir: dir, home: filepath.Join(dir, "home"), ws: filepath.Join(dir, "ws")}
	for _, d := range []string{w.home, filepath.Join(w.ws, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SWITCHBOARD_") || k == "HOME" || k == "USERPROFILE" || k == "XDG_CONFIG_HOME" {
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, "HOME="+w.home, "USERPROFILE="+w.home,
		"SWITCHBOARD_MANAGED_DIR="+filepath.Join(dir, "etc", "switchboard"),
		"XDG_CONFIG_HOME="+filepath.Join(w.home, ".config"))
	w.sbHome = filepath.Join(w.home, ".switchboard")
	if sbHome != "" {
		w.sbHome = sbHome
		w.env = append(w.env, "SWITCHBOARD_HOME="+sbHome)
	}
	return w
}

// stdioGateway runs `serve --stdio` in w and connects a Go SDK client.
func stdioGateway(t *testing.T, ctx context.Context, w *gatewayWorld) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	return stdioGatewayAnswering(t, ctx, w, &clientEvents{decision: "once", changed: make(chan struct{}, 16)})
}

// stdioGatewayAnswering is stdioGateway with a client whose answers and
// events are ev's.
func stdioGatewayAnswering(t *testing.T, ctx context.Context, w *gatewayWorld, ev *clientEvents) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, ev.options())
	cmd := w.command(t, "--log-level", "info", "serve", "--stdio")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// run runs a switchboard command in w and fails the test if it fails.
func (w *gatewayWorld) run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := w.command(t, args...).CombinedOutput(); err != nil {
		t.Fatalf("switchboard %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// addEcho runs `switchboard mcp add --scope SCOPE NAME -- <echo server>`.
func (w *gatewayWorld) addEcho(t *testing.T, scope, name string) {
	t.Helper()
	cmd, args := testserver.Command("echo")
	w.run(t, append([]string{"mcp", "add", "--scope", scope, name, "--", cmd}, args...)...)
}

// echoServers is an mcpServers document of echo test servers.
func echoServers(names ...string) map[string]any {
	m := map[string]any{}
	for _, n := range names {
		cmd, args := testserver.Command("echo")
		m[n] = map[string]any{"command": cmd, "args": args}
	}
	return map[string]any{"mcpServers": m}
}

// servedServers lists the servers whose echo tool the gateway serves.
func servedServers(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for name := range listNames(t, ctx, cs) {
		if s, ok := strings.CutSuffix(name, "__echo"); ok {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// waitServed polls tools/list until exactly want is served; the bound is
// generous, as the machine may be busy.
func waitServed(t *testing.T, ctx context.Context, cs *mcp.ClientSession, stderr *syncBuffer, step string, want ...string) {
	t.Helper()
	sort.Strings(want)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := servedServers(t, ctx, cs)
		if strings.Join(got, ",") == strings.Join(want, ",") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the gateway serves %q, want %q; stderr:\n%s", step, got, want, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestGatewayWatchesFoldersCreatedLater: a gateway started before any
// configuration folder exists (a new user's first gateway) sees the
// servers added afterwards, wherever the loader reads them, and keeps
// seeing them when a folder is removed and made again.
func TestGatewayWatchesFoldersCreatedLater(t *testing.T) {
	t.Run("user folder made by mcp add", func(t *testing.T) {
		w := freshWorld(t, "")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cs, stderr := stdioGateway(t, ctx, w)
		waitServed(t, ctx, cs, stderr, "start")
		w.addEcho(t, "user", "d")
		waitServed(t, ctx, cs, stderr, "mcp add --scope user", "d")
		// The folder removed and made again.
		if err := os.RemoveAll(w.sbHome); err != nil {
			t.Fatal(err)
		}
		waitServed(t, ctx, cs, stderr, "~/.switchboard removed")
		w.addEcho(t, "user", "e")
		waitServed(t, ctx, cs, stderr, "~/.switchboard made again", "e")
	})

	t.Run("SWITCHBOARD_HOME made later", func(t *testing.T) {
		w := freshWorld(t, filepath.Join(t.TempDir(), "elsewhere", "sb"))
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cs, stderr := stdioGateway(t, ctx, w)
		waitServed(t, ctx, cs, stderr, "start")
		w.addEcho(t, "user", "d")
		waitServed(t, ctx, cs, stderr, "mcp add into a new SWITCHBOARD_HOME", "d")
	})

	t.Run("legacy file, then ~/.switchboard", func(t *testing.T) {
		w := freshWorld(t, "")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cs, stderr := stdioGateway(t, ctx, w)
		waitServed(t, ctx, cs, stderr, "start")
		writeJSON(t, filepath.Join(w.home, ".switchboard.json"), echoServers("legacy"))
		waitServed(t, ctx, cs, stderr, "~/.switchboard.json written", "legacy")
		// ~/.switchboard/mcp.json, made later, comes before the legacy file
		// (the folder may be there already: tool pins are kept in it).
		if err := os.MkdirAll(w.sbHome, 0o755); err != nil {
			t.Fatal(err)
		}
		writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), echoServers("d"))
		waitServed(t, ctx, cs, stderr, "~/.switchboard/mcp.json written", "d")
	})

	t.Run("workspace folder", func(t *testing.T) {
		w := freshWorld(t, "")
		w.addEcho(t, "user", "echo")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cs, stderr := stdioGateway(t, ctx, w)
		waitServed(t, ctx, cs, stderr, "start", "echo")
		sbDir := filepath.Join(w.ws, ".switchboard")
		if err := os.Mkdir(sbDir, 0o755); err != nil {
			t.Fatal(err)
		}
		w.run(t, "mcp", "disable", "echo")
		waitServed(t, ctx, cs, stderr, "mkdir .switchboard; mcp disable echo")
		w.run(t, "mcp", "enable", "echo")
		waitServed(t, ctx, cs, stderr, "mcp enable echo", "echo")
		// Removed, then made again by the command itself.
		if err := os.RemoveAll(sbDir); err != nil {
			t.Fatal(err)
		}
		w.run(t, "mcp", "disable", "echo")
		waitServed(t, ctx, cs, stderr, "rm -r .switchboard; mcp disable echo")
		w.run(t, "mcp", "enable", "echo")
		waitServed(t, ctx, cs, stderr, "mcp enable echo again", "echo")
	})

	t.Run("managed folder", func(t *testing.T) {
		w := freshWorld(t, "")
		w.addEcho(t, "user", "echo")
		w.addEcho(t, "user", "other")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cs, stderr := stdioGateway(t, ctx, w)
		waitServed(t, ctx, cs, stderr, "start", "echo", "other")
		managed := filepath.Join(w.dir, "etc", "switchboard")
		if err := os.MkdirAll(managed, 0o755); err != nil {
			t.Fatal(err)
		}
		writeJSON(t, filepath.Join(managed, "managed-mcp.json"), map[string]any{"deniedMcpServers": []string{"echo"}})
		waitServed(t, ctx, cs, stderr, "managed deny written into a new folder", "other")
	})
}

// TestGatewayBrokenFileKeepsLastGood: a file that stops parsing keeps its
// last good contents in effect (its servers keep their processes, its
// error is logged with file:line:col), while edits to the other files
// apply, a managed deny list among them; a broken managed file keeps its
// last deny list.
func TestGatewayBrokenFileKeepsLastGood(t *testing.T) {
	w := freshWorld(t, "")
	userFile := filepath.Join(w.sbHome, "mcp.json")
	if err := os.MkdirAll(w.sbHome, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, userFile, echoServers("a", "b", "c"))
	managed := filepath.Join(w.dir, "etc", "switchboard")
	if err := os.MkdirAll(managed, 0o755); err != nil {
		t.Fatal(err)
	}
	managedFile := filepath.Join(managed, "managed-mcp.json")
	writeJSON(t, managedFile, map[string]any{"deniedMcpServers": []string{}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cs, stderr := stdioGateway(t, ctx, w)
	waitServed(t, ctx, cs, stderr, "start", "a", "b", "c")
	pid := func(server string) string {
		t.Helper()
		txt, isErr := callText(t, ctx, cs, server+"__pid", nil)
		if isErr || pidRE.FindString(txt) == "" {
			t.Fatalf("%s's pid tool: %q", server, txt)
		}
		return pidRE.FindString(txt)
	}
	aPid := pid("a")

	// Mid-edit: the user file does not parse.
	if err := os.WriteFile(userFile, []byte("{\"mcpServers\": {\n  \"a\": "), 0o600); err != nil {
		t.Fatal(err)
	}
	// While it is broken, the other files' edits apply: the workspace
	// disables c, and the managed policy denies b. (The repository's
	// workspace file is written by hand: `mcp disable` writes the user
	// file, which is the broken one here.)
	if err := os.MkdirAll(filepath.Join(w.ws, ".switchboard"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(w.ws, ".switchboard", "workspace.json"), map[string]any{"disabledMcpServers": []string{"c"}})
	writeJSON(t, managedFile, map[string]any{"deniedMcpServers": []string{"b"}})
	waitServed(t, ctx, cs, stderr, "user file broken; c disabled, b denied", "a")
	if got := pid("a"); got != aPid {
		t.Errorf("a restarted while its file was broken: pid %s, then %s", aPid, got)
	}
	wantErr := userFile + ":2:"
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), wantErr) || !strings.Contains(stderr.String(), "last good contents") {
		if time.Now().After(deadline) {
			t.Fatalf("the log lacks %q and the last-good notice:\n%s", wantErr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A broken managed file keeps its last deny list; fixing the user file
	// applies it as written now.
	if err := os.WriteFile(managedFile, []byte(`{"deniedMcpServers": ["b",`), 0o600); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, userFile, echoServers("a", "b", "c", "d"))
	waitServed(t, ctx, cs, stderr, "user file fixed, managed file broken", "a", "d")
	if got := pid("a"); got != aPid {
		t.Errorf("a restarted when its file was fixed unchanged: pid %s, then %s", aPid, got)
	}

	// A file removed while broken is forgotten: its servers stop.
	if err := os.WriteFile(userFile, []byte(`{`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(userFile); err != nil {
		t.Fatal(err)
	}
	waitServed(t, ctx, cs, stderr, "user file removed")
}

// A gateway re-reads the settings that pre-approve project servers when
// they change: once the user withdraws enableAllProjectMcpServers, a
// definition the repository then changes is held, not started (review 16).
func TestGatewayFollowsPreApprovalEdits(t *testing.T) {
	w := freshWorld(t, "")
	if err := os.MkdirAll(w.sbHome, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(w.sbHome, "settings.json")
	writeJSON(t, settings, map[string]any{"enableAllProjectMcpServers": true})
	proj := filepath.Join(w.ws, ".mcp.json")
	writeJSON(t, proj, echoServers("repo"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cs, stderr := stdioGateway(t, ctx, w)
	waitServed(t, ctx, cs, stderr, "start, pre-approved", "repo")

	// The user withdraws the pre-approval, and a user server is added so
	// that we know when a reload after it has been applied.
	writeJSON(t, settings, map[string]any{})
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), echoServers("mine"))
	waitServed(t, ctx, cs, stderr, "pre-approval withdrawn", "mine", "repo")

	// The repository swaps the definition.
	swapped := echoServers("repo")
	def := swapped["mcpServers"].(map[string]any)["repo"].(map[string]any)
	def["env"] = map[string]any{"SWAPPED": "1"}
	applied := strings.Count(stderr.String(), `msg="configuration applied"`)
	writeJSON(t, proj, swapped)
	// The reload that applies the swap decides: a restarted server's new
	// state is logged before "configuration applied" is.
	for deadline := time.Now().Add(30 * time.Second); strings.Count(stderr.String(), `msg="configuration applied"`) == applied; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the swapped definition was never applied; stderr:\n%s", stderr)
		}
	}
	if st := lastStateLine(stderr.String(), "repo"); !strings.Contains(st, "state_to=needs-approval") {
		t.Fatalf("after the pre-approval was withdrawn, the repository's changed definition is not held: %s", st)
	}
	waitServed(t, ctx, cs, stderr, "the changed definition held", "mine")
}

// lastStateLine is the last "server state" line the gateway logged for
// server ("" if none).
func lastStateLine(log, server string) string {
	last := ""
	for line := range strings.Lines(log) {
		if strings.Contains(line, `msg="server state" server=`+server+" ") {
			last = strings.TrimSpace(line)
		}
	}
	return last
}

// Edits that truncate the file before they write it (`jq … > file`, and
// most programs) restart no server, however long the writer takes between
// the two (here 600 ms, three debounces: a busy machine); an empty file
// that stays empty applies once it settles (issue 29, point 17: 3 of 5 jq
// edits stopped and cold-started every server). Starts are counted by the
// servers' pids.
func TestGatewayHalfWrittenConfigRestartsNothing(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	w := freshWorld(t, "")
	if err := os.MkdirAll(w.sbHome, 0o755); err != nil {
		t.Fatal(err)
	}
	userFile := filepath.Join(w.sbHome, "mcp.json")
	pids := filepath.Join(t.TempDir(), "pids")
	doc := func(names ...string) map[string]any {
		m := map[string]any{}
		for _, n := range names {
			cmd, args := testserver.Command("echo", "-pid-file", pids)
			m[n] = map[string]any{"command": cmd, "args": args}
		}
		return map[string]any{"mcpServers": m}
	}
	writeJSON(t, userFile, doc("a", "b", "c"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cs, stderr := stdioGateway(t, ctx, w)
	waitServed(t, ctx, cs, stderr, "start", "a", "b", "c")
	for i := range 5 {
		// Each edit writes the same servers, laid out another way.
		b, err := json.Marshal(doc("a", "b", "c"))
		if i%2 == 1 {
			b, err = json.MarshalIndent(doc("a", "b", "c"), "", strings.Repeat(" ", i))
		}
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(userFile, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond) // the writer between its truncate and its write
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// A real edit after them: once it is served, the gateway has read
	// every edit before it.
	writeJSON(t, userFile, doc("a", "b", "c", "d"))
	waitServed(t, ctx, cs, stderr, "d added after five truncate-then-write edits", "a", "b", "c", "d")
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(b))); n != 4 {
		t.Errorf("%d server starts for a, b, c and d, want 4: the edits restarted servers\n%s", n, stderr)
	}
	// Emptied for good: the servers stop once the file has settled.
	if err := os.WriteFile(userFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitServed(t, ctx, cs, stderr, "user file emptied")
}

// A gateway asks nobody on a terminal, and its clients only find a held
// project server's tools missing: it says on stderr, once each time one
// becomes held, why and how to approve it, and so does a call of one of
// its tools. Approved while it runs, the
// server starts without another word; changed by the repository, it is
// held again, and said so.
func TestGatewaySaysWhatItHolds(t *testing.T) {
	w := freshWorld(t, "")
	if err := os.MkdirAll(w.sbHome, 0o755); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(w.ws, ".mcp.json")
	writeJSON(t, proj, echoServers("repo"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cs, stderr := stdioGateway(t, ctx, w)
	const held = "switchboard: project server repo needs your approval before it starts; its tools are held until you run `switchboard mcp approve repo` (or approve it in `switchboard ui`)"
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(stderr.String()); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s; stderr:\n%s", what, stderr)
			}
		}
	}
	waitFor("the held server was not named", func(s string) bool { return strings.Contains(s, held) })
	// The client's model is told too (Claude Code shows stderr to nobody):
	// how many, not which (a repository writes the names).
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "One project server of this workspace waits for the user's approval, so its tools are not listed") || strings.Contains(ins, "repo") {
		t.Errorf("instructions: %q", ins)
	}
	// A client that calls one of its tools by name is told why it is
	// unknown, and what the user can do.
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "repo__echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "project server repo has not been approved in this workspace, so it is not started; the user can approve it with `switchboard mcp approve repo`") {
		t.Errorf("a call of a held server's tool: %v", err)
	}

	w.run(t, "mcp", "approve", "repo", "--yes")
	waitServed(t, ctx, cs, stderr, "approved while the gateway runs", "repo")
	if n := strings.Count(stderr.String(), held); n != 1 {
		t.Errorf("the held server was named %d times, want once:\n%s", n, stderr)
	}

	swapped := echoServers("repo")
	swapped["mcpServers"].(map[string]any)["repo"].(map[string]any)["env"] = map[string]any{"SWAPPED": "1"}
	writeJSON(t, proj, swapped)
	waitFor("the changed server was not named", func(s string) bool {
		return strings.Contains(s, "switchboard: project server repo changed since you approved it; its tools are held until you run `switchboard mcp approve repo`")
	})
}
