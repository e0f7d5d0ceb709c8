//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestProjectGatewayNeverStartsItself is issue 16's trap: install-gateway
// --scope project writes .mcp.json, which Switchboard reads too; once the
// entry is approved, the gateway the client starts found itself among its
// servers and started itself, recursively. Now it refuses its own entry
// (by its command) and a gateway that a wrapper starts refuses to run (by
// the environment marker), so the process count stays put.
func TestProjectGatewayNeverStartsItself(t *testing.T) {
	w := newGatewayWorld(t)
	bin := switchboardBin(t)
	// A server that wraps a gateway, which the command check cannot see.
	cmd, args := testserver.Command("echo")
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"alpha":   map[string]any{"command": cmd, "args": args},
		"wrapped": map[string]any{"command": "/bin/sh", "args": []string{"-c", "exec " + bin + " serve --stdio"}},
	}})
	out, err := w.command(t, "mcp", "install-gateway", "--client", "claude-code", "--scope", "project").CombinedOutput()
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "reads") || !strings.Contains(string(out), "never serves itself") {
		t.Errorf("install did not warn that Switchboard reads .mcp.json:\n%s", out)
	}
	var file struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(filepath.Join(w.ws, ".mcp.json"))
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	e := file.MCPServers["switchboard"]
	if e.Command != "switchboard" {
		t.Errorf("a shared file got the command %q, want plain switchboard", e.Command)
	}
	if out, err := w.command(t, "mcp", "approve", "switchboard", "--yes").CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}

	// Start the entry as Claude Code would: in the project, by PATH.
	gw := exec.Command(bin, e.Args...)
	gw.Env, gw.Dir = w.env, w.ws
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code-ish"}, nil).Connect(ctx, &mcp.CommandTransport{Command: gw}, nil)
	if err != nil {
		t.Fatalf("starting the installed entry: %v", err)
	}
	defer cs.Close()
	names := listNames(t, ctx, cs)
	if !names["alpha__echo"] {
		t.Errorf("alpha's tools are not served: %v", names)
	}
	// Count the gateways below the client's one, for a while: the
	// recursion went 16 → 44 processes in 6 s.
	most := 0
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		most = max(most, len(servesBelow(gw.Process.Pid)))
	}
	if most > 1 {
		t.Errorf("%d switchboard serve processes below the gateway at once (want at most the wrapped one, briefly): %v", most, servesBelow(gw.Process.Pid))
	}
	st := w.command(t, "status", "--json")
	var stdout bytes.Buffer
	st.Stdout = &stdout
	_ = st.Run()
	var status struct {
		Servers []struct{ Name, State, Error string } `json:"servers"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &status); err != nil {
		t.Fatalf("status --json: %v\n%s", err, stdout.String())
	}
	for _, s := range status.Servers {
		if s.Name == "switchboard" && (s.State != "error" || !strings.Contains(s.Error, "never serves itself")) {
			t.Errorf("the gateway's own entry: %s %q", s.State, s.Error)
		}
	}
}

// servesBelow lists the descendants of pid that run `switchboard serve`.
func servesBelow(pid int) []string {
	parent := map[int]int{}
	cmdline := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
		c, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		cmdline[p] = strings.ReplaceAll(strings.TrimRight(string(c), "\x00"), "\x00", " ")
	}
	var out []string
	for p, c := range cmdline {
		if !strings.Contains(c, "switchboard") || !strings.Contains(" "+c+" ", " serve ") {
			continue
		}
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, strconv.Itoa(p)+": "+c)
				break
			}
		}
	}
	return out
}
