package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// `mcp import --from claude-code` reads what Claude Code itself wrote
// (`claude mcp add` into a temporary HOME): its user-scope servers land in
// user scope, this workspace's local-scope ones in local scope, each as
// it was (command, arguments, environment, url, headers); Claude Code's
// project scope is the .mcp.json Switchboard reads already, said once.
// With CLAUDE_CONFIG_DIR set, Claude Code keeps its file there, and so
// import reads and install-gateway writes it there; the gateway's own
// entry is never imported.
func TestImportFromClaudeCode(t *testing.T) {
	p := npmtest.Install(t)
	w := newGatewayWorld(t)
	claude := func(args ...string) {
		t.Helper()
		runClient(t, w, "claude "+strings.Join(args[:2], " "), 90*time.Second, p.Claude, args...)
	}
	claude("mcp", "add", "--scope", "user", "everything", "--", "npx", "-y", "@modelcontextprotocol/server-everything")
	claude("mcp", "add", "mine", "-e", "API_KEY=${MY_KEY}", "--", "node", "/opt/srv/index.js", "--flag")
	claude("mcp", "add", "--transport", "http", "remote", "https://api.example.com/mcp", "-H", "Authorization: Bearer ${TOKEN}")
	claude("mcp", "add", "--scope", "project", "shared", "--", "npx", "-y", "@modelcontextprotocol/server-memory")

	out, err := w.command(t, "mcp", "import", "--from", "claude-code", "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	var rep importReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	scopes := map[string]string{}
	for _, e := range rep.Imported {
		scopes[e.Name] = e.Scope
	}
	if want := map[string]string{"everything": "user", "mine": "local", "remote": "local"}; !equalMaps(scopes, want) || len(rep.Skipped) != 0 {
		t.Errorf("imported %v, skipped %v; want %v", scopes, rep.Skipped, want)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], ".mcp.json, which Switchboard reads as it is") {
		t.Errorf("notes %q, want one on .mcp.json", rep.Notes)
	}

	// Each definition as Claude Code wrote it, in Switchboard's own file
	// (user scope at the top, local scope under the workspace).
	b, err := os.ReadFile(filepath.Join(w.sbHome, "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	got := map[string]string{}
	compact := func(def json.RawMessage) string {
		var c bytes.Buffer
		json.Compact(&c, def)
		return c.String()
	}
	for name, def := range file.MCPServers {
		got[name] = "user " + compact(def)
	}
	for _, p := range file.Projects {
		for name, def := range p.MCPServers {
			got[name] = "local " + compact(def)
		}
	}
	for name, want := range map[string][]string{
		"everything": {"user ", `"command":"npx"`, `"args":["-y","@modelcontextprotocol/server-everything"]`},
		"mine":       {"local ", `"command":"node"`, `"args":["/opt/srv/index.js","--flag"]`, `"env":{"API_KEY":"${MY_KEY}"}`},
		"remote":     {"local ", `"type":"http"`, `"url":"https://api.example.com/mcp"`, `"headers":{"Authorization":"Bearer ${TOKEN}"}`},
	} {
		for _, part := range want {
			if !strings.Contains(got[name], part) {
				t.Errorf("%s: %s, want %s", name, got[name], part)
			}
		}
	}
	if _, ok := got["shared"]; ok {
		t.Errorf("the project server was copied from .mcp.json into %s", b)
	}

	// CLAUDE_CONFIG_DIR: Claude Code's file is there, for both directions.
	cfgDir := filepath.Join(w.dir, "claude-config")
	w.env = append(w.env, "CLAUDE_CONFIG_DIR="+cfgDir)
	out, err = w.command(t, "mcp", "install-gateway", "--client", "claude-code", "--command", switchboardBin(t)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), filepath.Join(cfgDir, ".claude.json")) {
		t.Fatalf("install-gateway with CLAUDE_CONFIG_DIR: %v\n%s", err, out)
	}
	env := clientEnv(w)
	list2 := string(runClientEnv(t, w, "claude mcp list", 90*time.Second, append(env, "CLAUDE_CONFIG_DIR="+cfgDir), p.Claude, "mcp", "list"))
	if line := claudeListLine(list2, "switchboard"); !strings.Contains(line, "Connected") {
		t.Errorf("Claude Code with CLAUDE_CONFIG_DIR does not see the gateway connected:\n%s", list2)
	}
	// What it holds now is the gateway's entry: not imported (Switchboard
	// would be its own server), and said so.
	out, err = w.command(t, "mcp", "import", "--from", "claude-code", "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("import with CLAUDE_CONFIG_DIR: %v\n%s", err, out)
	}
	rep = importReport{}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Imported) != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Name != "switchboard" ||
		!strings.Contains(rep.Skipped[0].Reason, "it runs the Switchboard gateway") || rep.Skipped[0].File != filepath.Join(cfgDir, ".claude.json") {
		t.Errorf("import with CLAUDE_CONFIG_DIR: %s", out)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
