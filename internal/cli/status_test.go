package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// statusWorld configures one server in each settled state: connected
// (the demo server, whose tools are stable), error with a stderr line (exit-init), disabled, needs-approval
// (project scope) and missing (enabled by the workspace, defined nowhere).
// Connecting, which depends on time, is TestStatusProgress's.
func statusWorld(t *testing.T) *rtWorld {
	w := newRTWorld(t)
	off := w.server("echo")
	off["enabled"] = false
	w.userServers(map[string]any{
		"demo":   w.server("demo"),
		"broken": w.server("exit-init"),
		"off":    off,
	})
	w.writeJSON(filepath.Join(w.proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"repo": w.server("echo")}})
	w.writeJSON(filepath.Join(w.proj, ".switchboard", "workspace.json"), map[string]any{"enabledMcpServers": []string{"ghost"}})
	return w
}

func runStatus(t *testing.T, w *rtWorld, tty, asJSON bool) (stdout, stderr string, err error) {
	t.Helper()
	f, _, out, errOut := w.factory(tty)
	f.Global.Wait = 20 * time.Second // everything settles long before
	opts := &StatusOptions{runtimeOptions: rtOptions(f), JSON: asJSON}
	err = statusRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

func TestStatusGolden(t *testing.T) {
	w := statusWorld(t)
	for _, tc := range []struct {
		name        string
		tty, asJSON bool
	}{
		{"status_tty", true, false},
		{"status_piped", false, false},
		{"status_json", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runStatus(t, w, tc.tty, tc.asJSON)
			if err != nil {
				t.Fatalf("status: %v (stderr %q)", err, stderr)
			}
			// One diagnostic (ghost is enabled but defined nowhere), and no
			// progress: stderr is not a terminal.
			if !regexpMatch(`^warning: \S+workspace.json:3:5: server "ghost": [^\n]*\n$`, stderr) {
				t.Errorf("stderr = %q, want the one warning about ghost", stderr)
			}
			golden(t, tc.name, w.mask(out))
		})
	}
}

// TestStatusJSONContract checks the keys scripts rely on and that states
// are spelled exactly as host.State spells them.
func TestStatusJSONContract(t *testing.T) {
	w := statusWorld(t)
	out, _, err := runStatus(t, w, false, true)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Servers []map[string]any `json:"servers"`
		Files   map[string]any   `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	states := map[string]string{}
	for _, s := range got.Servers {
		for _, k := range []string{"name", "type", "scope", "state", "error", "tools", "tokens", "command"} {
			if _, ok := s[k]; !ok {
				t.Errorf("server %v has no key %q", s["name"], k)
			}
		}
		states[s["name"].(string)] = s["state"].(string)
	}
	want := map[string]string{
		"broken": "error", "demo": "connected", "ghost": "missing", "off": "disabled",
		"repo": "needs-approval",
	}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	for _, k := range []string{"user", "project", "local", "managed", "workspace"} {
		if _, ok := got.Files[k]; !ok {
			t.Errorf("files has no key %q", k)
		}
	}
}

func TestStatusExitCodes(t *testing.T) {
	t.Run("servers in error still exit 0", func(t *testing.T) {
		w := newRTWorld(t)
		w.userServers(map[string]any{"broken": w.server("exit-init")})
		out, stderr, code := w.run(false, "status")
		if code != 0 {
			t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(out, "broken\tstdio\tuser\terror\t") {
			t.Errorf("stdout = %q", out)
		}
	})
	t.Run("nothing configured exits 0 and says what to do", func(t *testing.T) {
		w := newRTWorld(t)
		out, stderr, code := w.run(false, "status")
		if code != 0 || out != "" {
			t.Fatalf("exit %d, stdout %q; want 0 and nothing", code, out)
		}
		if !strings.Contains(stderr, "No MCP servers are configured") || !strings.Contains(stderr, "switchboard demo") {
			t.Errorf("stderr = %q", stderr)
		}
	})
	t.Run("a config error that loads nothing exits 2", func(t *testing.T) {
		w := newRTWorld(t)
		if err := os.MkdirAll(w.sb, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.sb, "mcp.json"), []byte("{\n  \"mcpServers\": {,\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := w.run(false, "status")
		if code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(stderr, "mcp.json:2:") {
			t.Errorf("stderr does not name the position: %q", stderr)
		}
	})
	// As mcp list (issue 29): the valid servers are shown, the error is
	// reported, and the exit code says the configuration has one.
	t.Run("a config error beside a valid server is shown with it and exits 2", func(t *testing.T) {
		w := newRTWorld(t)
		w.userServers(map[string]any{"echo": w.server("echo"), "bad": map[string]any{"type": "stdio"}})
		out, stderr, code := w.run(false, "status")
		if code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(out, "echo\tstdio\tuser\tconnected\t") {
			t.Errorf("the valid server is hidden: %q", out)
		}
		if n := strings.Count(stderr, `server "bad"`); n != 1 || !strings.HasPrefix(stderr, "error: ") {
			t.Errorf("want one diagnostic line naming bad, got %q", stderr)
		}
	})
}

// TestStatusProgress checks the live line on a terminal's stderr: drawn
// in place while a server connects, cleared at the end.
func TestStatusProgress(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"slow": w.server("slow-start", "-delay", "30s"), "echo": w.server("echo")})
	f, _, out, errOut := w.factory(true)
	f.Global.Wait = 600 * time.Millisecond
	opts := &StatusOptions{runtimeOptions: rtOptions(f)}
	opts.ErrTTY = true
	if err := statusRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	stderr := errOut.String()
	if !strings.Contains(stderr, "\r\x1b[Kconnecting 1/2: slow (") {
		t.Errorf("no progress line on stderr: %q", stderr)
	}
	if !strings.HasSuffix(stderr, "\r\x1b[K") {
		t.Errorf("the progress line is not cleared at the end: %q", stderr)
	}
	if !regexpMatch(`slow +stdio +user +connecting +- +- +still connecting after \d`, out.String()) {
		t.Errorf("the connecting server does not show its elapsed time:\n%s", out)
	}
}

// TestStatusShowsSecretNamedTools: a server whose tools' names hold a
// secret value it was given (hostile-peer -leak) has them left out, and
// status says how many, in its reason (TTY and piped) and as
// "secretNamed" in --json, as it says what pinning holds.
func TestStatusShowsSecretNamedTools(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	w := newRTWorld(t)
	peer := w.server("hostile-peer", "-leak", "PEER_API_TOKEN")
	peer["env"] = map[string]string{"PEER_API_TOKEN": token}
	w.userServers(map[string]any{"peer": peer})
	for _, tty := range []bool{true, false} {
		out, stderr, err := runStatus(t, w, tty, false)
		if err != nil {
			t.Fatalf("status: %v (stderr %q)", err, stderr)
		}
		if !strings.Contains(out, "2 tools not served: a name of theirs holds a secret value") {
			t.Errorf("status (tty %v) does not say 2 tools are not served:\n%s", tty, out)
		}
		if strings.Contains(out+stderr, token) {
			t.Errorf("status shows the secret:\n%s%s", out, stderr)
		}
	}
	out, _, err := runStatus(t, w, false, true)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Servers []struct {
			Name        string `json:"name"`
			SecretNamed int    `json:"secretNamed"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Servers) != 1 || got.Servers[0].SecretNamed != 2 {
		t.Errorf("status --json: %v, servers %+v; want secretNamed 2 for peer\n%s", err, got.Servers, out)
	}
}

// TestEmptyListsOneRule holds the one rule for a list with nothing in it
// (README, The CLI): no table, not even its header, on a terminal or
// piped — piped, stdout is empty — and one line on stderr says why.
func TestEmptyListsOneRule(t *testing.T) {
	w := newRTWorld(t)
	for _, args := range [][]string{
		{"status"}, {"mcp", "list"}, {"tools"}, {"prompts"}, {"resources"}, {"permissions", "list"},
	} {
		for _, tty := range []bool{false, true} {
			out, stderr, code := w.run(tty, args...)
			name := fmt.Sprintf("%s (tty %v)", strings.Join(args, " "), tty)
			if code != 0 {
				t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
			}
			if !tty && out != "" {
				t.Errorf("%s: stdout %q, want nothing", name, out)
			}
			// A header is the first line of a table: NAME, PROMPT,
			// RESOURCE or LIST first, in capitals (TTY and piped alike).
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) > 1 && slices.Contains([]string{"NAME", "PROMPT", "RESOURCE", "LIST"}, f[0]) {
					t.Errorf("%s: stdout holds a table header:\n%s", name, out)
				}
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "No ") {
				t.Errorf("%s: stderr %q, want one line saying there is nothing", name, stderr)
			}
		}
	}
}
