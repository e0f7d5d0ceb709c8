package switchboard_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// TestReloadStartsWhatAProfileGains: under Options.Profile (serve
// --profile), a server the profile leaves out is held; once an edit of
// the settings adds it to the profile, the reload starts it and its
// tools are served, as a fresh start would; an edit that takes it out
// again stops it. Before, the server stayed "not in profile" until the
// process restarted, and one the profile lost ran on, hidden.
func TestReloadStartsWhatAProfileGains(t *testing.T) {
	dir, home := newHome(t)
	writeJSON(t, filepath.Join(home, "mcp.json"), servers("one", "two"))
	profile := func(names ...string) {
		writeJSON(t, config.UserSettingsPath(home), map[string]any{
			"permissions": map[string]any{"allow": []string{"mcp__one", "mcp__two"}},
			"profiles":    map[string]any{"review": map[string]any{"servers": names}},
		})
	}
	profile("one")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		Profile: "review", LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	call := func() error {
		_, err := sb.Call(ctx, "mcp__two__echo", map[string]any{"text": "hi"})
		return err
	}
	if err := call(); err == nil {
		t.Fatal("a server the profile leaves out answered")
	}

	profile("one", "two")
	res, err := sb.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Regated, "two") {
		t.Errorf("Regated = %v, want two", res.Regated)
	}
	if err := call(); err != nil {
		t.Fatalf("the server the profile gained: %v", err)
	}
	var two host.ServerStatus
	for _, st := range sb.Status() {
		if st.Name == "two" {
			two = st
		}
	}
	if two.State != host.StateConnected {
		t.Errorf("two is %s (%s), want connected", two.State, two.Reason)
	}

	profile("one")
	if _, err := sb.Reload(); err != nil {
		t.Fatal(err)
	}
	if err := call(); err == nil {
		t.Error("a server the profile lost still answers")
	}
	// And it stops, as it would not have started: nothing runs that the
	// profile leaves out.
	for _, st := range sb.Status() {
		if st.Name == "two" && st.State != host.StateDisabled {
			t.Errorf("two is %s (%s) once the profile left it out, want disabled", st.State, st.Reason)
		}
	}
}
