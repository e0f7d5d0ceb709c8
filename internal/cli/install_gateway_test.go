package cli

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tailscale/hujson"
)

func readJSONC(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	std, err := hujson.Standardize(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var m map[string]any
	if err := json.Unmarshal(std, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInstallGatewayKeepsOtherEntries(t *testing.T) {
	w := newMgmtWorld(t)
	vs := filepath.Join(w.proj, ".vscode", "mcp.json")
	w.write(vs, `{
  // my servers
  "servers": {
    "other": {"type": "stdio", "command": "other-server"} // keep me
  },
  "inputs": []
}
`)
	claude := filepath.Join(w.home, ".claude.json")
	w.write(claude, `{"numStartups": 7, "mcpServers": {"mine": {"command": "x"}}, "projects": {}}`)

	for _, tc := range []struct {
		args []string
		file string
		path []string
		want []any
	}{
		// The budget leaves room for the client's prefix: Claude Code's
		// mcp__switchboard__ (46) or mcp__sb__ (55), VS Code's
		// mcp_switchboard_ (48), Cursor's 60 for server and tool (49).
		{[]string{"--client", "vscode"}, vs, []string{"servers", "switchboard"}, []any{"serve", "--stdio", "--workspace", "${workspaceFolder}", "--name-budget", "48"}},
		{[]string{"--client", "claude-code"}, claude, []string{"mcpServers", "switchboard"}, []any{"serve", "--stdio", "--name-budget", "46"}},
		{[]string{"--client", "claude-code", "--scope", "local", "--name", "sb"}, claude, []string{"projects", w.proj, "mcpServers", "sb"}, []any{"serve", "--stdio", "--workspace", w.proj, "--name-budget", "55"}},
		{[]string{"--client", "cursor"}, filepath.Join(w.home, ".cursor", "mcp.json"), []string{"mcpServers", "switchboard"}, []any{"serve", "--stdio", "--name-budget", "49"}},
		{[]string{"--client", "cursor", "--scope", "project", "--file", "elsewhere.json"}, filepath.Join(w.proj, "elsewhere.json"), []string{"mcpServers", "switchboard"}, []any{"serve", "--stdio", "--name-budget", "49"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := w.run(false, append([]string{"mcp", "install-gateway", "--command", "/opt/sb/switchboard"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, "the Switchboard gateway as") {
				t.Errorf("stdout %q", out)
			}
			var v any = readJSONC(t, tc.file)
			for _, k := range tc.path {
				m, ok := v.(map[string]any)
				if !ok {
					t.Fatalf("%s: no %v", tc.file, tc.path)
				}
				v = m[k]
			}
			entry, _ := v.(map[string]any)
			if entry["command"] != "/opt/sb/switchboard" || entry["type"] != "stdio" {
				t.Errorf("entry %v", entry)
			}
			if diff := cmp.Diff(tc.want, entry["args"]); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
	// Nothing else changed: the comments, the other entries, other keys.
	b, _ := os.ReadFile(vs)
	for _, keep := range []string{"// my servers", "// keep me", `"other-server"`, `"inputs": []`} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("vscode file lost %q:\n%s", keep, b)
		}
	}
	c := readJSONC(t, claude)
	if c["numStartups"] != float64(7) || c["mcpServers"].(map[string]any)["mine"] == nil {
		t.Errorf("claude file lost entries: %v", c)
	}
	// Running it again updates the entry in place.
	out, _, code := w.run(false, "mcp", "install-gateway", "--client", "claude-code", "--command", "/opt/sb/switchboard")
	if code != 0 || !strings.HasPrefix(out, "Updated") {
		t.Errorf("second install: exit %d, %q", code, out)
	}
}

func TestInstallGatewayErrors(t *testing.T) {
	w := newMgmtWorld(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--client", "emacs"}, "unknown or missing --client"},
		{nil, "unknown or missing --client"},
		{[]string{"--client", "cursor", "--scope", "local"}, "Cursor has no local scope"},
		{[]string{"--client", "claude-code", "--name", strings.Repeat("g", 50)}, "pass a shorter --name"},
	} {
		_, errOut, code := w.run(false, append([]string{"mcp", "install-gateway"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	bad := filepath.Join(w.proj, "bad.json")
	w.write(bad, `{"mcpServers": {`)
	_, errOut, code := w.run(false, "mcp", "install-gateway", "--client", "cursor", "--file", bad)
	if code != ExitUsage || !strings.Contains(errOut, "bad.json") {
		t.Errorf("broken file: exit %d, %q", code, errOut)
	}
	if b, _ := os.ReadFile(bad); string(b) != `{"mcpServers": {` {
		t.Errorf("broken file was changed: %q", b)
	}
}

// TestInstalledGatewayRuns starts the entry install-gateway wrote, as the
// client would, and lists tools through it.
func TestInstalledGatewayRuns(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	file := filepath.Join(w.dir, "client.json")
	io, _, _, errOut := Test()
	fac := &Factory{IO: io, Getenv: func(k string) (string, bool) { return "", false }, HomeDir: w.home, Cwd: w.ws, Now: time.Now}
	if code := Run(context.Background(), fac, []string{"mcp", "install-gateway", "--client", "cursor", "--file", file, "--command", switchboardBin(t)}); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(file)
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	e := cfg.MCPServers["switchboard"]
	cmd := exec.Command(e.Command, e.Args...)
	cmd.Env, cmd.Dir = w.env, w.ws
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-ish"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting the installed entry %s %v: %v", e.Command, e.Args, err)
	}
	defer cs.Close()
	if !listNames(t, ctx, cs)["alpha__echo"] {
		t.Error("the installed gateway does not list alpha's tools")
	}
}

// TestGatewayCommandIsPortable: the entry never names a temporary build,
// and a file the repository shares gets plain "switchboard".
func TestGatewayCommandIsPortable(t *testing.T) {
	tmpExe := filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "switchboard")
	for _, tc := range []struct {
		name     string
		exe      string
		onPath   string
		shared   bool
		want     string
		warnings int
	}{
		{"installed", "/usr/local/bin/switchboard", "", false, "/usr/local/bin/switchboard", 0},
		{"go run, on PATH", tmpExe, "/home/u/go/bin/switchboard", false, "/home/u/go/bin/switchboard", 0},
		{"go run, not on PATH", tmpExe, "", false, "switchboard", 1},
		{"shared file", "/usr/local/bin/switchboard", "/usr/local/bin/switchboard", true, "switchboard", 0},
		{"shared file, not on PATH", tmpExe, "", true, "switchboard", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &InstallGatewayOptions{
				Executable: func() (string, error) { return tc.exe, nil },
				LookPath: func(string) (string, error) {
					if tc.onPath == "" {
						return "", exec.ErrNotFound
					}
					return tc.onPath, nil
				},
			}
			got, warnings, err := gatewayCommand(opts, tc.shared)
			if err != nil || got != tc.want || len(warnings) != tc.warnings {
				t.Errorf("gatewayCommand = %q, %q, %v; want %q with %d warnings", got, warnings, err, tc.want, tc.warnings)
			}
		})
	}
	// --command is kept as given, a bare name too (not made absolute).
	if got, _, _ := gatewayCommand(&InstallGatewayOptions{Command: "switchboard"}, true); got != "switchboard" {
		t.Errorf("--command switchboard became %q", got)
	}
}

// TestInstallGatewayTwiceAndMove: the servers the client already has and
// the gateway serves too are named; --move takes them out after a backup.
func TestInstallGatewayTwiceAndMove(t *testing.T) {
	w := newMgmtWorld(t)
	w.write(filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"), `{"mcpServers": {
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
  "github": {"command": "github-mcp-server", "args": ["stdio"]},
  "web": {"url": "https://mcp.example.com/mcp"}
}}`)
	claude := filepath.Join(w.home, ".claude.json")
	orig := `{
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "gh": {"command": "github-mcp-server", "args": ["stdio"]},
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp"},
    "mine": {"command": "only-in-claude"} // keep me
  }
}`
	w.write(claude, orig)
	args := []string{"mcp", "install-gateway", "--client", "claude-code", "--command", "/opt/sb/switchboard"}
	_, errOut, code := w.run(false, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"twice", "gh (same command as github)", "memory (same name)", "remote (same URL as web)", "--move"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "mine") {
		t.Errorf("a server only the client has is named:\n%s", errOut)
	}
	out, errOut, code := w.run(false, append(args, "--move")...)
	if code != 0 || !strings.Contains(out, "Moved gh, memory, remote") {
		t.Fatalf("--move: exit %d: %s%s", code, out, errOut)
	}
	servers := readJSONC(t, claude)["mcpServers"].(map[string]any)
	if diff := cmp.Diff([]string{"mine", "switchboard"}, slices.Sorted(maps.Keys(servers))); diff != "" {
		t.Errorf("entries left (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(claude + ".switchboard-backup"); err != nil || !strings.Contains(string(b), `"gh"`) || !strings.Contains(string(b), `"memory"`) {
		t.Errorf("backup: %v %s", err, b)
	}
	if b, _ := os.ReadFile(claude); !strings.Contains(string(b), "// keep me") {
		t.Errorf("the comment was lost:\n%s", b)
	}
}

// --move takes an entry out of the client's user scope, which it uses in
// every workspace, only when the gateway serves that server in every
// workspace too: a Switchboard server of this workspace only (local
// scope), or a gateway entry of this project only, leaves it, said so;
// the client's own entries for this workspace move.
func TestInstallGatewayMoveKeepsWhatOtherWorkspacesUse(t *testing.T) {
	w := newMgmtWorld(t)
	w.write(filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"), `{
  "mcpServers": {"github": {"command": "github-mcp-server", "args": ["stdio"]}},
  "projects": {"`+w.proj+`": {"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}}
}`)
	claude := filepath.Join(w.home, ".claude.json")
	orig := `{
  "mcpServers": {
    "gh": {"command": "github-mcp-server", "args": ["stdio"]},
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
  },
  "projects": {"` + w.proj + `": {"mcpServers": {"mem-here": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}}
}`
	w.write(claude, orig)
	args := []string{"mcp", "install-gateway", "--client", "claude-code", "--command", "/opt/sb/switchboard", "--move"}
	out, errOut, code := w.run(false, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{
		"--move leaves memory in ~/.claude.json (user scope): Claude Code uses them in every workspace, and the gateway serves them only in this one (memory: Switchboard's memory is local scope, this workspace only)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, want := range []string{"Moved gh out of ~/.claude.json (user scope)", "Moved mem-here out of ~/.claude.json (local scope)"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	got := readJSONC(t, claude)
	if diff := cmp.Diff([]string{"memory", "switchboard"}, slices.Sorted(maps.Keys(got["mcpServers"].(map[string]any)))); diff != "" {
		t.Errorf("user entries left (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(claude); strings.Contains(string(b), "mem-here") {
		t.Errorf("the local entry is still there:\n%s", b)
	}

	// The gateway's entry in this project only: no user entry moves.
	w.write(claude, orig)
	out, errOut, code = w.run(false, "mcp", "install-gateway", "--client", "claude-code", "--scope", "local", "--command", "/opt/sb/switchboard", "--move")
	if code != 0 {
		t.Fatalf("--scope local: exit %d: %s%s", code, out, errOut)
	}
	if want := "--move leaves gh, memory in ~/.claude.json (user scope)"; !strings.Contains(errOut, want) || !strings.Contains(errOut, "gh, memory: the gateway's entry is in Claude Code's local config, not in every workspace") {
		t.Errorf("stderr lacks %q and why:\n%s", want, errOut)
	}
	if strings.Contains(out, "Moved gh") || strings.Contains(out, "Moved memory") {
		t.Errorf("a user entry moved:\n%s", out)
	}
	if !strings.Contains(out, "Moved mem-here out of ~/.claude.json (local scope)") {
		t.Errorf("the local entry did not move:\n%s", out)
	}
	if diff := cmp.Diff([]string{"gh", "memory"}, slices.Sorted(maps.Keys(readJSONC(t, claude)["mcpServers"].(map[string]any)))); diff != "" {
		t.Errorf("user entries left (-want +got):\n%s", diff)
	}
}

// A client file that starts with a byte-order mark (Windows editors write
// one) is read like editFile reads it: the servers seen twice are named.
func TestInstallGatewayTwiceWithBOM(t *testing.T) {
	w := newMgmtWorld(t)
	w.write(filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"), `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`)
	claude := filepath.Join(w.home, ".claude.json")
	w.write(claude, "\ufeff"+`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`)
	_, errOut, code := w.run(false, "mcp", "install-gateway", "--client", "claude-code", "--command", "/opt/sb/switchboard")
	if code != 0 || !strings.Contains(errOut, "memory (same name)") {
		t.Fatalf("exit %d; stderr lacks the server seen twice:\n%s", code, errOut)
	}
}

// Servers seen twice are named in every scope of the client, not only the
// file written: installed in user scope, Claude Code's local entries for
// this project and the project's .mcp.json are looked at too (issue 29,
// point 10).
func TestInstallGatewayTwiceInEveryScope(t *testing.T) {
	w := newMgmtWorld(t)
	w.write(filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"), `{"mcpServers": {"github": {"command": "github-mcp-server", "args": ["stdio"]}}}`)
	w.write(filepath.Join(w.home, ".claude.json"), `{"projects": {"`+w.proj+`": {"mcpServers": {"gh": {"command": "github-mcp-server", "args": ["stdio"]}}}}}`)
	w.write(filepath.Join(w.proj, ".mcp.json"), `{"mcpServers": {"db": {"command": "db-mcp"}}}`)
	_, errOut, code := w.run(false, "mcp", "install-gateway", "--client", "claude-code", "--command", "/opt/sb/switchboard")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"(local scope): gh (same command as github)",
		".mcp.json (project scope): db (same name)",
		"turn them off in Claude Code",
		"--move to take them out of ~/.claude.json",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestInstalledProfileGatewaysRun (issue 34.2): install-gateway
// --all-profiles writes one entry per profile (switchboard-<profile>,
// running serve --stdio --profile), keeping the file's comments; each
// entry, started as the client would, lists only its profile's tools.
func TestInstalledProfileGatewaysRun(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha", "beta")
	writeJSON(t, filepath.Join(w.sbHome, "settings.json"), map[string]any{"profiles": map[string]any{
		"a": map[string]any{"servers": []string{"alpha"}},
		"b": map[string]any{"servers": []string{"beta"}, "disabledTools": []string{"add"}},
	}})
	file := filepath.Join(w.dir, "client.json")
	if err := os.WriteFile(file, []byte("{\n  // mine\n  \"mcpServers\": {}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	io, _, out, errOut := Test()
	fac := &Factory{IO: io, Getenv: func(k string) (string, bool) { return "", false }, HomeDir: w.home, Cwd: w.ws, Now: time.Now}
	if code := Run(context.Background(), fac, []string{"mcp", "install-gateway", "--client", "cursor", "--file", file, "--command", switchboardBin(t), "--all-profiles"}); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	if !strings.Contains(out.String(), `profile "a" as "switchboard-a"`) || !strings.Contains(out.String(), `profile "b" as "switchboard-b"`) {
		t.Errorf("stdout: %s", out)
	}
	if strings.Contains(errOut.String(), "another entry that runs a Switchboard gateway") {
		t.Errorf("the profiles' entries were taken for duplicate gateways:\n%s", errOut)
	}
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), "// mine") {
		t.Errorf("the file lost its comment:\n%s", b)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	std, _ := hujson.Standardize(b)
	if err := json.Unmarshal(std, &cfg); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(cfg.MCPServers)); !slices.Equal(got, []string{"switchboard-a", "switchboard-b"}) {
		t.Fatalf("entries %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for entry, want := range map[string]string{"switchboard-a": "alpha__", "switchboard-b": "beta__"} {
		e := cfg.MCPServers[entry]
		// --wait: the first list waits for the servers, however loaded
		// the machine (serve's own default gives them 500 ms).
		cmd := exec.Command(e.Command, append(slices.Clone(e.Args), "--wait", "30s")...)
		cmd.Env, cmd.Dir = w.env, w.ws
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-ish"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("starting %s %v: %v", e.Command, e.Args, err)
		}
		names := listNames(t, ctx, cs)
		cs.Close()
		if !names[want+"echo"] {
			t.Errorf("%s does not list %secho: %v", entry, want, names)
		}
		for n := range names {
			if !strings.HasPrefix(n, want) || n == "beta__add" {
				t.Errorf("%s lists %s", entry, n)
			}
		}
	}
}

// Codex keeps its servers as TOML tables, which Switchboard does not
// edit: install-gateway prints Codex's own `codex mcp add` command and the
// table (in $CODEX_HOME when set), writes nothing, and refuses --move. The
// printed entry, run as Codex would, serves the gateway's tools.
func TestInstallGatewayCodexPrintsTheEntry(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	codexHome := filepath.Join(w.dir, "codex")
	env := map[string]string{"CODEX_HOME": codexHome}
	io, _, out, errOut := Test()
	fac := &Factory{IO: io, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, HomeDir: w.home, Cwd: w.ws, Now: time.Now}
	bin := switchboardBin(t)
	if code := Run(context.Background(), fac, []string{"mcp", "install-gateway", "--client", "codex", "--command", bin}); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	text := out.String()
	for _, want := range []string{
		"TOML tables in " + filepath.Join(codexHome, "config.toml") + ", which Switchboard does not edit: nothing was written",
		"  codex mcp add switchboard -- " + shellQuote(bin) + " serve --stdio --name-budget 46\n",
		"  [mcp_servers.switchboard]\n  command = " + tomlString(bin) + "\n  args = [\"serve\", \"--stdio\", \"--name-budget\", \"46\"]\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output:\n%s\nwant %q", text, want)
		}
	}
	if _, err := os.Stat(codexHome); err == nil {
		t.Errorf("install-gateway --client codex wrote %s", codexHome)
	}
	// What it printed runs the gateway.
	line := text[strings.Index(text, "codex mcp add switchboard -- ")+len("codex mcp add switchboard -- "):]
	args := strings.Fields(line[:strings.Index(line, "\n")])
	cmd := exec.Command(bin, args[1:]...)
	cmd.Env, cmd.Dir = w.env, w.ws
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "codex-ish"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting the printed entry %q: %v", args, err)
	}
	defer cs.Close()
	if !listNames(t, ctx, cs)["alpha__echo"] {
		t.Error("the printed entry does not list alpha's tools")
	}

	io, _, _, errOut = Test()
	fac.IO = io
	if code := Run(context.Background(), fac, []string{"mcp", "install-gateway", "--client", "codex", "--move"}); code != 2 || !strings.Contains(errOut.String(), "Codex's is TOML") {
		t.Errorf("--move: exit %d, %s", code, errOut)
	}
	for in, want := range map[string]string{`a"b\c`: `"a\"b\\c"`, "x\ny\t\x01": `"x\ny\t\u0001"`, "plain": `"plain"`} {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %s, want %s", in, got, want)
		}
	}
	if got := tomlKey("sb review"); got != `"sb review"` {
		t.Errorf("tomlKey: %s", got)
	}
}

// tomlString writes any string as a TOML basic string: one line, quotes
// and backslashes escaped, no raw control character, and decoding its
// escapes gives the string back (what Codex reads is what was meant).
func FuzzTOMLString(f *testing.F) {
	for _, s := range []string{"", "plain", `a"b\c`, "x\ny\t\x01\x7f", "é ü 😀", `\u0041`, "\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // arguments are text; TOML strings are UTF-8
		}
		q := tomlString(s)
		if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
			t.Fatalf("%q: not quoted: %s", s, q)
		}
		body := q[1 : len(q)-1]
		var back strings.Builder
		for i := 0; i < len(body); i++ {
			c := body[i]
			switch {
			case c == '"':
				t.Fatalf("%q: an unescaped quote in %s", s, q)
			case c < 0x20 || c == 0x7f:
				t.Fatalf("%q: a raw control character in %s", s, q)
			case c != '\\':
				back.WriteByte(c)
				continue
			}
			i++
			if i >= len(body) {
				t.Fatalf("%q: a trailing backslash in %s", s, q)
			}
			switch body[i] {
			case '"', '\\':
				back.WriteByte(body[i])
			case 'n':
				back.WriteByte('\n')
			case 't':
				back.WriteByte('\t')
			case 'u':
				if i+4 >= len(body) {
					t.Fatalf("%q: a short \\u in %s", s, q)
				}
				n, err := strconv.ParseUint(body[i+1:i+5], 16, 32)
				if err != nil {
					t.Fatalf("%q: %v in %s", s, err, q)
				}
				back.WriteRune(rune(n))
				i += 4
			default:
				t.Fatalf("%q: the escape \\%c, which TOML does not have, in %s", s, body[i], q)
			}
		}
		if back.String() != s {
			t.Fatalf("%q came back as %q from %s", s, back.String(), q)
		}
	})
}

// TestInstallGatewayProfileScopes: an entry is written for a profile only
// where it can run for everyone who uses it. A project-scope entry is
// shared with the repository, so a profile only this user's settings
// define (top level or "projects" entry) is refused there, saying which
// scope fits; a user-scope entry runs in every workspace, so a profile of
// a "projects" entry is refused there, pointing to local scope (not to
// project scope, which would fail for others); a profile of the
// repository's settings is fine in project scope; --all-profiles leaves
// out what the scope cannot serve, saying so.
func TestInstallGatewayProfileScopes(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	writeJSON(t, filepath.Join(w.sbHome, "settings.json"), map[string]any{
		"profiles": map[string]any{"mine": map[string]any{"servers": []string{"alpha"}}},
		"projects": map[string]any{w.ws: map[string]any{"profiles": map[string]any{"here": map[string]any{"servers": []string{"alpha"}}}}},
	})
	if err := os.MkdirAll(filepath.Join(w.ws, ".switchboard"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(w.ws, ".switchboard", "settings.json"), map[string]any{"profiles": map[string]any{"shared": map[string]any{}}})
	managed := filepath.Join(t.TempDir(), "managed")
	if err := os.MkdirAll(managed, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(managed, "managed-settings.json"), map[string]any{"profiles": map[string]any{"org": map[string]any{"servers": []string{"alpha"}}}})
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		stderr  []string
		entries []string
	}{
		{"user profile, project scope", []string{"--client", "claude-code", "--scope", "project", "--profile", "mine"}, ExitUsage, []string{
			`profile "mine" is defined in your own settings only (user settings, ~/.switchboard/settings.json:`,
			"would fail for everyone else who clones it",
			"hint: pass --scope user (or --scope local); or, to share it, define the profile in the repository's .switchboard/settings.json"}, nil},
		{"projects-entry profile, project scope", []string{"--client", "claude-code", "--scope", "project", "--profile", "here"}, ExitUsage, []string{
			`profile "here" is defined in your own settings only (local settings, ~/.switchboard/settings.json:`, "hint: pass --scope local (this workspace, for you only)"}, nil},
		{"projects-entry profile, project scope, cursor", []string{"--client", "cursor", "--scope", "project", "--profile", "here"}, ExitUsage, []string{
			"hint: move the profile to the top level of your user settings (~/.switchboard/settings.json) and pass --scope user"}, nil},
		{"projects-entry profile, user scope", []string{"--client", "claude-code", "--scope", "user", "--profile", "here"}, ExitUsage, []string{
			`profile "here" is defined for this workspace only (local settings,`, "hint: pass --scope local, or move the profile to the top level"}, nil},
		{"repository profile, project scope", []string{"--client", "cursor", "--scope", "project", "--profile", "shared"}, 0, nil, []string{"switchboard-shared"}},
		// A managed profile works for a clone where the same managed
		// settings are installed (one organisation): written, with a note.
		{"managed profile, project scope", []string{"--client", "cursor", "--scope", "project", "--profile", "org"}, 0, []string{
			"Note: profile org is defined by the managed settings (managed settings, " + managed, "fails elsewhere"}, []string{"switchboard-org"}},
		{"projects-entry profile, local scope", []string{"--client", "claude-code", "--scope", "local", "--profile", "here"}, 0, nil, []string{"switchboard-here"}},
		{"--settings profile, local scope", []string{"--client", "claude-code", "--scope", "local", "--settings", `{"profiles": {"flagged": {}}}`, "--profile", "flagged"}, ExitUsage, []string{
			`profile "flagged" is defined by --settings only (flag settings, --settings:1:14), which the entry does not pass`}, nil},
		{"every profile, project scope", []string{"--client", "cursor", "--scope", "project", "--all-profiles"}, 0, []string{
			"Left out profile here: it is defined in your own settings only", "Left out profile mine: it is defined in your own settings only",
			"Note: profile org is defined by the managed settings"}, []string{"switchboard-shared", "switchboard-org"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "client.json")
			io, _, _, errOut := Test()
			getenv := func(k string) (string, bool) {
				if k == "SWITCHBOARD_MANAGED_DIR" {
					return managed, true
				}
				return "", false
			}
			fac := &Factory{IO: io, Getenv: getenv, HomeDir: w.home, Cwd: w.ws, Now: time.Now}
			args := append([]string{"mcp", "install-gateway", "--file", file, "--command", "/usr/local/bin/switchboard"}, tc.args...)
			if code := Run(context.Background(), fac, args); code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.code, errOut)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errOut.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			b, err := os.ReadFile(file)
			if tc.entries == nil {
				if err == nil {
					t.Errorf("refused, yet the file was written:\n%s", b)
				}
				return
			}
			// Local scope nests its entries under the workspace's
			// "projects" entry: the names are looked for as keys.
			for _, name := range []string{"switchboard-mine", "switchboard-here", "switchboard-shared", "switchboard-org"} {
				if got, want := strings.Contains(string(b), `"`+name+`":`), slices.Contains(tc.entries, name); got != want {
					t.Errorf("entry %s written: %v, want %v:\n%s", name, got, want, b)
				}
			}
		})
	}
}
