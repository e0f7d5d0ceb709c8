//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
//
// Should the guard regress, the test must not take the machine with it:
// every command that may start servers runs under a runaway (see
// runaway_linux_test.go), which from its first 50 ms kills the whole tree
// once more than one `switchboard serve` runs below it, within a cgroup
// whose pids.max caps it meanwhile, and the test fails at once.
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
	if !strings.Contains(string(out), "reads") || !strings.Contains(string(out), "this gateway's own") {
		t.Errorf("install did not say that Switchboard reads .mcp.json and knows the entry:\n%s", out)
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

	// Start the entry as Claude Code would: in the project, by PATH, and
	// watched from its first instant.
	gw := exec.Command(bin, e.Args...)
	gw.Env, gw.Dir = w.env, w.ws
	var gwStderr lockedBuffer
	gw.Stderr = &gwStderr
	stdin, err := gw.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := gw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g := startRunaway(t, "gateway", gw, 1)
	exited := make(chan struct{})
	go func() { _ = gw.Wait(); close(exited) }()
	var reapOnce sync.Once
	reap := func() {
		reapOnce.Do(func() {
			stdin.Close()
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Errorf("the gateway did not exit 10 s after its stdin closed; killing its tree")
				g.killAll()
				<-exited
			}
			g.stopWatching()
		})
	}
	defer reap()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		// A killed tree ends the session; end the test's waits with it.
		select {
		case <-g.tripped:
			cancel()
		case <-ctx.Done():
		}
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code-ish"}, nil).Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		g.check(t)
		t.Fatalf("starting the installed entry: %v\nstderr: %s", err, gwStderr.String())
	}
	defer cs.Close()
	names := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			g.check(t)
			t.Fatalf("tools/list: %v", err)
		}
		names[tool.Name] = true
	}
	if !names["alpha__echo"] {
		t.Errorf("alpha's tools are not served: %v", names)
	}
	// Keep counting the gateways below the client's one for a while: the
	// recursion went 16 → 44 processes in 6 s.
	select {
	case <-g.tripped:
	case <-time.After(4 * time.Second):
	}
	g.check(t)
	if most, _ := g.result(); most > 1 {
		t.Errorf("%d switchboard serve processes below the gateway at once (want at most the wrapped one, briefly)", most)
	}
	cs.Close()
	reap()

	// status starts the servers too, the gateway's entry among them. status
	// is no gateway, so the wrapped serve it starts runs as one, and that
	// one's own wrapped child refuses: two at most.
	st := w.command(t, "status", "--json")
	var stdoutBuf bytes.Buffer
	st.Stdout = &stdoutBuf
	sg := startRunaway(t, "status", st, 2)
	stExited := make(chan struct{})
	go func() { _ = st.Wait(); close(stExited) }()
	select {
	case <-stExited:
	case <-sg.tripped:
		<-stExited
	case <-time.After(60 * time.Second):
		t.Errorf("status did not finish in 60 s; killing its tree")
		sg.killAll()
		<-stExited
	}
	sg.stopWatching()
	sg.check(t)
	var status struct {
		Servers []struct{ Name, State, Error string } `json:"servers"`
	}
	if err := json.Unmarshal(stdoutBuf.Bytes(), &status); err != nil {
		t.Fatalf("status --json: %v\n%s", err, stdoutBuf.String())
	}
	for _, s := range status.Servers {
		if s.Name == "switchboard" && (s.State != "disabled" || !strings.Contains(s.Error, "never serves itself")) {
			t.Errorf("the gateway's own entry: %s %q", s.State, s.Error)
		}
	}
}

// lockedBuffer is a bytes.Buffer that a process's output and the test may
// use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
