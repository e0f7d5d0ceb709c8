package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		{[]string{"--client", "vscode"}, vs, []string{"servers", "switchboard"}, []any{"serve", "--stdio", "--workspace", "${workspaceFolder}"}},
		{[]string{"--client", "claude-code"}, claude, []string{"mcpServers", "switchboard"}, []any{"serve", "--stdio"}},
		{[]string{"--client", "claude-code", "--scope", "local", "--name", "sb"}, claude, []string{"projects", w.proj, "mcpServers", "sb"}, []any{"serve", "--stdio", "--workspace", w.proj}},
		{[]string{"--client", "cursor"}, filepath.Join(w.home, ".cursor", "mcp.json"), []string{"mcpServers", "switchboard"}, []any{"serve", "--stdio"}},
		{[]string{"--client", "cursor", "--scope", "project", "--file", "elsewhere.json"}, filepath.Join(w.proj, "elsewhere.json"), []string{"mcpServers", "switchboard"}, []any{"serve", "--stdio"}},
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
	if !listNames(t, ctx, cs)["mcp__alpha__echo"] {
		t.Error("the installed gateway does not list alpha's tools")
	}
}
