package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
)

// mgmtWorld is a temp home and workspace for the management commands.
type mgmtWorld struct {
	t               *testing.T
	dir, home, proj string
	env             map[string]string
}

func newMgmtWorld(t *testing.T) *mgmtWorld {
	t.Helper()
	dir := t.TempDir()
	// Resolved (macOS /var → /private/var): local entries are keyed so.
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	w := &mgmtWorld{
		t:    t,
		dir:  dir,
		home: filepath.Join(dir, "home"),
		proj: filepath.Join(dir, "proj"),
	}
	w.env = map[string]string{
		"SWITCHBOARD_HOME":        filepath.Join(w.home, ".switchboard"),
		"SWITCHBOARD_MANAGED_DIR": filepath.Join(dir, "managed"),
		// Never this machine's Gemini administrator files (/etc/gemini-cli).
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH": filepath.Join(dir, "gemini-system", "settings.json"),
	}
	for _, d := range []string{filepath.Join(w.proj, ".git"), w.env["SWITCHBOARD_HOME"]} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *mgmtWorld) write(path, content string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *mgmtWorld) factory(tty bool) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	io, _, out, errOut := Test()
	io.IsTTY = tty
	return &Factory{
		IO: io,
		Getenv: func(k string) (string, bool) {
			v, ok := w.env[k]
			return v, ok
		},
		HomeDir: w.home,
		Cwd:     w.proj,
		Now:     func() time.Time { return time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC) },
	}, out, errOut
}

// run runs the command line and returns its output and exit code.
func (w *mgmtWorld) run(tty bool, args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	f, out, errOut := w.factory(tty)
	code = Run(context.Background(), f, args)
	return out.String(), errOut.String(), code
}

// mask replaces the temp directory, which changes every run.
func (w *mgmtWorld) mask(s string) string {
	return strings.ReplaceAll(s, w.dir, "/TMP")
}

// listWorld holds one server in most interesting situations: user scope
// with a missing variable, local scope shadowing user scope, project scope,
// disabled by the workspace and by "enabled": false, a managed server, and a
// name the workspace enables but nobody defines.
func listWorld(t *testing.T) *mgmtWorld {
	w := newMgmtWorld(t)
	w.write(filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"), `{
  // mine
  "mcpServers": {
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
    "noisy": {"command": "noisy-mcp", "enabled": false},
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/My Documents"]},
  },
  "projects": {
    "`+w.proj+`": {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=UTC"], "env": {"TZ": "UTC"}}}},
  },
}`)
	w.write(filepath.Join(w.proj, ".mcp.json"), `{"mcpServers": {"db": {"command": "db-mcp", "args": ["--read-only"], "description": "The team database"}}}`)
	w.write(filepath.Join(w.proj, ".switchboard", "workspace.json"), `{"disabledMcpServers": ["fs"], "enabledMcpServers": ["ghost"]}`)
	w.write(filepath.Join(w.env["SWITCHBOARD_MANAGED_DIR"], "managed-mcp.json"), `{"mcpServers": {"audit": {"type": "sse", "url": "https://audit.corp.example/sse"}}}`)
	return w
}

func TestMCPListGolden(t *testing.T) {
	w := listWorld(t)
	for _, tc := range []struct {
		name string
		tty  bool
		args []string
	}{
		{"mcp_list_tty", true, []string{"mcp", "list"}},
		{"mcp_list_piped", false, []string{"mcp", "list"}},
		{"mcp_list_json", false, []string{"mcp", "list", "--json"}},
		{"mcp_get_tty", true, []string{"mcp", "get", "time"}},
		{"mcp_get_piped", false, []string{"mcp", "get", "time"}},
		{"mcp_get_json", false, []string{"--json", "mcp", "get", "time"}},
		{"mcp_get_project_tty", true, []string{"mcp", "get", "db"}},
		{"mcp_get_disabled_piped", false, []string{"mcp", "get", "fs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := w.run(tc.tty, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			golden(t, tc.name, w.mask(out))
		})
	}
}

// TestEnabledReadsTheSame: the ENABLED column says the same words on a
// terminal and piped (issue 29): yes, no (why), missing.
func TestEnabledReadsTheSame(t *testing.T) {
	w := listWorld(t)
	tty, _, _ := w.run(true, "mcp", "list")
	piped, _, _ := w.run(false, "mcp", "list")
	rows := strings.Split(strings.TrimSpace(piped), "\n")[1:]
	if len(rows) < 4 {
		t.Fatalf("piped list: %q", piped)
	}
	for _, row := range rows {
		f := strings.Split(row, "\t")
		name, enabled := f[0], f[3]
		found := false
		for _, l := range strings.Split(tty, "\n") {
			if strings.HasPrefix(l, name+" ") && strings.Contains(l, "  "+enabled+"  ") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: piped ENABLED %q is not what the terminal says:\n%s", name, enabled, tty)
		}
	}
}

// TestMCPListJSONContract checks the `mcp list --json` keys scripts rely on,
// independently of the golden files.
func TestMCPListJSONContract(t *testing.T) {
	w := listWorld(t)
	out, _, code := w.run(false, "mcp", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("empty list")
	}
	for _, s := range list {
		for _, k := range []string{"name", "scope", "type", "command", "args", "url", "enabled", "file"} {
			if _, ok := s[k]; !ok {
				t.Errorf("server %v lacks %q", s["name"], k)
			}
		}
		if _, ok := s["args"].([]any); !ok {
			t.Errorf("server %v: args is %T, want an array", s["name"], s["args"])
		}
	}

	out, _, code = w.run(false, "mcp", "get", "github", "--json")
	if code != 0 {
		t.Fatalf("get: exit %d", code)
	}
	var one map[string]any
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		t.Fatal(err)
	}
	warnings, ok := one["warnings"].([]any)
	if !ok || len(warnings) != 1 || !strings.Contains(warnings[0].(string), "Missing environment variables: GITHUB_TOKEN") {
		t.Errorf("warnings = %v, want the missing GITHUB_TOKEN", one["warnings"])
	}

	w.env["GITHUB_TOKEN"] = "x"
	out, _, _ = w.run(false, "mcp", "get", "github", "--json")
	if !strings.Contains(out, `"warnings": []`) {
		t.Errorf("warnings must be an empty array, not absent or null:\n%s", out)
	}
}

// TestMCPListEmpty: with no server, stdout is empty (--json: []) on a
// terminal and piped, and stderr says so, with how to add one.
func TestMCPListEmpty(t *testing.T) {
	w := newMgmtWorld(t)
	for _, tc := range []struct {
		tty               bool
		args              []string
		wantOut, wantErrs string
	}{
		{true, []string{"mcp", "list"}, "", noServersMessage + "\n"},
		{false, []string{"mcp", "list"}, "", noServersMessage + "\n"},
		{false, []string{"mcp", "list", "--json"}, "[]\n", ""},
	} {
		out, stderr, code := w.run(tc.tty, tc.args...)
		if code != 0 || out != tc.wantOut || stderr != tc.wantErrs {
			t.Errorf("%v (tty %v) = %q, %q, exit %d; want %q, %q", tc.args, tc.tty, out, stderr, code, tc.wantOut, tc.wantErrs)
		}
	}
}

func TestMCPAddFlagParsing(t *testing.T) {
	tests := []struct {
		args []string
		want MCPAddOptions
	}{
		{
			args: []string{"time", "--", "uvx", "mcp-server-time", "--local-timezone=UTC"},
			want: MCPAddOptions{Scope: "local", Name: "time", Rest: []string{"uvx", "mcp-server-time", "--local-timezone=UTC"}, DashAt: 1},
		},
		{
			args: []string{"--scope", "user", "-e", "A=1", "--env", "B=2=3", "gh", "--", "gh-mcp"},
			want: MCPAddOptions{Scope: "user", ScopeSet: true, Env: []string{"A=1", "B=2=3"}, Name: "gh", Rest: []string{"gh-mcp"}, DashAt: 1},
		},
		{
			args: []string{"-t", "http", "-H", "Authorization: Bearer x", "--header", "X-A: b", "api", "https://x/mcp"},
			want: MCPAddOptions{Scope: "local", Transport: "http", Headers: []string{"Authorization: Bearer x", "X-A: b"}, Name: "api", Rest: []string{"https://x/mcp"}, DashAt: -1},
		},
		{
			// "--" before the name, as some docs write it.
			args: []string{"--transport", "http", "--", "api", "https://x/mcp"},
			want: MCPAddOptions{Scope: "local", Transport: "http", Name: "api", Rest: []string{"https://x/mcp"}, DashAt: -1},
		},
		{
			args: []string{"-s", "project", "--force", "x", "--", "cmd", "-y", "--flag"},
			want: MCPAddOptions{Scope: "project", ScopeSet: true, Force: true, Name: "x", Rest: []string{"cmd", "-y", "--flag"}, DashAt: 1},
		},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := newMgmtWorld(t).factory(false)
			f.Global = &GlobalOptions{}
			var got *MCPAddOptions
			cmd := NewMCPAddCmd(f, func(_ context.Context, o *MCPAddOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(f.IO.Out)
			cmd.SetErr(f.IO.ErrOut)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			got.IO, got.Factory = nil, nil
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMCPAddDefinition(t *testing.T) {
	tests := []struct {
		name    string
		opts    MCPAddOptions
		want    string // the JSON written, or
		wantErr string // the error
	}{
		{"stdio", MCPAddOptions{Name: "t", Rest: []string{"uvx", "a b"}, DashAt: 1, Env: []string{"K=v=w", " L = x"}},
			`{"type":"stdio","command":"uvx","args":["a b"],"env":{"K":"v=w","L":" x"}}`, ""},
		{"url infers http", MCPAddOptions{Name: "a", Rest: []string{"https://x/mcp?a=1&b=2"}, DashAt: -1, Headers: []string{"A:  b c "}},
			`{"type":"http","url":"https://x/mcp?a=1&b=2","headers":{"A":"b c"}}`, ""},
		{"url after dash is a command", MCPAddOptions{Name: "a", Rest: []string{"https://x/mcp"}, DashAt: 1},
			`{"type":"stdio","command":"https://x/mcp"}`, ""},
		{"sse", MCPAddOptions{Name: "a", Transport: "sse", Rest: []string{"https://x/sse"}, DashAt: -1},
			`{"type":"sse","url":"https://x/sse"}`, ""},
		{"streamable-http alias", MCPAddOptions{Name: "a", Transport: "streamable-http", Rest: []string{"https://x/"}, DashAt: -1},
			`{"type":"http","url":"https://x/"}`, ""},
		{"unknown transport", MCPAddOptions{Name: "a", Transport: "ws", Rest: []string{"x"}}, "", `unknown transport "ws"`},
		{"no command", MCPAddOptions{Name: "a"}, "", `server "a" has no command to run`},
		{"no url", MCPAddOptions{Name: "a", Transport: "http"}, "", `http server "a" has no URL`},
		{"two urls", MCPAddOptions{Name: "a", Transport: "http", Rest: []string{"https://a", "https://b"}}, "", "takes one URL, got 2 arguments"},
		{"header on stdio", MCPAddOptions{Name: "a", Rest: []string{"x"}, Headers: []string{"A: b"}}, "", "-H given for stdio server"},
		{"env on http", MCPAddOptions{Name: "a", Transport: "http", Rest: []string{"https://x"}, Env: []string{"A=b"}}, "", "-e given for http server"},
		{"bad env", MCPAddOptions{Name: "a", Rest: []string{"x"}, Env: []string{"=v"}}, "", `invalid -e "=v"`},
		{"bad header", MCPAddOptions{Name: "a", Transport: "http", Rest: []string{"https://x"}, Headers: []string{"NoColon"}}, "", `invalid -H "NoColon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, err := tt.opts.definition(false)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || exitCode(err) != ExitUsage {
					t.Fatalf("err = %v (exit %d), want %q with exit 2", err, exitCode(err), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := marshalNoEscape(def)
			if string(raw) != tt.want {
				t.Errorf("definition = %s\nwant         %s", raw, tt.want)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	w := newMgmtWorld(t)
	tests := []struct {
		args []string
		code int
		err  string // first line of stderr
	}{
		{[]string{"version"}, 0, ""},
		{[]string{"mcp", "add", "a", "--", "x"}, 0, ""},
		{[]string{"mcp", "add", "a", "--", "x"}, 2, `error: server "a" already exists in local scope`},
		{[]string{"mcp", "get", "nope"}, 1, `error: no server named "nope"`},
		{[]string{"mcp", "remove", "nope"}, 1, `error: no server named "nope" in the user, project or local scope`},
		{[]string{"nonsense"}, 2, `error: unknown command "nonsense" for "switchboard"`},
		{[]string{"mcp", "lst"}, 2, `error: unknown command "lst" for "switchboard mcp"`},
		{[]string{"mcp", "list", "extra"}, 2, `error: switchboard mcp list takes no arguments, got "extra"`},
		{[]string{"--wait", "soon", "mcp", "list"}, 2, `error: invalid argument "soon" for "--wait" flag`},
		{[]string{"--log-level", "loud", "mcp", "list"}, 2, `error: invalid --log-level "loud"`},
		{[]string{"completion"}, 2, "error: completion needs the name of a shell"},
		{[]string{"completion", "tcsh"}, 2, `error: unknown shell "tcsh"`},
	}
	for _, tt := range tests {
		_, stderr, code := w.run(false, tt.args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != tt.code || !strings.HasPrefix(first, tt.err) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tt.args, code, stderr, tt.code, tt.err)
		}
		if code != 0 && !strings.Contains(stderr, "\nhint: ") {
			t.Errorf("%q: no hint line in %q", tt.args, stderr)
		}
	}
	// A subcommand typed at the top (as `claude mcp add` users do; pin for
	// tools accept) is pointed to where it lives.
	for args, hint := range map[string]string{"verison": "hint: did you mean: version?", "mcp lst": "hint: did you mean: list",
		"add": "hint: did you mean: switchboard mcp add?", "pin": "hint: did you mean: switchboard tools accept?",
		"approve": "hint: did you mean: switchboard mcp approve?"} {
		if _, stderr, _ := w.run(false, strings.Fields(args)...); !strings.Contains(stderr, hint) {
			t.Errorf("%s: stderr %q lacks %q", args, stderr, hint)
		}
	}
}

// TestUnknownServerNameExitsOne holds the one rule for a server name that
// no scope defines (README, The CLI): every command that takes one fails
// with exit 1 and says so — the command line was right, the server is not
// there — and only a configuration error makes it exit 2.
func TestUnknownServerNameExitsOne(t *testing.T) {
	w := newMgmtWorld(t)
	if _, stderr, code := w.run(false, "mcp", "add", "--scope", "user", "alpha", "--", "x"); code != 0 {
		t.Fatalf("mcp add: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"mcp", "get", "nope"},
		{"mcp", "remove", "nope"},
		{"mcp", "enable", "alpah"}, // a typo of alpha: refused with the name meant
		{"mcp", "disable", "alpah"},
		{"mcp", "tools", "disable", "alpah", "x"}, // a typo too: refused as mcp enable refuses it
		{"mcp", "tools", "enable", "alpah", "x"},
		{"mcp", "login", "nope"},
		{"mcp", "logout", "nope"},
		{"mcp", "revoke", "nope"},
		{"mcp", "approve", "nope", "--yes"},
		{"tools", "--server", "nope"},
		{"tools", "diff", "nope"},
		{"tools", "accept", "nope"},
		{"prompts", "--server", "nope"},
		{"resources", "--server", "nope"},
		{"prompt", "/nope:p"},
		{"read", "@nope:file:///x"},
		{"call", "mcp__nope__x"},
		{"permissions", "allow", "mcp__nope"},
	} {
		_, stderr, code := w.run(false, args...)
		if code != ExitFailure || !strings.Contains(stderr, "nope") && !strings.Contains(stderr, "alpah") {
			t.Errorf("%q: exit %d, stderr %q; want 1 and the name", args, code, stderr)
		}
	}
	// A file that does not load may be where the server is: that is the
	// configuration error, exit 2, for the same commands.
	w.write(filepath.Join(w.proj, ".mcp.json"), "{not json")
	for _, args := range [][]string{{"mcp", "get", "nope"}, {"tools", "diff", "nope"}, {"mcp", "approve", "nope", "--yes"}} {
		_, stderr, code := w.run(false, args...)
		if code != ExitUsage || !strings.Contains(stderr, "may be defined in a file that did not load") {
			t.Errorf("%q with a broken .mcp.json: exit %d, stderr %q; want 2 and the file", args, code, stderr)
		}
	}
}

// TestToolFilterNearMissRefused: `mcp tools disable|enable` of a name
// close to a defined server's writes nothing, fails (exit 1) and names the
// server meant, as `mcp enable` does; --force, or a name close to none (a
// server to be added later), is recorded with a note.
func TestToolFilterNearMissRefused(t *testing.T) {
	w := newMgmtWorld(t)
	if _, stderr, code := w.run(false, "mcp", "add", "--scope", "user", "github", "--", "x"); code != 0 {
		t.Fatalf("mcp add: exit %d: %s", code, stderr)
	}
	userFile := filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json")
	before, err := os.ReadFile(userFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"disable", "enable"} {
		_, stderr, code := w.run(false, "mcp", "tools", verb, "gihtub", "delete_repo")
		if code != ExitFailure || !strings.Contains(stderr, "did you mean github?") || !strings.Contains(stderr, "--force") {
			t.Errorf("mcp tools %s gihtub: exit %d, stderr %q; want 1 and the name meant", verb, code, stderr)
		}
		if after, _ := os.ReadFile(userFile); string(after) != string(before) {
			t.Errorf("mcp tools %s gihtub changed %s:\n%s", verb, userFile, after)
		}
	}
	for _, args := range [][]string{
		{"mcp", "tools", "disable", "gihtub", "delete_repo", "--force"},
		{"mcp", "tools", "disable", "linear", "delete_issue"}, // close to nothing: added later
	} {
		_, stderr, code := w.run(false, args...)
		if code != 0 || !strings.Contains(stderr, "note: no scope defines") {
			t.Errorf("%q: exit %d, stderr %q; want 0 and the note", args, code, stderr)
		}
	}
	after, _ := os.ReadFile(userFile)
	for _, want := range []string{`"gihtub"`, `"linear"`, "delete_issue"} {
		if !strings.Contains(string(after), want) {
			t.Errorf("%s lacks %s:\n%s", userFile, want, after)
		}
	}
}

func TestExitErrorMapping(t *testing.T) {
	base := os.ErrNotExist
	tests := []struct {
		err  error
		code int
	}{
		{nil, 0},
		{base, 1},
		{UsageErr(base, ""), 2},
		{ConfigErr(base, ""), 2},
		{RefusedErr(base, "allow it with …"), 3},
		{FailureErr(base, ""), 1},
		{silentExit(3), 3},
		{&wrapped{RefusedErr(base, "")}, 3},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.code {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
	var b bytes.Buffer
	printError(&b, RefusedErr(base, "run: switchboard mcp approve x"))
	if want := "error: file does not exist\nhint: run: switchboard mcp approve x\n"; b.String() != want {
		t.Errorf("printError = %q, want %q", b.String(), want)
	}
	b.Reset()
	printError(&b, silentExit(2))
	if b.Len() != 0 {
		t.Errorf("an already reported error printed %q", b.String())
	}
}

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "wrapped: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

func TestTablePrinter(t *testing.T) {
	for _, tc := range []struct {
		tty  bool
		want string
	}{
		{true, "NAME    TYPE   TARGET\ntime    stdio  uvx a b\ngithub  http\nfs      stdio  x\n"},
		{false, "NAME\tTYPE\tTARGET\ntime\tstdio\tuvx a b\ngithub\thttp\t\nfs\tstdio\tx\n"},
	} {
		io, _, out, _ := Test()
		io.IsTTY = tc.tty
		tp := newTablePrinter(io, "name", "type", "target")
		tp.AddRow("time", "stdio", "uvx a\tb")
		tp.AddRow("github", "http", "")
		tp.AddRow("fs", "stdio", "x")
		if err := tp.Render(); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("tty=%v:\n got %q\nwant %q", tc.tty, out.String(), tc.want)
		}
	}
}

func TestTablePrinterShrinks(t *testing.T) {
	io, _, out, _ := Test()
	io.IsTTY, io.Width = true, 40
	tp := newTablePrinter(io, "name", "command", "file")
	tp.Shrink(1)
	tp.AddRow("fs", "npx -y @modelcontextprotocol/server-filesystem /home/me", "~/f.json")
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	want := "NAME  COMMAND                   FILE\nfs    npx -y @modelcontextpro…  ~/f.json\n"
	if out.String() != want {
		t.Errorf("got %q\nwant %q", out.String(), want)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if n := len([]rune(line)); n > 40 {
			t.Errorf("line of %d columns on a 40-column terminal: %q", n, line)
		}
	}
}

func TestPrintJSON(t *testing.T) {
	var b bytes.Buffer
	if err := printJSON(&b, map[string]any{"url": "https://x/?a=1&b=<2>", "a": []string{}}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": [],\n  \"url\": \"https://x/?a=1&b=<2>\"\n}\n"
	if b.String() != want {
		t.Errorf("printJSON = %q, want %q", b.String(), want)
	}
}

func TestShellJoin(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"uvx", []string{"mcp-server-time", "--tz=UTC"}, "uvx mcp-server-time --tz=UTC"},
		{"npx", []string{"-y", "@scope/pkg", "/My Docs"}, "npx -y @scope/pkg '/My Docs'"},
		{"sh", []string{"-c", "echo 'hi'", ""}, `sh -c 'echo '\''hi'\''' ''`},
		{"x", []string{"${HOME}/a", "a;b"}, "x ${HOME}/a 'a;b'"},
	} {
		if got := shellJoin(tc.cmd, tc.args); got != tc.want {
			t.Errorf("shellJoin(%q, %q) = %q, want %q", tc.cmd, tc.args, got, tc.want)
		}
	}
}

func TestTranslateImport(t *testing.T) {
	f := &Factory{HomeDir: "/home/me"}
	tests := []struct {
		name, in, want, skip string
	}{
		{"plain", `{"command":"x","args":["a"]}`, `{"command":"x","args":["a"]}`, ""},
		{"env and workspace", `{"command":"x","args":["${workspaceFolder}/a","${userHome}"],"env":{"T":"${env:TOKEN}","U":"${USER}"}}`,
			`{"command":"x","args":["/w s/a","/home/me"],"env":{"T":"${TOKEN}","U":"${USER}"}}`, ""},
		{"input as a secret", `{"url":"https://x/${input:path}","headers":{"A":"Bearer ${input:key}"},"env":{"T":"${input:key}"}}`,
			`{"url":"https://x/${secret:path}","headers":{"A":"Bearer ${secret:key}"},"env":{"T":"${secret:key}"}}`, ""},
		{"input in args", `{"command":"x","args":["--key=${input:key}"],"env":{"T":"${input:key}"}}`, "", "uses ${input:key}, which only VS Code can prompt for"},
		{"input not a secret name", `{"command":"x","env":{"T":"${input:my key}"}}`, "", "uses ${input:my key}, which only VS Code can prompt for"},
		{"secret kept", `{"command":"x","env":{"T":"${secret:GH}"}}`, `{"command":"x","env":{"T":"${secret:GH}"}}`, ""},
		{"other variable", `{"command":"x","cwd":"${fileDirname}"}`, "", "uses ${fileDirname}, which Switchboard does not expand"},
		{"unknown fields dropped", `{"command":"x","dev":{"watch":"build/**"},"gallery":true}`, `{"command":"x"}`, ""},
		{"envFile", `{"command":"x","envFile":"${workspaceFolder}/.env"}`, "", `reads its environment from its envFile "/w s/.env", which Switchboard does not read`},
		{"disabled", `{"command":"x","disabled":true}`, `{"command":"x","enabled":false}`, ""},
		{"another tool's sandbox", `{"command":"x","sandbox":{"filesystem":{"allowWrite":["."]}}}`, `{"command":"x"}`, ""},
		{"fields Switchboard reads kept", `{"command":"x","disabledTools":["delete_*"],"enabledTools":["*"],"secrets":"redact","tasks":"optional","sandbox":{"network":false}}`,
			`{"command":"x","disabledTools":["delete_*"],"enabledTools":["*"],"secrets":"redact","tasks":"optional","sandbox":{"network":false}}`, ""},
		{"sse url", `{"url":"https://x/sse"}`, `{"url":"https://x/sse","type":"sse"}`, ""},
		{"typed url", `{"type":"http","url":"https://x/sse"}`, `{"type":"http","url":"https://x/sse"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, skip := translateImport(f, []byte(tt.in), "/w s")
			if tt.skip != "" {
				if !strings.Contains(skip, tt.skip) {
					t.Errorf("skip = %q, want %q", skip, tt.skip)
				}
				return
			}
			if skip != "" || string(got) != tt.want {
				t.Errorf("translateImport = %s (skip %q), want %s", got, skip, tt.want)
			}
		})
	}
}

func TestClaudeDesktopPath(t *testing.T) {
	env := map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`}
	f := &Factory{HomeDir: "/home/me", Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	for goos, want := range map[string]string{
		"linux":   filepath.Join("/home/me", ".config", "Claude", "claude_desktop_config.json"),
		"darwin":  filepath.Join("/home/me", "Library", "Application Support", "Claude", "claude_desktop_config.json"),
		"windows": filepath.Join(`C:\Users\me\AppData\Roaming`, "Claude", "claude_desktop_config.json"),
	} {
		if got := claudeDesktopPath(f, goos); got != want {
			t.Errorf("%s: %q, want %q", goos, got, want)
		}
		// VS Code's user folder is beside Claude's.
		if got, want := vscodeUserConfig(userConfigDir(f, goos)), filepath.Join(filepath.Dir(filepath.Dir(want)), "Code", "User", "mcp.json"); got != want {
			t.Errorf("%s: VS Code %q, want %q", goos, got, want)
		}
	}
	env["XDG_CONFIG_HOME"] = "/xdg"
	if got, want := claudeDesktopPath(f, "linux"), filepath.Join("/xdg", "Claude", "claude_desktop_config.json"); got != want {
		t.Errorf("XDG: %q, want %q", got, want)
	}
}

func TestScopeTargets(t *testing.T) {
	w := newMgmtWorld(t)
	f, _, _ := w.factory(false)
	f.Global = &GlobalOptions{}
	user := filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json")
	for _, tc := range []struct {
		scope   config.Scope
		file    string
		objPath []string
	}{
		{config.ScopeUser, user, []string{"mcpServers"}},
		{config.ScopeLocal, user, []string{"projects", w.proj, "mcpServers"}},
		{config.ScopeProject, filepath.Join(w.proj, ".mcp.json"), []string{"mcpServers"}},
	} {
		got, err := f.target(tc.scope)
		if err != nil {
			t.Fatal(err)
		}
		if got.File != tc.file || !cmp.Equal(got.ObjPath, tc.objPath) {
			t.Errorf("%s: %s %q, want %s %q", tc.scope, got.File, got.ObjPath, tc.file, tc.objPath)
		}
	}
	// No workspace: user scope still works, the others say why not.
	f.Cwd = t.TempDir()
	if _, err := f.target(config.ScopeUser); err != nil {
		t.Error(err)
	}
	if _, err := f.target(config.ScopeLocal); err == nil || exitCode(err) != ExitUsage {
		t.Errorf("local scope without a workspace: %v", err)
	}
}

func TestCompletion(t *testing.T) {
	w := listWorld(t)
	for _, shell := range completionShells {
		out, stderr, code := w.run(false, "completion", shell)
		if code != 0 || len(out) < 100 || stderr != "" {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, code, len(out), stderr)
		}
	}
	// Server names complete for get, remove, enable and disable.
	for _, sub := range []string{"get", "remove", "enable", "disable"} {
		out, _, code := w.run(false, cobra.ShellCompRequestCmd, "mcp", sub, "t")
		if code != 0 || !strings.Contains(out, "time\t") || strings.Contains(out, "github") {
			t.Errorf("completing mcp %s t: exit %d, %q", sub, code, out)
		}
	}
}

func TestVersion(t *testing.T) {
	w := newMgmtWorld(t)
	out, _, code := w.run(false, "version")
	if code != 0 || !strings.HasPrefix(out, "switchboard ") || !strings.Contains(out, "MCP protocol revisions: 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28\n") {
		t.Errorf("version = %q (exit %d)", out, code)
	}
	out, _, _ = w.run(false, "version", "--json")
	var v struct {
		Version           string
		ProtocolRevisions []string
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Version == "" || len(v.ProtocolRevisions) != 4 {
		t.Errorf("version --json = %q (%v)", out, err)
	}
}

func TestCreatedFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	w := newMgmtWorld(t)
	if err := os.Remove(w.env["SWITCHBOARD_HOME"]); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"mcp", "add", "--scope", "user", "u", "--", "x"},
		{"mcp", "add", "--scope", "project", "p", "--", "x"},
		{"mcp", "disable", "u"}, // the user file's local layer, not the repository
	} {
		if _, stderr, code := w.run(false, args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
	}
	for path, want := range map[string]os.FileMode{
		w.env["SWITCHBOARD_HOME"]:                            0o700,
		filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"): 0o600,
		filepath.Join(w.proj, ".mcp.json"):                   0o644,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
}
