package watch

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
)

// echoServers is a configuration document of stdio servers named names
// (nothing is started: the tests here only load configurations).
func echoServers(names ...string) map[string]any {
	m := map[string]any{}
	for _, n := range names {
		m[n] = map[string]any{"command": "echo"}
	}
	return map[string]any{"mcpServers": m}
}

// writeJSON writes v to path then renames it into place, as editors do:
// the watcher must see it either way.
func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestWatchConfigEveryLocation drives the watcher with the loader, as
// serve does, over every place a configuration file can be: each folder
// is made only after the watch has started.
func TestWatchConfigEveryLocation(t *testing.T) {
	dir := t.TempDir()
	homeDir := filepath.Join(dir, "home")
	root := filepath.Join(dir, "ws")
	for _, d := range []string{homeDir, filepath.Join(root, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sbHome := filepath.Join(homeDir, ".switchboard")
	managedDir := filepath.Join(dir, "etc", "switchboard")
	flagFile := filepath.Join(dir, "flags", "more", "flag.json")
	lo := &config.LoadOptions{
		Home: sbHome, HomeDir: homeDir, Cwd: root, ManagedDir: managedDir,
		MCPConfigs: []string{flagFile}, LookupEnv: func(string) (string, bool) { return "", false },
		LastGood: &config.LastGood{},
	}
	load := func() *config.Resolved {
		cfg, err := config.Load(lo)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cur := load()
	loaded := make(chan *config.Resolved, 100)
	stop, err := Start(func() []File { return Files(cur, sbHome, homeDir) }, slog.New(slog.DiscardHandler), func(bool) bool {
		cur = load()
		loaded <- cur
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	// waitFor waits for a reload whose configuration passes ok.
	waitFor := func(step string, ok func(*config.Resolved) bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case cfg := <-loaded:
				if ok(cfg) {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no reload saw it", step)
			}
		}
	}
	has := func(name string, scope config.Scope, avail config.Availability) func(*config.Resolved) bool {
		return func(cfg *config.Resolved) bool {
			s := cfg.Server(name)
			return s != nil && s.Scope == scope && s.Availability == avail
		}
	}
	write := func(path string, v any) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeJSON(t, path, v)
	}

	write(filepath.Join(homeDir, ".switchboard.json"), echoServers("legacy"))
	waitFor("legacy ~/.switchboard.json", has("legacy", config.ScopeUser, config.Available))
	write(filepath.Join(sbHome, "mcp.json"), echoServers("user"))
	waitFor("new ~/.switchboard/mcp.json", func(cfg *config.Resolved) bool {
		return has("user", config.ScopeUser, config.Available)(cfg) && cfg.Server("legacy") == nil
	})
	write(filepath.Join(root, "mcp.json"), echoServers("proj"))
	waitFor("<root>/mcp.json", has("proj", config.ScopeProject, config.Available))
	write(filepath.Join(root, ".switchboard", "workspace.json"), map[string]any{"disabledMcpServers": []string{"user"}})
	waitFor("new <root>/.switchboard/workspace.json", has("user", config.ScopeUser, config.Disabled))
	write(flagFile, echoServers("flag"))
	waitFor("--mcp-config file in a new folder", has("flag", config.ScopeFlag, config.Available))
	write(filepath.Join(managedDir, "managed-mcp.json"), map[string]any{"deniedMcpServers": []string{"proj"}})
	waitFor("managed file in a new folder", has("proj", config.ScopeProject, config.Disabled))

	// A folder removed and made again is watched again.
	if err := os.RemoveAll(filepath.Join(root, ".switchboard")); err != nil {
		t.Fatal(err)
	}
	waitFor(".switchboard removed", has("user", config.ScopeUser, config.Available))
	write(filepath.Join(root, ".switchboard", "workspace.json"), map[string]any{"disabledMcpServers": []string{"flag"}})
	waitFor(".switchboard made again", has("flag", config.ScopeFlag, config.Disabled))
}

// A folder written to again and again (a server's log beside a
// configuration file) does not put a reload off for ever: a configuration
// edit applies within a bound (review 16).
func TestWatchReloadsDespiteBusyFolder(t *testing.T) {
	cfgFile, reloads := watchOneFile(t)
	dir := filepath.Dir(cfgFile)
	base := reloads.Load()

	// A server's log in the same folder, written every 50ms.
	done := make(chan struct{})
	go func() {
		log := filepath.Join(dir, "server.log")
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err == nil {
				f.WriteString("line\n")
				f.Close()
			}
		}
	}()
	defer close(done)
	time.Sleep(100 * time.Millisecond)
	// The user edits the configuration.
	if err := os.WriteFile(cfgFile, []byte(`{"mcpServers": {"x": {"command": "x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Wait for the reload, not a fixed time: with the debounce reset by
	// every unrelated write, none ever comes.
	for deadline := time.Now().Add(10 * time.Second); reloads.Load() == base; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no reload 10s after the configuration changed: the debounce is reset by every unrelated write in the folder")
		}
	}
}

// A configuration file whose mode changes is read again: one that was made
// unreadable and then readable again loads (review 16: chmod events were
// all ignored).
func TestWatchReloadsOnAModeChange(t *testing.T) {
	cfgFile, reloads := watchOneFile(t)
	base := reloads.Load()
	if err := os.Chmod(cfgFile, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); reloads.Load() == base; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no reload after the file's mode changed")
		}
	}
}

// watchOneFile watches one configuration file in a folder of its own (every
// change there counts), counting reloads, and returns once the start-up
// reload has run.
func watchOneFile(t *testing.T) (cfgFile string, reloads *atomic.Int32) {
	t.Helper()
	cfgFile = filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(cfgFile, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	reloads = new(atomic.Int32)
	stop, err := Start(func() []File { return []File{{Path: cfgFile}} },
		slog.New(slog.NewTextHandler(io.Discard, nil)), func(bool) bool { reloads.Add(1); return false })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); reloads.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no start-up reload")
		}
	}
	return cfgFile, reloads
}

// A reload that leaves files unsettled (one read empty, maybe half
// written) is followed by one with settled true once nothing has changed
// for Settle; a change before that gets the usual debounced reload, not a
// settled one (issue 29, point 17).
func TestUnsettledIsReadAgainOnceSettled(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(cfgFile, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var unsettled atomic.Bool
	calls := make(chan bool, 100)
	stop, err := Start(func() []File { return []File{{Path: cfgFile}} }, slog.New(slog.DiscardHandler), func(settled bool) bool {
		calls <- settled
		return unsettled.Load() && !settled
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	next := func(step string) bool {
		t.Helper()
		select {
		case settled := <-calls:
			return settled
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no reload", step)
		}
		return false
	}
	if next("start") {
		t.Fatal("the start-up reload was settled")
	}
	unsettled.Store(true)
	write := func(data string) {
		t.Helper()
		if err := os.WriteFile(cfgFile, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	if next("truncated") {
		t.Fatal("the reload after the change was settled")
	}
	write("\n") // changed again before it settled
	if next("truncated again") {
		t.Fatal("a change before the file settled gave a settled reload")
	}
	if !next("left as it is") {
		t.Fatal("the reload after the file settled was not settled")
	}
	select {
	case settled := <-calls:
		t.Errorf("another reload (settled %v) with nothing changed", settled)
	case <-time.After(Settle + time.Second):
	}
}

// A configuration file that is a link (a dotfiles manager's: stow,
// chezmoi, home-manager) is edited at its target, in a folder of its
// own: the watcher sees each save there, written in place or renamed
// over as editors do, follows the link when it is pointed elsewhere, and
// sees edits at the new target. Before, only the link's folder was
// watched and no edit of the target reloaded.
func TestWatchFollowsALinkedConfigFile(t *testing.T) {
	dir := t.TempDir()
	homeDir := filepath.Join(dir, "home")
	sbHome := filepath.Join(homeDir, ".switchboard")
	dots := filepath.Join(dir, "dotfiles", "switchboard")
	for _, d := range []string{sbHome, dots} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(dots, "mcp.json")
	writeJSON(t, target, echoServers("first"))
	if err := os.Symlink(target, filepath.Join(sbHome, "mcp.json")); err != nil {
		t.Fatal(err)
	}
	lo := &config.LoadOptions{Home: sbHome, HomeDir: homeDir, Cwd: homeDir,
		LookupEnv: func(string) (string, bool) { return "", false }, LastGood: &config.LastGood{}}
	load := func() *config.Resolved {
		cfg, err := config.Load(lo)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cur := load()
	if cur.Server("first") == nil {
		t.Fatal("the linked file was not loaded")
	}
	loaded := make(chan *config.Resolved, 100)
	stop, err := Start(func() []File { return Files(cur, sbHome, homeDir) }, slog.New(slog.DiscardHandler), func(bool) bool {
		cur = load()
		loaded <- cur
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	waitFor := func(step, name string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case cfg := <-loaded:
				if cfg.Server(name) != nil {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no reload saw server %s", step, name)
			}
		}
	}
	inPlace := func(path string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	waitFor("the start-up reload", "first")
	inPlace(target, echoServers("second"))
	waitFor("target written in place", "second")
	writeJSON(t, target, echoServers("third"))
	waitFor("target renamed over", "third")

	other := filepath.Join(dir, "elsewhere", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, other, echoServers("fourth"))
	tmpLink := filepath.Join(sbHome, "mcp.json.new")
	if err := os.Symlink(other, tmpLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmpLink, filepath.Join(sbHome, "mcp.json")); err != nil {
		t.Fatal(err)
	}
	waitFor("link pointed elsewhere", "fourth")
	inPlace(other, echoServers("fifth"))
	waitFor("new target written in place", "fifth")
}

// The Switchboard folder itself may be a link (~/.switchboard to a
// dotfiles checkout): pointing it at another folder reloads from there,
// and edits in the new folder reload; the old folder's no longer count.
// Before, the watch stayed on the folder first linked: the switch went
// unseen, and so did every edit after it.
func TestWatchFollowsALinkedFolder(t *testing.T) {
	dir := t.TempDir()
	homeDir := filepath.Join(dir, "home")
	sbHome := filepath.Join(homeDir, ".switchboard")
	one, two := filepath.Join(dir, "dots", "one"), filepath.Join(dir, "dots", "two")
	for _, d := range []string{homeDir, one, two} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON(t, filepath.Join(one, "mcp.json"), echoServers("first"))
	writeJSON(t, filepath.Join(two, "mcp.json"), echoServers("second"))
	if err := os.Symlink(one, sbHome); err != nil {
		t.Fatal(err)
	}
	lo := &config.LoadOptions{Home: sbHome, HomeDir: homeDir, Cwd: homeDir,
		LookupEnv: func(string) (string, bool) { return "", false }, LastGood: &config.LastGood{}}
	load := func() *config.Resolved {
		cfg, err := config.Load(lo)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cur := load()
	loaded := make(chan *config.Resolved, 100)
	stop, err := Start(func() []File { return Files(cur, sbHome, homeDir) }, slog.New(slog.DiscardHandler), func(bool) bool {
		cur = load()
		loaded <- cur
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	waitFor := func(step, name string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case cfg := <-loaded:
				if cfg.Server(name) != nil {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no reload saw server %s", step, name)
			}
		}
	}
	waitFor("the start-up reload", "first")
	tmp := filepath.Join(homeDir, ".switchboard.new")
	if err := os.Symlink(two, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, sbHome); err != nil {
		t.Fatal(err)
	}
	waitFor("the folder link pointed elsewhere", "second")
	if err := os.WriteFile(filepath.Join(two, "mcp.json"), []byte(`{"mcpServers": {"third": {"command": "echo"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("an edit in the folder now linked", "third")
}

// A configuration file linked to a checkout that is not there yet (or
// is removed and cloned again) loads as soon as the checkout appears:
// the missing target is watched for as a missing file is. Before, a
// link leading nowhere had only its own folder watched.
func TestWatchFollowsALinkToNothingYet(t *testing.T) {
	dir := t.TempDir()
	homeDir := filepath.Join(dir, "home")
	sbHome := filepath.Join(homeDir, ".switchboard")
	if err := os.MkdirAll(sbHome, 0o755); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(homeDir, "dotfiles")
	target := filepath.Join(checkout, "switchboard", "mcp.json")
	if err := os.Symlink(target, filepath.Join(sbHome, "mcp.json")); err != nil {
		t.Fatal(err)
	}
	lo := &config.LoadOptions{Home: sbHome, HomeDir: homeDir, Cwd: homeDir,
		LookupEnv: func(string) (string, bool) { return "", false }, LastGood: &config.LastGood{}}
	load := func() *config.Resolved {
		cfg, err := config.Load(lo)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cur := load()
	loaded := make(chan *config.Resolved, 100)
	stop, err := Start(func() []File { return Files(cur, sbHome, homeDir) }, slog.New(slog.DiscardHandler), func(bool) bool {
		cur = load()
		loaded <- cur
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	waitFor := func(step string, ok func(*config.Resolved) bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case cfg := <-loaded:
				if ok(cfg) {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no reload saw it", step)
			}
		}
	}
	has := func(name string) func(*config.Resolved) bool {
		return func(cfg *config.Resolved) bool { return cfg.Server(name) != nil }
	}
	waitFor("the start-up reload", func(*config.Resolved) bool { return true })
	clone := func(name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		writeJSON(t, target, echoServers(name))
	}
	clone("first")
	waitFor("the checkout made", has("first"))
	if err := os.RemoveAll(checkout); err != nil {
		t.Fatal(err)
	}
	waitFor("the checkout removed", func(cfg *config.Resolved) bool { return cfg.Server("first") == nil })
	clone("second")
	waitFor("the checkout made again", has("second"))
}
