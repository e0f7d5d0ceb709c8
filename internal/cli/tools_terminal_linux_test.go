package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// On a terminal, `tools` (and doctor) with the default --wait goes on waiting for a
// server whose package runner is still at work (a first run of npx takes
// longer than 5 s: it downloads the package), saying so, and lists its
// tools: the newcomer is not sent to run it again with --wait 120s. The
// runner is the real npx, from a cold cache, against a real registry
// (verdaccio on loopback); the package takes 6.5 s to start, as a first
// download here does (SWITCHBOARD_ECHO_START_DELAY_MS).
func TestToolsWaitsForARunnerOnTerminal(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	reg := npmtest.StartRegistry(t)
	w := newGatewayWorld(t)
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"fetched": map[string]any{"command": "npx", "args": []string{"-y", "switchboard-echo-server"}, "env": map[string]string{
			"npm_config_registry": reg.URL, "npm_config_cache": filepath.Join(w.dir, "npm-cache"),
			"SWITCHBOARD_ECHO_START_DELAY_MS": "6500",
		}},
	}})
	w.env = append(w.env, "TERM=dumb")
	got, err := onTerminal(t, w.command(t, "tools"), "\x00never asked", "")
	if err != nil {
		t.Fatalf("tools: %v\n%s", err, got)
	}
	// The seconds are measured: 5.0 on a quiet machine, more on a
	// loaded one.
	if !regexp.MustCompile(`still connecting after \d+\.\ds: fetched \(npx\), most likely downloading the server on a first run; waiting for it \(Ctrl-C to stop\)`).MatchString(got) {
		t.Errorf("tools did not say why it goes on waiting:\n%s", got)
	}
	if !strings.Contains(got, "mcp__fetched__echo") || strings.Contains(got, "No tools yet") {
		st, _ := w.command(t, "status").CombinedOutput()
		t.Errorf("tools did not list the runner's server once it was up:\n%s\nstatus:\n%s", got, st)
	}
	// Not on a terminal (a script): the default wait, and the advice.
	out, _ := w.command(t, "tools").CombinedOutput()
	if strings.Contains(string(out), "waiting for it") {
		t.Errorf("tools waited on for a runner without a terminal:\n%s", out)
	}

	// doctor's verdict on such a server would be a false fail: on a
	// terminal it waits as tools does; in a script its fix says why.
	got, err = onTerminal(t, w.command(t, "doctor"), "\x00never asked", "")
	if err != nil || !strings.Contains(got, "waiting for it (Ctrl-C to stop)") || !strings.Contains(got, "pass  server fetched  connected: 1 tools") {
		t.Errorf("doctor on a terminal (%v):\n%s", err, got)
	}
	out, _ = w.command(t, "doctor").CombinedOutput()
	if !strings.Contains(string(out), "npx may still be downloading it (a first run): wait longer with --wait 120s") {
		t.Errorf("doctor in a script:\n%s", out)
	}
	// status shows a slow server quickly, and says why it may be slow.
	out, _ = w.command(t, "status").CombinedOutput()
	if !regexp.MustCompile(`still connecting after \d+\.\ds \(npx may be downloading it: a first run takes longer; --wait 120s waits for it\)`).Match(out) {
		t.Errorf("status in a script:\n%s", out)
	}
}
