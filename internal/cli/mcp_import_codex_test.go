package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mcp import --from codex reads what `codex mcp list --json` prints: the
// user's servers (listed from the home directory) into user scope, each
// definition translated (a bearer token's variable, headers, timeouts,
// enabled); in a trusted project, what its .codex/config.toml adds goes to
// project scope, needing approval, and one that redefines a name of the
// user's is skipped; the gateway's own entry and an illegal name are
// skipped with the reason. Codex itself (424 MB) is not in the npm test
// lockfile: a `codex` script on PATH prints what Codex 0.171.0 printed
// (testdata/codex/README.md).
func TestImportFromCodex(t *testing.T) {
	w := newRTWorld(t)
	fixtures, _ := filepath.Abs(filepath.Join("testdata", "codex"))
	bin := filepath.Join(w.work, "bin")
	os.MkdirAll(bin, 0o755)
	// `codex mcp get NAME --json` (get-home/NAME.json, get-project/…, a
	// space in NAME as _)
	// carries the tool filters the list leaves out; for hdr it fails, as
	// a Codex without it would.
	script := "#!/bin/sh\n" +
		"echo 'WARNING: proceeding, even though we could not create PATH aliases' >&2\n" +
		"where=project; [ \"$(pwd -P)\" = \"$(cd \"$HOME\" && pwd -P)\" ] && where=home\n" +
		"if [ \"$1 $2 $4 $#\" = \"mcp get --json 4\" ] && [ \"$3\" != hdr ]; then cat \"" + fixtures + "/get-$where/$(echo \"$3\" | tr ' ' _).json\"; exit; fi\n" +
		"[ \"$*\" = \"mcp list --json\" ] || { echo \"unexpected: $*\" >&2; exit 2; }\n" +
		"if [ $where = home ]; then cat " + filepath.Join(fixtures, "mcp-list-home.json") +
		"; else cat " + filepath.Join(fixtures, "mcp-list-project.json") + "; fi\n"
	os.WriteFile(filepath.Join(bin, "codex"), []byte(script), 0o755)
	b, _ := os.ReadFile(filepath.Join(fixtures, "config.toml"))
	os.MkdirAll(filepath.Join(w.home, ".codex"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".codex", "config.toml"), b, 0o600)
	os.MkdirAll(filepath.Join(w.proj, ".codex"), 0o755)
	b, _ = os.ReadFile(filepath.Join(fixtures, "project-config.toml"))
	os.WriteFile(filepath.Join(w.proj, ".codex", "config.toml"), b, 0o644)

	cwd := w.proj
	run := func(path string, args ...string) (string, string, int) {
		t.Helper()
		ios, _, out, errOut := Test()
		env := map[string]string{"HOME": w.home, "SWITCHBOARD_HOME": w.sb, "PATH": path}
		f := &Factory{IO: ios, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			HomeDir: w.home, Cwd: cwd, Now: time.Now, Global: &GlobalOptions{Wait: DefaultWait, LogLevel: "warn"}}
		t.Setenv("HOME", w.home) // what the script compares its directory with
		code := Run(context.Background(), f, args)
		return out.String(), errOut.String(), code
	}
	out, errOut, code := run(bin+":/usr/bin:/bin", "mcp", "import", "--from", "codex", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep importReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, e := range rep.Imported {
		got[e.Name] = e.Scope + " " + e.Author
	}
	want := map[string]string{"cw": "user user", "ev": "user user", "hdr": "user user", "remote": "user user", "withenv": "user user", "repo_srv": "project repository"}
	if !equalMaps(got, want) {
		t.Errorf("imported %v, want %v", got, want)
	}
	skipped := map[string]string{}
	for _, e := range rep.Skipped {
		skipped[e.Name+" "+e.Author] = e.Reason
	}
	for k, reason := range map[string]string{
		"sb review user":   "illegal server name",
		"switchboard user": "it runs the Switchboard gateway",
		"ev repository":    "the repository's definition has the name of yours",
	} {
		if !strings.Contains(skipped[k], reason) {
			t.Errorf("skipped %s: %q, want %q (all: %v)", k, skipped[k], reason, skipped)
		}
	}

	// Each as Codex had it, in Switchboard's words.
	b, _ = os.ReadFile(filepath.Join(w.sb, "mcp.json"))
	var file struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for name, parts := range map[string][]string{
		"remote": {`"type":"http"`, `"url":"https://api.example.com/mcp"`, `"headers":{"Authorization":"Bearer ${GH_TOKEN}"}`},
		"hdr":    {`"X-Key":"${HDR_KEY}"`, `"X-Team":"core"`, `"enabled":false`},
		"cw": {`"command":"python3"`, `"cwd":"/srv/x"`, `"env_passthrough":["HOME_DIR"]`, `"startup_timeout":30000`, `"timeout":90000`,
			`"enabledTools":["read_file","list_dir"]`, `"disabledTools":["delete_file"]`},
		"withenv": {`"env":{"API_KEY":"abc123","MODE":"x"}`},
	} {
		var c bytes.Buffer
		json.Compact(&c, file.MCPServers[name])
		for _, p := range parts {
			if !strings.Contains(c.String(), p) {
				t.Errorf("%s: %s, want %s", name, c.String(), p)
			}
		}
	}
	b, _ = os.ReadFile(filepath.Join(w.proj, ".mcp.json"))
	if !strings.Contains(string(b), `"repo_srv"`) || strings.Contains(string(b), `"evil"`) || !strings.Contains(string(b), `"disabledTools": ["rm"]`) {
		t.Errorf("the project's .mcp.json: %s", b)
	}
	// What Codex could not say is said, not taken as nothing.
	for name, want := range map[string]string{
		"cw":  "Codex's enabled_tools/disabled_tools became enabledTools/disabledTools",
		"hdr": "its enabled_tools/disabled_tools, if it has any, could not be read (codex mcp get hdr --json failed)",
	} {
		if n := noteOf(rep, name); !strings.Contains(n, want) {
			t.Errorf("%s: notes %q, want %q", name, n, want)
		}
	}

	// Outside any workspace, as Codex's servers are the user's own, they
	// still go to user scope (local scope, the default, needs a workspace).
	cwd = w.work
	out, errOut, code = run(bin+":/usr/bin:/bin", "mcp", "import", "--from", "codex", "--force", "--json")
	rep = importReport{}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Imported) != 5 || rep.Imported[0].Scope != "user" {
		t.Errorf("outside a workspace: exit %d, %v: %s %s", code, err, out, errOut)
	}
	cwd = w.proj

	// Without codex on PATH, it says what to install.
	_, errOut, code = run("/nonexistent", "mcp", "import", "--from", "codex")
	if code == 0 || !strings.Contains(errOut, "codex is not on your PATH") || !strings.Contains(errOut, "npm install -g @openai/codex") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	// A codex in the current directory (the workspace) is never run, even
	// with "." on PATH.
	os.WriteFile(filepath.Join(w.proj, "codex"), []byte("#!/bin/sh\ntouch "+filepath.Join(w.work, "planted-ran")+"\n"), 0o755)
	t.Chdir(w.proj)
	if _, errOut, code = run(".:/nonexistent", "mcp", "import", "--from", "codex"); code == 0 || !strings.Contains(errOut, "codex is not on your PATH") {
		t.Errorf("with . on PATH: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(w.work, "planted-ran")); err == nil {
		t.Errorf("the workspace's codex ran")
	}
	// --file is Codex's to read.
	if _, errOut, code = run(bin, "mcp", "import", "--from", "codex", "--file", "x.toml"); code != 2 {
		t.Errorf("--file: exit %d: %s", code, errOut)
	}
}

// Whatever `codex mcp list --json` prints, each server it holds becomes a
// JSON object the import then checks as any definition, never a panic.
func FuzzCodexDef(f *testing.F) {
	for _, name := range []string{"mcp-list-home.json", "mcp-list-project.json"} {
		b, _ := os.ReadFile(filepath.Join("testdata", "codex", name))
		f.Add(b)
	}
	f.Add([]byte(`[{"name":"x","transport":{"type":"streamable_http","url":"u","env_http_headers":{"A":"B"}},"startup_timeout_sec":1e308,"tool_timeout_sec":-1}]`))
	f.Fuzz(func(t *testing.T, out []byte) {
		var servers []codexServer
		if json.Unmarshal(out, &servers) != nil {
			return
		}
		for _, s := range servers {
			def, _ := codexDef(s)
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(def, &obj); err != nil {
				t.Fatalf("%+v gave %s: %v", s, def, err)
			}
		}
	})
}
