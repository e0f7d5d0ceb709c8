package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// rtWorld is a private world for the runtime commands: a temp HOME with a
// Switchboard directory, a workspace, and servers that are real child
// processes of this test binary (testserver via the fork-exec TestMain).
type rtWorld struct {
	t    testing.TB
	work string // the temp dir everything lives in
	home string // HOME
	sb   string // SWITCHBOARD_HOME
	proj string // the workspace (has .git)
	exe  string // this test binary, which the server commands run
}

func newRTWorld(t testing.TB) *rtWorld {
	t.Helper()
	work := t.TempDir()
	// Resolve symlinks (macOS /var → /private/var) so masking finds paths.
	if r, err := filepath.EvalSymlinks(work); err == nil {
		work = r
	}
	w := &rtWorld{t: t, work: work, home: filepath.Join(work, "home"), proj: filepath.Join(work, "proj")}
	w.sb = filepath.Join(w.home, ".switchboard")
	for _, d := range []string{w.home, filepath.Join(w.proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.exe, _ = testserver.Command("echo")
	return w
}

// server returns a stdio server definition running test server name.
func (w *rtWorld) server(name string, args ...string) map[string]any {
	cmd, argv := testserver.Command(name, args...)
	return map[string]any{"command": cmd, "args": argv}
}

func (w *rtWorld) writeJSON(path string, v any) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// userServers writes the user file with these servers.
func (w *rtWorld) userServers(servers map[string]any) {
	w.writeJSON(filepath.Join(w.sb, "mcp.json"), map[string]any{"mcpServers": servers})
}

// factory returns a Factory on this world with buffered streams.
func (w *rtWorld) factory(tty bool) (f *Factory, in, out, errOut *bytes.Buffer) {
	ios, in, out, errOut := Test()
	ios.IsTTY = tty
	ios.Width = 100
	env := map[string]string{
		"HOME":                    w.home,
		"SWITCHBOARD_HOME":        w.sb,
		"SWITCHBOARD_MANAGED_DIR": filepath.Join(w.work, "managed"),
		// Gemini's own override of /etc/gemini-cli/settings.json, which
		// mcp import --from gemini reads: never this machine's.
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH": filepath.Join(w.work, "gemini-system", "settings.json"),
	}
	f = &Factory{
		IO:      ios,
		Getenv:  func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		HomeDir: w.home,
		Cwd:     w.proj,
		Now:     time.Now,
		Global:  &GlobalOptions{Wait: DefaultWait, LogLevel: "warn"},
	}
	return f, in, out, errOut
}

// run runs a command line and returns its output and exit code.
func (w *rtWorld) run(tty bool, args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	f, _, out, errOut := w.factory(tty)
	code = Run(context.Background(), f, args)
	return out.String(), errOut.String(), code
}

// rtOptions returns the runtime options of f as a command would fill them
// after parsing flags, with a short close grace so that servers which do
// not read stdin (slow-start) do not hold the test up.
func rtOptions(f *Factory) runtimeOptions {
	o := newRuntimeOptions(f)
	o.HostOptions = func(h *host.Options) { h.CloseGrace = 200 * time.Millisecond }
	return o
}

var (
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b`)
	sinceRE    = regexp.MustCompile(`"since": "[^"]*"`)
	elapsedRE  = regexp.MustCompile(`"elapsed_ms": \d+`)
	// When a server in error is tried again depends on when the report
	// was taken: in a moment, or now.
	nextTryRE     = regexp.MustCompile(`"nextTry": "[^"]*"`)
	nextTryTextRE = regexp.MustCompile(`; (next try in [^\s"]+|trying again now)`)
)

// mask replaces what changes from run to run: the test binary, the temp
// dir and durations.
func (w *rtWorld) mask(s string) string {
	s = strings.ReplaceAll(s, w.exe, "$EXE")
	s = strings.ReplaceAll(s, w.work, "$WORK")
	s = durationRE.ReplaceAllString(s, "<dur>")
	s = sinceRE.ReplaceAllString(s, `"since": "<time>"`)
	s = elapsedRE.ReplaceAllString(s, `"elapsed_ms": <ms>`)
	s = nextTryRE.ReplaceAllString(s, `"nextTry": "<time>"`)
	s = nextTryTextRE.ReplaceAllString(s, "; next try in <dur>")
	return s
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestLogs: the host logs to <home>/logs when the Switchboard directory
// exists, and never to stdout.
func TestLogs(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"echo": w.server("echo")})
	out, _, code := w.run(false, "status", "--log-level", "debug")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(out, "level=") {
		t.Errorf("logs on stdout:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(w.sb, "logs", "switchboard.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"state_to":"connected"`) {
		t.Errorf("log lacks the state change:\n%s", b)
	}
}

// status tries a server that exits at once only once, not a second time
// pinned to an older protocol revision (which doubled its time to the
// error), while one that dies on the server/discover probe still gets the
// pin and connects (issue 29, point 4). The host's log says which.
func TestStatusRetriesPinnedOnlyWhatTheProbeKilled(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"broken": w.server("exit-init"), "old": w.server("discover-kill")})
	out, stderr, code := w.run(false, "status", "--json", "--log-level", "info")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var got struct {
		Servers []struct {
			Name, State, Protocol string
			NextTry               *time.Time
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, s := range got.Servers {
		switch {
		case s.Name == "broken" && (s.State != "error" || s.NextTry == nil):
			t.Errorf("broken: %+v; want error with a next try", s)
		case s.Name == "old" && (s.State != "connected" || s.Protocol != "2025-11-25"):
			t.Errorf("old: %+v; want connected, pinned to 2025-11-25", s)
		}
	}
	b, err := os.ReadFile(filepath.Join(w.sb, "logs", "switchboard.log"))
	if err != nil {
		t.Fatal(err)
	}
	var pinned []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "retrying pinned to an older protocol revision") {
			pinned = append(pinned, line)
		}
	}
	if len(pinned) != 1 || !strings.Contains(pinned[0], `"server":"old"`) {
		t.Errorf("pinned retries logged: %q; want old's alone", pinned)
	}
}
