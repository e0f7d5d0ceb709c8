package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"
)

// TestImportURLCredentials: a url that carries several credentials in its
// query is imported into the shared .mcp.json with none of them: each
// becomes its own ${VAR}, and the report names every one.
func TestImportURLCredentials(t *testing.T) {
	c := newImportAttack(t)
	c.writeJSON(filepath.Join(c.home, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"hosted": map[string]any{"url": "https://x.example/mcp?api_key=AAAA1111aaaa&profile=p&token=BBBB2222bbbb"},
	}})
	rep := c.importJSON(c.proj, "--from", "cursor", "--scope", "project")
	if len(rep.Imported) != 1 {
		t.Fatalf("imported %+v, skipped %+v", rep.Imported, rep.Skipped)
	}
	b, _ := os.ReadFile(filepath.Join(c.proj, ".mcp.json"))
	want := `"url": "https://x.example/mcp?api_key=${HOSTED_API_KEY}&profile=p&token=${HOSTED_TOKEN}"`
	if !strings.Contains(string(b), want) || strings.Contains(string(b), "AAAA1111aaaa") || strings.Contains(string(b), "BBBB2222bbbb") {
		t.Errorf(".mcp.json does not hold %s, or holds a credential:\n%s", want, b)
	}
	notes := strings.Join(rep.Imported[0].Notes, "\n")
	for _, v := range []string{"set HOSTED_API_KEY", "set HOSTED_TOKEN"} {
		if !strings.Contains(notes, v) {
			t.Errorf("the notes do not say %q:\n%s", v, notes)
		}
	}
	if strings.Contains(notes, "AAAA1111aaaa") || strings.Contains(notes, "BBBB2222bbbb") {
		t.Errorf("the notes show a credential:\n%s", notes)
	}
}

// serversOf returns the servers of a Switchboard file, each compacted.
func serversOf(t *testing.T, path string, objPath ...string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if std, err := hujson.Standardize(b); err == nil {
		b = std
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	var cur any = doc
	for _, k := range objPath {
		cur, _ = cur.(map[string]any)[k]
	}
	out := map[string]string{}
	for name, def := range cur.(map[string]any)["mcpServers"].(map[string]any) {
		b, _ := json.Marshal(def)
		out[name] = string(b)
	}
	return out
}

func noteOf(rep importReport, name string) string {
	for _, e := range rep.Imported {
		if e.Name == name {
			return strings.Join(e.Notes, "\n")
		}
	}
	return ""
}

// TestImportFromWindsurf: Windsurf's own file, comments and all, with its
// "serverUrl" remote servers, is imported into local scope; the stdio one
// runs.
func TestImportFromWindsurf(t *testing.T) {
	c := newImportAttack(t)
	echo, _ := json.Marshal(c.server("echo"))
	file := filepath.Join(c.home, ".codeium", "windsurf", "mcp_config.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{
  // Cascade's servers
  "mcpServers": {
    "local": `+string(echo)+`,
    "remote": {"serverUrl": "https://mcp.example.com/mcp", "headers": {"X-Team": "${env:TEAM}"}},
    "legacy": {"serverUrl": "https://old.example.com/sse", "disabled": true, "disabledTools": ["delete_*"]},
    "plain": {"url": "https://plain.example.com/mcp"},
    "fromfile": {"serverUrl": "https://f.example.com/mcp", "headers": {"Authorization": "Bearer ${file:/run/secrets/tok}"}},
  }
}`), 0o600)
	// The file written into keeps its comments and other entries.
	userFile := filepath.Join(c.sb, "mcp.json")
	os.MkdirAll(c.sb, 0o700)
	os.WriteFile(userFile, []byte("{\n  // mine, keep me\n  \"mcpServers\": {\"mine\": {\"command\": \"x\"}}\n}\n"), 0o600)
	rep := c.importJSON(c.proj, "--from", "windsurf")
	if len(rep.Imported) != 4 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "uses ${file:/run/secrets/tok}, which Switchboard does not expand") {
		t.Fatalf("imported %+v, skipped %+v", rep.Imported, rep.Skipped)
	}
	if b, _ := os.ReadFile(userFile); !strings.Contains(string(b), "// mine, keep me") || !strings.Contains(string(b), `"mine"`) {
		t.Errorf("the user file lost its comment or entry:\n%s", b)
	}
	got := serversOf(t, filepath.Join(c.sb, "mcp.json"), "projects", c.proj)
	for name, want := range map[string]string{
		"remote": `{"headers":{"X-Team":"${TEAM}"},"url":"https://mcp.example.com/mcp"}`,
		"legacy": `{"disabledTools":["delete_*"],"enabled":false,"type":"sse","url":"https://old.example.com/sse"}`,
		"plain":  `{"url":"https://plain.example.com/mcp"}`,
	} {
		if got[name] != want {
			t.Errorf("%s = %s, want %s", name, got[name], want)
		}
	}
	c.want.Server = "local"
	if st := c.status(); st["state"] != "connected" {
		t.Errorf("local is %v (%v), want connected", st["state"], st["error"])
	}
	// A missing file says where it looked.
	os.Remove(file)
	_, errOut, code := c.run("mcp", "import", "--from", "windsurf")
	if code == 0 || !strings.Contains(errOut, filepath.Join("~", ".codeium", "windsurf", "mcp_config.json")) {
		t.Errorf("no file: exit %d: %s", code, errOut)
	}
}

// TestImportFromGemini: Gemini CLI's settings, the user's and the
// project's. httpUrl is Streamable HTTP and url SSE; $NAME becomes
// ${NAME}; includeTools and excludeTools the tool filter; "trust": true is
// not an approval and the report says so; what Switchboard cannot do is
// reported. The project's .gemini/settings.json is the repository's: its
// server goes to project scope needing approval.
func TestImportFromGemini(t *testing.T) {
	c := newImportAttack(t)
	user := filepath.Join(c.home, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(user), 0o755)
	os.WriteFile(user, []byte(`{
  "theme": "Dracula", // Gemini's other settings stay Gemini's
  "mcp": {"excluded": ["off"]},
  "mcpServers": {
    "api": {"httpUrl": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer $API_TOKEN"}, "timeout": 5000, "trust": true},
    "events": {"url": "https://events.example.com/events"},
    "py": {"command": "python3", "args": ["-m", "srv", "$1"], "env": {"DB": "$DB_URL", "K": "${KEY}"}, "cwd": "/srv/py",
           "includeTools": ["read_file"], "excludeTools": ["delete_file"], "description": "py tools"},
    "off": {"command": "x"},
    "gcp": {"httpUrl": "https://x.run.app/mcp", "authProviderType": "google_credentials", "oauth": {"scopes": ["s"]}},
    "signin": {"httpUrl": "https://signin.example.com/mcp", "oauth": {"enabled": true}},
    "ws": {"tcp": "ws://localhost:9000"}
  }
}`), 0o600)
	c.writeJSON(filepath.Join(c.proj, ".gemini", "settings.json"), map[string]any{
		"mcp":        map[string]any{"allowed": []string{"evil"}},
		"mcpServers": map[string]any{"evil": c.evil(), "other": map[string]any{"command": "y"}},
	})

	rep := c.importJSON(c.proj, "--from", "gemini")
	got := map[string]string{}
	for _, e := range rep.Imported {
		got[e.Name] = e.Scope + " " + e.Author
	}
	want := map[string]string{"api": "local user", "events": "local user", "py": "local user", "off": "local user", "signin": "local user", "evil": "project repository", "other": "project repository"}
	if !equalMaps(got, want) {
		t.Errorf("imported %v, want %v (skipped %+v)", got, want, rep.Skipped)
	}
	skipped := map[string]string{}
	for _, e := range rep.Skipped {
		skipped[e.Name] = e.Reason
	}
	if len(skipped) != 2 || !strings.Contains(skipped["gcp"], `"google_credentials"`) || !strings.Contains(skipped["ws"], "over a WebSocket") {
		t.Errorf("skipped %v, want gcp for its google_credentials and ws for its WebSocket", skipped)
	}
	defs := serversOf(t, filepath.Join(c.sb, "mcp.json"), "projects", c.proj)
	for name, want := range map[string]string{
		"api":    `{"headers":{"Authorization":"Bearer ${API_TOKEN}"},"timeout":5000,"type":"http","url":"https://api.example.com/mcp"}`,
		"events": `{"type":"sse","url":"https://events.example.com/events"}`,
		"py":     `{"args":["-m","srv","$1"],"command":"python3","cwd":"/srv/py","description":"py tools","disabledTools":["delete_file"],"enabledTools":["read_file"],"env":{"DB":"${DB_URL}","K":"${KEY}"}}`,
		"off":    `{"command":"x","enabled":false}`,
		"signin": `{"type":"http","url":"https://signin.example.com/mcp"}`,
	} {
		if defs[name] != want {
			t.Errorf("%s = %s, want %s", name, defs[name], want)
		}
	}
	for name, want := range map[string]string{
		"api":    `"trust": true (Gemini runs its tools without asking) was not imported`,
		"events": `Gemini's "url" is an SSE endpoint`,
		"py":     "Gemini's $NAME became ${NAME}",
		"off":    `Gemini's "mcp.excluded" lists it`,
		"signin": "run switchboard mcp login signin",
		"evil":   "written by the repository, needs approval",
		"other":  `Gemini's "mcp.allowed" does not list it: imported disabled`,
	} {
		if n := noteOf(rep, name); !strings.Contains(n, want) {
			t.Errorf("%s: notes %q, want %q", name, n, want)
		}
	}
	c.want.Server = "evil"
	if st := c.status(); st["state"] != "needs-approval" || st["scope"] != "project" {
		t.Errorf("evil is %v in %v scope, want needs-approval in project scope", st["state"], st["scope"])
	}
	c.noMarker("status")
	// Into your own scope only on a terminal, once confirmed: without
	// one it is skipped.
	rep = c.importJSON(c.proj, "--from", "gemini", "--scope", "user", "--force")
	for _, e := range rep.Imported {
		if e.Name == "evil" {
			t.Errorf("the repository's server was imported into user scope without a terminal: %+v", e)
		}
	}
}

// TestImportCmdWrapper: a definition written for Windows (cmd /c npx …)
// is imported elsewhere as the command inside, with a note, and runs; one
// whose command line only cmd can read is skipped with the reason.
func TestImportCmdWrapper(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows cmd /c is kept as written")
	}
	c := newImportAttack(t)
	echo := c.server("echo")
	args := append([]any{"/c", echo["command"]}, anySlice(echo["args"].([]string))...)
	c.writeJSON(filepath.Join(c.home, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"win":   map[string]any{"command": "cmd", "args": args},
		"line":  map[string]any{"command": "cmd.exe", "args": []string{"/s", "/c", "npx -y @acme/mcp"}},
		"piped": map[string]any{"command": "cmd", "args": []string{"/c", "npx", "-y", "@acme/mcp", "2>nul"}},
	}})
	rep := c.importJSON(c.proj, "--from", "cursor")
	if len(rep.Imported) != 2 || len(rep.Skipped) != 1 || rep.Skipped[0].Name != "piped" || !strings.Contains(rep.Skipped[0].Reason, "written for Windows") {
		t.Fatalf("imported %+v, skipped %+v; want win and line, piped skipped", rep.Imported, rep.Skipped)
	}
	defs := serversOf(t, filepath.Join(c.sb, "mcp.json"), "projects", c.proj)
	if want := `{"args":["-y","@acme/mcp"],"command":"npx"}`; defs["line"] != want {
		t.Errorf("line = %s, want %s", defs["line"], want)
	}
	if n := noteOf(rep, "line"); !strings.Contains(n, "written for Windows as cmd.exe /s /c 'npx -y @acme/mcp': imported as npx -y @acme/mcp") {
		t.Errorf("line: notes %q", n)
	}
	c.want.Server = "win"
	if st := c.status(); st["state"] != "connected" {
		t.Errorf("win is %v (%v), want connected", st["state"], st["error"])
	}
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func TestUnwrapCmd(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    []string
		why     string
	}{
		{"cmd", []string{"/c", "npx", "-y", "pkg"}, []string{"npx", "-y", "pkg"}, ""},
		{`C:\Windows\System32\CMD.EXE`, []string{"/C", "uvx", "srv"}, []string{"uvx", "srv"}, ""},
		{"cmd", []string{"/c", "npx -y pkg"}, []string{"npx", "-y", "pkg"}, ""},
		{"cmd", []string{"/c", `"C:\Program Files\x.exe" a`}, nil, "does not take a command line of cmd's apart"},
		{"cmd", []string{"/c", "npx", "%APPDATA%\\x"}, nil, "its operators, %VAR%"},
		{"cmd", []string{"/k", "npx"}, nil, ""},
		{"cmd", []string{"/c"}, nil, ""},
		{"npx", []string{"/c", "x"}, nil, ""},
	} {
		got, ok, why := unwrapCmd(tc.command, tc.args)
		if !cmp.Equal(got, tc.want) || ok != (tc.want != nil) || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
			t.Errorf("unwrapCmd(%q, %q) = %q, %v, %q; want %q, %q", tc.command, tc.args, got, ok, why, tc.want, tc.why)
		}
	}
}

// TestImportVSCodeEditions: --from vscode-insiders reads VS Code
// Insiders' user mcp.json; each reading names the other edition's file
// and the profiles' (User/profiles/<id>/mcp.json, by the name VS Code
// shows), which --file then imports.
func TestImportVSCodeEditions(t *testing.T) {
	c := newImportAttack(t)
	f, _, _, _ := c.factory(false)
	dir := userConfigDir(f, runtime.GOOS)
	c.writeJSON(filepath.Join(dir, "Code - Insiders", "User", "mcp.json"), map[string]any{"servers": map[string]any{"ins": c.server("echo")}})
	c.writeJSON(filepath.Join(dir, "Code", "User", "mcp.json"), map[string]any{"servers": map[string]any{"stable": c.server("echo")}})
	profile := filepath.Join(dir, "Code", "User", "profiles", "-4f1c2a9", "mcp.json")
	c.writeJSON(profile, map[string]any{"servers": map[string]any{"work": c.server("echo")}})
	c.writeJSON(filepath.Join(dir, "Code", "User", "globalStorage", "storage.json"), map[string]any{
		"userDataProfiles": []any{map[string]any{"location": "-4f1c2a9", "name": "Work"}},
	})

	rep := c.importJSON(c.proj, "--from", "vscode-insiders")
	if len(rep.Imported) != 1 || rep.Imported[0].Name != "ins" {
		t.Errorf("--from vscode-insiders imported %+v, want ins", rep.Imported)
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "VS Code has servers of its own in ") || !strings.Contains(notes, "not imported: switchboard mcp import --from vscode") {
		t.Errorf("notes %q do not name VS Code's own file", notes)
	}
	rep = c.importJSON(c.proj, "--from", "vscode")
	if len(rep.Imported) != 1 || rep.Imported[0].Name != "stable" {
		t.Errorf("--from vscode imported %+v, want stable", rep.Imported)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{`VS Code profile "Work" has servers of its own`, "--from vscode --file ", "--from vscode-insiders"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q, want %q", notes, want)
		}
	}
	rep = c.importJSON(c.proj, "--from", "vscode", "--file", profile)
	if len(rep.Imported) != 1 || rep.Imported[0].Name != "work" || rep.Imported[0].Author != authorUser {
		t.Errorf("--file the profile's: imported %+v", rep.Imported)
	}
}

// TestImportVSCodeInputs: only an input declared "password": true becomes
// a secret; a setting VS Code prompts for becomes its default, or without
// one ${ID} from the environment (in args too), and the report says which.
// A server with an input the file does not declare, at which VS Code stops
// too, is skipped with the reason, not imported with a guessed secret.
func TestImportVSCodeInputs(t *testing.T) {
	c := newImportAttack(t)
	f, _, _, _ := c.factory(false)
	file := filepath.Join(userConfigDir(f, runtime.GOOS), "Code", "User", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
    {"type": "promptString", "id": "project", "description": "GCP project", "default": "my-proj"},
    {"type": "promptString", "id": "region", "description": "Region"},
    {"type": "pickString", "id": "tier", "options": ["free", "pro"], "default": "pro"}
  ],
  "servers": {
    "cloud": {
      "command": "cloud-mcp",
      "args": ["--project", "${input:project}", "--region=${input:region}"],
      "env": {"API_KEY": "${input:api-key}", "TIER": "${input:tier}"}
    },
    "stray": {"command": "stray-mcp", "env": {"API_KEY": "${input:api-key}", "TOKEN": "${input:other}"}}
  }
}`), 0o600)
	rep := c.importJSON(c.proj, "--from", "vscode")
	if len(rep.Imported) != 1 || len(rep.Skipped) != 1 || rep.Skipped[0].Name != "stray" ||
		!strings.Contains(rep.Skipped[0].Reason, `uses ${input:other}, which the file's "inputs" do not declare`) {
		t.Fatalf("imported %+v, skipped %+v; want cloud, and stray skipped for its undeclared input", rep.Imported, rep.Skipped)
	}
	defs := serversOf(t, filepath.Join(c.sb, "mcp.json"), "projects", c.proj)
	want := `{"args":["--project","my-proj","--region=${REGION}"],"command":"cloud-mcp","env":{"API_KEY":"${secret:api-key}","TIER":"pro"}}`
	if defs["cloud"] != want {
		t.Errorf("cloud = %s, want %s", defs["cloud"], want)
	}
	notes := noteOf(rep, "cloud")
	for _, w := range []string{
		`${input:project} (not a password) became its default "my-proj"`,
		"${input:region} (not a password) became ${REGION}: set REGION in your environment",
		"${input:api-key} became ${secret:api-key}",
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q, want %q", notes, w)
		}
	}
}

// TestImportProjectScopeNoMachinePaths: into the shared .mcp.json, a
// definition of your own file holds none of this machine's paths: the
// editor's variables and the workspace's and home's paths written out
// become relative paths and ${HOME}; one that cannot (your home as its
// cwd) is skipped with the reason.
func TestImportProjectScopeNoMachinePaths(t *testing.T) {
	c := newImportAttack(t)
	f, _, _, _ := c.factory(false)
	file := filepath.Join(userConfigDir(f, runtime.GOOS), "Code", "User", "mcp.json")
	c.writeJSON(file, map[string]any{"servers": map[string]any{
		"fs":  map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}", "${userHome}/notes"}},
		"lit": map[string]any{"command": "node", "args": []string{c.home + "/tools/srv.js", "--data=" + c.proj + "/data"}, "cwd": c.proj},
		"hc":  map[string]any{"command": "x", "cwd": c.home},
	}})
	rep := c.importJSON(c.proj, "--from", "vscode", "--scope", "project")
	if len(rep.Imported) != 2 || len(rep.Skipped) != 1 || rep.Skipped[0].Name != "hc" || !strings.Contains(rep.Skipped[0].Reason, "in its cwd") {
		t.Fatalf("imported %+v, skipped %+v; want fs and lit, hc skipped for its cwd", rep.Imported, rep.Skipped)
	}
	b, _ := os.ReadFile(filepath.Join(c.proj, ".mcp.json"))
	if strings.Contains(string(b), c.work) {
		t.Errorf("the shared .mcp.json names a path of this machine:\n%s", b)
	}
	defs := serversOf(t, filepath.Join(c.proj, ".mcp.json"))
	if want := `{"args":["${HOME}/tools/srv.js","--data=./data"],"command":"node","cwd":"."}`; defs["lit"] != want {
		t.Errorf("lit = %s, want %s", defs["lit"], want)
	}
	if n := noteOf(rep, "lit"); !strings.Contains(n, "this machine's paths (the workspace's, your home's) were read as") {
		t.Errorf("lit: notes %q", n)
	}
}

// TestImportGeminiRepoReview: a repository's Gemini server that asks to be
// trusted is shown, before the user confirms it into local scope, with
// the word that its trust is not imported; without a yes it is not.
func TestImportGeminiRepoReview(t *testing.T) {
	c := newImportAttack(t)
	evil := c.evil()
	evil["trust"] = true
	c.writeJSON(filepath.Join(c.proj, ".gemini", "settings.json"), map[string]any{"mcpServers": map[string]any{"evil": evil}})
	out, errOut, _ := c.runTerminal("n\n", "mcp", "import", "--from", "gemini", "--scope", "local")
	for _, want := range []string{
		"was written by the repository, not by you.",
		`"trust": true (Gemini runs its tools without asking) was not imported`,
		"Import it into local scope anyway?",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the review lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "  - evil: written by the repository, and you did not confirm it") {
		t.Errorf("a no does not skip it:\n%s", out)
	}
	c.run("status")
	c.noMarker("status")
}

// TestImportWithoutFromNamesWhatIsHere: a newcomer who runs mcp import
// without --from is told which tools keep servers on this machine, how
// many and where, with the command for each (exit 0; --json the same as
// objects); a file without servers is not offered; with none, it says so
// (exit 0: the README's first block runs it on such machines). The listings' "no servers" names them too.
func TestImportWithoutFromNamesWhatIsHere(t *testing.T) {
	c := newImportAttack(t)
	out, errOut, code := c.run("mcp", "import")
	if code != 0 || errOut != "" || !strings.Contains(out, "No other tool keeps MCP servers on this machine where Switchboard looks (Claude Code, ") ||
		!strings.Contains(out, "switchboard mcp import --from TOOL --file PATH") {
		t.Errorf("nothing to import: exit %d: %s%s", code, out, errOut)
	}
	if out, _, code := c.run("mcp", "import", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("nothing to import, --json: exit %d: %q", code, out)
	}
	write := func(rel, body string) {
		p := filepath.Join(c.home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".codeium/windsurf/mcp_config.json", `{"mcpServers": {"a": {"serverUrl": "https://a.example.com/mcp"}, "b": {"command": "npx"}}}`)
	write(".gemini/settings.json", `{"mcpServers": {"g": {"httpUrl": "https://g.example.com/mcp"}}}`)
	write(".cursor/mcp.json", `{"mcpServers": {}}`)
	windsurf := "  Windsurf (2 servers in " + filepath.Join("~", ".codeium", "windsurf", "mcp_config.json") + "): switchboard mcp import --from windsurf\n"
	gemini := "  Gemini CLI (1 server in " + filepath.Join("~", ".gemini", "settings.json") + "): switchboard mcp import --from gemini\n"
	out, errOut, code = c.run("mcp", "import")
	if want := "Tools that keep servers on this machine; import each with its command:\n" + windsurf + gemini; code != 0 || out != want {
		t.Errorf("exit %d: %q (stderr %s)\nwant %q", code, out, errOut, want)
	}
	out, _, code = c.run("mcp", "import", "--json")
	var got []importSource
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || len(got) != 2 ||
		got[0].From != "windsurf" || got[0].Servers != 2 || got[0].Files[0] != filepath.Join(c.home, ".codeium", "windsurf", "mcp_config.json") ||
		got[1].From != "gemini" || got[1].Servers != 1 {
		t.Errorf("--json: exit %d, %v: %s", code, err, out)
	}
	// The listings' "no servers" says so too, on stderr.
	for _, cmd := range [][]string{{"status"}, {"tools"}, {"mcp", "list"}} {
		_, errOut, _ = c.run(cmd...)
		if !strings.Contains(errOut, "No MCP servers are configured.") ||
			!strings.Contains(errOut, "\nOther tools keep servers on this machine; import them:\n"+windsurf+gemini) {
			t.Errorf("%s with no servers configured:\n%s", strings.Join(cmd, " "), errOut)
		}
	}
}

// TestImportWindsurfEditions: --from windsurf reads Windsurf Next's file
// and the one older versions kept in ~/.codeium as well as Windsurf's,
// each server said to come from its file; a server two files define alike
// is imported once, and for a name defined differently Windsurf's own
// wins. The listing without --from names every file.
func TestImportWindsurfEditions(t *testing.T) {
	c := newImportAttack(t)
	dir := filepath.Join(c.home, ".codeium")
	stable := filepath.Join(dir, "windsurf", "mcp_config.json")
	next := filepath.Join(dir, "windsurf-next", "mcp_config.json")
	old := filepath.Join(dir, "mcp_config.json")
	c.writeJSON(stable, map[string]any{"mcpServers": map[string]any{
		"local":  c.server("echo"),
		"shared": map[string]any{"serverUrl": "https://shared.example.com/mcp"},
		"clash":  map[string]any{"command": "stable-mcp"},
	}})
	os.MkdirAll(filepath.Dir(next), 0o755)
	os.WriteFile(next, []byte(`{
  // Windsurf Next's
  "mcpServers": {
    "shared": { "serverUrl":   "https://shared.example.com/mcp" },
    "clash": {"command": "next-mcp"},
    "nextonly": {"serverUrl": "https://next.example.com/mcp"}
  }
}`), 0o600)
	c.writeJSON(old, map[string]any{"mcpServers": map[string]any{"legacy": map[string]any{"command": "legacy-mcp"}}})

	tilde := func(p string) string { return "~" + strings.TrimPrefix(p, c.home) }
	out, errOut, code := c.run("mcp", "import", "--from", "windsurf")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Imported 5 of 6 Windsurf servers",
		"  + nextonly (from " + tilde(next) + ")\n",
		"  + legacy (from " + tilde(old) + ")\n",
		"  + shared (from " + tilde(stable) + ")\n",
		"the same definition is in " + tilde(next) + " too: imported once",
		"  - clash (from " + tilde(next) + "): overridden by the definition in " + tilde(stable) + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	defs := serversOf(t, filepath.Join(c.sb, "mcp.json"), "projects", c.proj)
	for name, want := range map[string]string{
		"clash":    `{"command":"stable-mcp"}`,
		"nextonly": `{"url":"https://next.example.com/mcp"}`,
		"legacy":   `{"command":"legacy-mcp"}`,
	} {
		if defs[name] != want {
			t.Errorf("%s = %s, want %s", name, defs[name], want)
		}
	}
	c.want.Server = "local"
	if st := c.status(); st["state"] != "connected" {
		t.Errorf("local is %v (%v), want connected", st["state"], st["error"])
	}

	// Nothing configured: the listing names the three files, and five
	// servers (the shared one once).
	os.Remove(filepath.Join(c.sb, "mcp.json"))
	out, errOut, code = c.run("mcp", "import")
	want := "  Windsurf (5 servers in " + strings.Join([]string{tilde(old), tilde(next), tilde(stable)}, ", ") + "): switchboard mcp import --from windsurf\n"
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d: %q (stderr %s)\nwant %q", code, out, errOut, want)
	}
}

// TestImportGeminiExtensions: --from gemini reads the servers of Gemini's
// extensions (~/.gemini/extensions/<name>/gemini-extension.json, a linked
// one's in the folder it links to) and of the administrator's system
// settings, as Gemini starts them: ${extensionPath} is the extension's
// folder, ${workspacePath} the workspace, ${/} the path separator; a
// settings file's server wins the extension's name, the system file's
// wins the user's; an extension disabled in this workspace has its
// servers imported disabled, as is one the user's settings exclude. Each
// file is named in the report and the listing.
func TestImportGeminiExtensions(t *testing.T) {
	c := newImportAttack(t)
	gem := filepath.Join(c.home, ".gemini")
	tools := filepath.Join(gem, "extensions", "tools")
	echo := c.server("echo")
	echo["cwd"] = "${extensionPath}"
	c.writeJSON(filepath.Join(tools, "gemini-extension.json"), map[string]any{
		"name": "tools", "version": "1.0.0",
		"settings": []any{map[string]any{"name": "Tools key", "envVar": "TOOLS_KEY", "sensitive": true}},
		"mcpServers": map[string]any{
			"runs": echo,
			"ext":  map[string]any{"command": "node", "args": []string{"${extensionPath}${/}server.js", "--root=${workspacePath}"}, "env": map[string]any{"TOOLS_KEY": "$TOOLS_KEY"}},
			"dup":  map[string]any{"command": "from-extension"},
		},
	})
	c.writeJSON(filepath.Join(gem, "extensions", "off", "gemini-extension.json"), map[string]any{
		"name": "off", "version": "1.0.0", "mcpServers": map[string]any{"offsrv": map[string]any{"command": "off-mcp"}},
	})
	c.writeJSON(filepath.Join(gem, "extensions", "extension-enablement.json"), map[string]any{
		"off": map[string]any{"overrides": []string{"!" + filepath.ToSlash(c.proj) + "/*"}},
	})
	linkedSrc := filepath.Join(c.work, "dev", "linked")
	c.writeJSON(filepath.Join(gem, "extensions", "linked", ".gemini-extension-install.json"), map[string]any{"source": linkedSrc, "type": "link"})
	c.writeJSON(filepath.Join(linkedSrc, "gemini-extension.json"), map[string]any{
		"name": "linked", "version": "0.1.0", "mcpServers": map[string]any{"lnk": map[string]any{"command": "${extensionPath}/bin/srv"}},
	})
	// Your settings' "mcp.excluded" holds for an extension's server too;
	// the repository's does not.
	user := filepath.Join(gem, "settings.json")
	c.writeJSON(user, map[string]any{"mcp": map[string]any{"excluded": []string{"lnk"}}, "mcpServers": map[string]any{
		"dup":  map[string]any{"command": "from-settings"},
		"corp": map[string]any{"command": "mine"},
	}})
	c.writeJSON(filepath.Join(c.proj, ".gemini", "settings.json"), map[string]any{"mcp": map[string]any{"excluded": []string{"ext"}}})
	system := filepath.Join(c.work, "gemini-system", "settings.json") // GEMINI_CLI_SYSTEM_SETTINGS_PATH
	c.writeJSON(system, map[string]any{"mcpServers": map[string]any{"corp": map[string]any{"httpUrl": "https://corp.example.com/mcp"}}})

	rep := c.importJSON(c.proj, "--from", "gemini")
	files := map[string]string{}
	for _, e := range rep.Imported {
		files[e.Name] = e.File
	}
	ext := filepath.Join(tools, "gemini-extension.json")
	want := map[string]string{
		"runs": ext, "ext": ext, "offsrv": filepath.Join(gem, "extensions", "off", "gemini-extension.json"),
		"lnk": filepath.Join(linkedSrc, "gemini-extension.json"), "dup": user, "corp": system,
	}
	if !equalMaps(files, want) {
		t.Errorf("imported %v, want %v (skipped %+v)", files, want, rep.Skipped)
	}
	skipped := map[string]string{}
	for _, e := range rep.Skipped {
		skipped[e.Name+" "+e.File] = e.Reason
	}
	if r := skipped["dup "+ext]; !strings.Contains(r, "overridden by the definition in ~") {
		t.Errorf("the extension's dup: %q, want overridden by the settings'", r)
	}
	if r := skipped["corp "+user]; !strings.Contains(r, "overridden by the definition in "+system) {
		t.Errorf("the user's corp: %q, want overridden by the system settings'", r)
	}
	defs := serversOf(t, filepath.Join(c.sb, "mcp.json"), "projects", c.proj)
	sep := string(filepath.Separator)
	for name, want := range map[string]string{
		"ext":    `{"args":["` + tools + sep + `server.js","--root=` + c.proj + `"],"command":"node","env":{"TOOLS_KEY":"${TOOLS_KEY}"}}`,
		"lnk":    `{"command":"` + linkedSrc + `/bin/srv","enabled":false}`,
		"dup":    `{"command":"from-settings"}`,
		"corp":   `{"type":"http","url":"https://corp.example.com/mcp"}`,
		"offsrv": `{"command":"off-mcp","enabled":false}`,
	} {
		if defs[name] != want {
			t.Errorf("%s = %s, want %s", name, defs[name], want)
		}
	}
	for _, tc := range [][2]string{
		{"ext", "Gemini's ${workspacePath} was read as ${workspaceFolder}"},
		{"ext", `${TOOLS_KEY} is the extension's setting "Tools key", which Gemini kept for it in its keychain and Switchboard reads from your environment`},
		{"lnk", "Gemini's ${extensionPath} became the extension's folder, " + linkedSrc + "\n" + `Gemini's "mcp.excluded" lists it: imported disabled`},
		{"offsrv", `Gemini's extension "off" is disabled in this workspace (its extension-enablement.json): imported disabled`},
	} {
		if n := noteOf(rep, tc[0]); !strings.Contains(n, tc[1]) {
			t.Errorf("%s: notes %q, want %q", tc[0], n, tc[1])
		}
	}
	c.want.Server = "runs"
	if st := c.status(); st["state"] != "connected" {
		t.Errorf("runs is %v (%v), want connected", st["state"], st["error"])
	}

	// In user scope, every workspace's, the workspace's path cannot be
	// written: ext is skipped, and says it is Gemini's ${workspacePath}.
	rep = c.importJSON(c.proj, "--from", "gemini", "--scope", "user")
	for _, e := range rep.Skipped {
		if e.Name == "ext" && !strings.Contains(e.Reason, "Gemini's ${workspacePath}") {
			t.Errorf("ext in user scope: %q", e.Reason)
		}
	}

	// The listing names every file.
	os.Remove(filepath.Join(c.sb, "mcp.json"))
	out, _, _ := c.run("mcp", "import")
	for _, f := range []string{"~" + strings.TrimPrefix(ext, c.home), linkedSrc, system, "~" + strings.TrimPrefix(user, c.home)} {
		if !strings.Contains(out, f) {
			t.Errorf("the listing does not name %s:\n%s", f, out)
		}
	}
	if !strings.Contains(out, "Gemini CLI (6 servers in ") {
		t.Errorf("the listing does not count 6 Gemini servers:\n%s", out)
	}
}

// TestImportGeminiEnvCase: Gemini expands $name and ${name} from the
// environment variable of exactly that name. Upper-case ones are
// Switchboard's ${NAME}; one with lower-case letters is another variable
// to Switchboard, which expands only upper-case names, so outside Windows
// (where names ignore case) the server is skipped with the reason rather
// than imported reading a variable it did not.
func TestImportGeminiEnvCase(t *testing.T) {
	c := newImportAttack(t)
	c.writeJSON(filepath.Join(c.home, ".gemini", "settings.json"), map[string]any{"mcpServers": map[string]any{
		"upper": map[string]any{"httpUrl": "https://u.example.com/mcp", "headers": map[string]any{"Authorization": "Bearer $API_TOKEN", "X-Org": "${ORG}"}},
		"lower": map[string]any{"httpUrl": "https://l.example.com/mcp", "headers": map[string]any{"Authorization": "Bearer $api_token"}},
		"brace": map[string]any{"command": "x", "env": map[string]any{"K": "${my_key}"}},
		"mixed": map[string]any{"command": "x", "args": []string{"--token=$API_TOKENx", "$1"}},
	}})
	rep := c.importJSON(c.proj, "--from", "gemini")
	skipped := map[string]string{}
	for _, e := range rep.Skipped {
		skipped[e.Name] = e.Reason
	}
	if runtime.GOOS == "windows" {
		t.Skip("on Windows $api_token is ${API_TOKEN}: TestGeminiRefs")
	}
	if len(rep.Imported) != 1 || rep.Imported[0].Name != "upper" {
		t.Errorf("imported %+v, want upper only", rep.Imported)
	}
	for name, want := range map[string]string{
		"lower": "uses $api_token, which Gemini reads from the environment variable of exactly that name; Switchboard expands only upper-case names (${API_TOKEN})",
		"brace": "uses ${my_key}, which Gemini reads",
		"mixed": "uses $API_TOKENx, which Gemini reads",
	} {
		if !strings.Contains(skipped[name], want) {
			t.Errorf("%s: skipped %q, want %q", name, skipped[name], want)
		}
	}
	defs := serversOf(t, filepath.Join(c.sb, "mcp.json"), "projects", c.proj)
	if want := `{"headers":{"Authorization":"Bearer ${API_TOKEN}","X-Org":"${ORG}"},"type":"http","url":"https://u.example.com/mcp"}`; defs["upper"] != want {
		t.Errorf("upper = %s, want %s", defs["upper"], want)
	}
}

func TestGeminiRefs(t *testing.T) {
	for _, tc := range []struct {
		in, goos, want string
		other          []string
	}{
		{"Bearer $API_TOKEN", "linux", "Bearer ${API_TOKEN}", nil},
		{"${KEY}/$_X", "linux", "${KEY}/${_X}", nil},
		{"$1 and $2x", "linux", "$1 and $2x", nil},
		{"$api_token", "linux", "$api_token", []string{"$api_token"}},
		{"${my_key}", "darwin", "${my_key}", []string{"${my_key}"}},
		{"$api_token ${my_key}", "windows", "${API_TOKEN} ${MY_KEY}", nil},
		{"${A:-b} ${env:X} ${workspaceFolder} ${a-b}", "linux", "${A:-b} ${env:X} ${workspaceFolder} ${a-b}", nil},
		{"$$", "linux", "$$", nil},
	} {
		var r geminiRefs
		got := r.rewrite(tc.in, tc.goos)
		if got != tc.want || !cmp.Equal(r.other, tc.other) {
			t.Errorf("rewrite(%q, %s) = %q, other %q; want %q, %q", tc.in, tc.goos, got, r.other, tc.want, tc.other)
		}
	}
}

func TestGeminiExtensionOff(t *testing.T) {
	file := filepath.Join(t.TempDir(), "extension-enablement.json")
	os.WriteFile(file, []byte(`{"x": {"overrides": ["!/home/u/*", "/home/u/work/"]}, "y": {"overrides": ["!/home/u/a/"]}}`), 0o600)
	for _, tc := range []struct {
		name, root string
		off        bool
	}{
		{"x", "/home/u/proj", true},
		{"x", "/home/u", true},
		{"x", "/home/u/work", false},
		{"x", "/home/u/work/sub", true},
		{"x", "/srv", false},
		{"y", "/home/u/a", true},
		{"y", "/home/u/a/b", false},
		{"z", "/home/u", false},
	} {
		if got := geminiExtensionOff(file, tc.name, tc.root) != ""; got != tc.off {
			t.Errorf("geminiExtensionOff(%s, %s) off = %v, want %v", tc.name, tc.root, got, tc.off)
		}
	}
}

// TestImportGeminiLinkedExtensionInRepo: an extension linked in from a
// checkout (gemini extensions link .) has its manifest in the repository,
// which wrote it: its server is imported as the repository's, into
// project scope, where it needs approval before it starts.
func TestImportGeminiLinkedExtensionInRepo(t *testing.T) {
	c := newImportAttack(t)
	src := filepath.Join(c.proj, "ext")
	c.writeJSON(filepath.Join(src, "gemini-extension.json"), map[string]any{
		"name": "repo-ext", "version": "1.0.0", "mcpServers": map[string]any{"evil": c.evil()},
	})
	c.writeJSON(filepath.Join(c.home, ".gemini", "extensions", "repo-ext", ".gemini-extension-install.json"), map[string]any{"source": src, "type": "link"})
	rep := c.importJSON(c.proj, "--from", "gemini")
	if len(rep.Imported) != 1 || rep.Imported[0].Author != authorRepo || rep.Imported[0].Scope != "project" {
		t.Fatalf("imported %+v, skipped %+v; want evil as the repository's, in project scope", rep.Imported, rep.Skipped)
	}
	c.want.Server = "evil"
	if st := c.status(); st["state"] != "needs-approval" {
		t.Errorf("evil is %v, want needs-approval", st["state"])
	}
	c.noMarker("status")
}

// TestImportGeminiNothingFound: with no Gemini file, the error names where
// it looked: every extension's manifest by its pattern (not Gemini's
// extension-enablement.json taken for an extension), and each settings
// file.
func TestImportGeminiNothingFound(t *testing.T) {
	c := newImportAttack(t)
	c.writeJSON(filepath.Join(c.home, ".gemini", "extensions", "extension-enablement.json"), map[string]any{})
	_, errOut, code := c.run("mcp", "import", "--from", "gemini")
	want := "looked for " + strings.Join([]string{
		filepath.Join("~", ".gemini", "extensions", "*", "gemini-extension.json"),
		filepath.Join(c.work, "gemini-system", "system-defaults.json"),
		filepath.Join("~", ".gemini", "settings.json"),
		filepath.Join(c.proj, ".gemini", "settings.json"),
		filepath.Join(c.work, "gemini-system", "settings.json"),
	}, ", ")
	if code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s\nwant %q", code, errOut, want)
	}
}
