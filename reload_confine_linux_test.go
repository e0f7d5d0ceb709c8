package switchboard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestReloadAppliesSandboxDefaults: an administrator who turns the
// sandbox on for user servers in the managed settings while a
// Switchboard runs gets it at the reload, as at a fresh start: the
// running user server restarts confined (in a mount namespace of its
// own) and one added later starts confined; turning it off again
// restarts it unconfined. Before, the defaults read at Open held until
// the process ended.
func TestReloadAppliesSandboxDefaults(t *testing.T) {
	dir, home := newHome(t)
	managed := filepath.Join(dir, "managed")
	if err := os.MkdirAll(managed, 0o700); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one"))
	writeJSON(t, config.UserSettingsPath(home), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__one", "mcp__two"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb := openAt(ctx, t, dir, home)
	defer sb.Close()

	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Skip("no mount namespaces to compare:", err)
	}
	// confined reports whether server's process is not one of ours in
	// this mount namespace: a sandboxed server has namespaces of its own,
	// its process id among them.
	confined := func(server string) bool {
		t.Helper()
		res, err := sb.Call(ctx, "mcp__"+server+"__pid", nil)
		if err != nil {
			t.Fatalf("%s: pid: %v", server, err)
		}
		var pid int
		if _, err := fmt.Sscan(res.Raw.Content[0].(*mcp.TextContent).Text, &pid); err != nil {
			t.Fatalf("%s: pid: %v", server, err)
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
		return !strings.Contains(string(cmdline), testserver.Arg) || ns != self
	}
	if confined("one") {
		t.Fatal("a user server is confined before any setting asks for it")
	}

	writeJSON(t, config.ManagedSettingsPath(managed), map[string]any{"sandbox": map[string]any{"user": true}})
	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one", "two"))
	res, err := sb.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Restarted, "one") {
		t.Errorf("reload with a new sandbox default restarted %v, want one among them", res.Restarted)
	}
	for _, name := range []string{"one", "two"} {
		if !confined(name) {
			t.Errorf("%s runs unconfined after the managed settings put user servers in the sandbox", name)
		}
	}

	writeJSON(t, config.ManagedSettingsPath(managed), map[string]any{})
	if res, err = sb.Reload(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Restarted, "one") || !slices.Contains(res.Restarted, "two") {
		t.Errorf("reload without the sandbox default restarted %v, want one and two", res.Restarted)
	}
	if confined("one") {
		t.Error("one stays confined after the managed sandbox default is gone")
	}
	// An unchanged default restarts nothing.
	if res, err = sb.Reload(); err != nil || res.Changed() {
		t.Errorf("a reload with nothing changed: %+v, %v", res, err)
	}
}

// TestReloadKeepsTheEmbeddersSandbox: an embedder that puts user servers
// in the sandbox through Options.Host keeps them there across a reload of
// settings that say nothing of it — the reload does not set the settings'
// (absent) sandbox defaults over the embedder's and restart them
// unconfined.
func TestReloadKeepsTheEmbeddersSandbox(t *testing.T) {
	dir, home := newHome(t)
	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one"))
	writeJSON(t, config.UserSettingsPath(home), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__one"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(string) (string, bool) { return "", false },
		Host: func(o *host.Options) {
			o.SandboxDefaults = config.SandboxDefaults{config.ScopeUser: &config.Sandbox{}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Skip("no mount namespaces to compare:", err)
	}
	confined := func() bool {
		t.Helper()
		res, err := sb.Call(ctx, "mcp__one__pid", nil)
		if err != nil {
			t.Fatalf("pid: %v", err)
		}
		var pid int
		if _, err := fmt.Sscan(res.Raw.Content[0].(*mcp.TextContent).Text, &pid); err != nil {
			t.Fatalf("pid: %v", err)
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
		return !strings.Contains(string(cmdline), testserver.Arg) || ns != self
	}
	if !confined() {
		t.Fatal("the embedder's sandbox default did not confine the user server at Open")
	}
	writeJSON(t, config.UserSettingsPath(home), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__one", "mcp__two"}}})
	res, err := sb.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(res.Restarted, "one") {
		t.Errorf("a settings edit that says nothing of the sandbox restarted one: %+v", res)
	}
	if !confined() {
		t.Error("one runs unconfined after a reload: the settings' absent sandbox replaced the embedder's")
	}
}
