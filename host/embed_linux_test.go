package host_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// A program in another module that embeds a Host, and calls
// host.MaybeRunSupervisor first in main as the README says, gets its stdio
// servers started under the supervisor (internal/proc cannot be imported
// from outside this module).
func TestEmbedderGetsTheSupervisor(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build an embedding program")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod": "module example.com/embed\n\ngo 1.26\n\nrequire github.com/switchboard-mcp/switchboard v0.0.0\n\n" +
			"replace github.com/switchboard-mcp/switchboard => " + root + "\n",
		"go.sum": string(sum),
		"main.go": `package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

func main() {
	host.MaybeRunSupervisor()
	def := config.Server{Type: config.TypeStdio, Command: os.Args[1], Args: os.Args[2:]}
	cfg := &config.Resolved{Servers: []config.ResolvedServer{{Name: "s", Written: def, Effective: def,
		Scope: config.ScopeSession, Trust: config.TrustUser, Availability: config.Available}}}
	h := host.New(cfg, nil)
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.Call(ctx, "mcp__s__echo", map[string]any{"text": "hi"}); err != nil {
		fmt.Println("error", err)
		return
	}
	fmt.Println("ready")
	os.Stdin.Read(make([]byte, 1))
}
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command(goCmd, "build", "-mod=mod", "-o", "embed", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the embedding program: %v\n%s", err, out)
	}
	cmd, args := testserver.Command("echo")
	embed := exec.Command(filepath.Join(dir, "embed"), append([]string{cmd}, args...)...)
	out, _ := embed.StdoutPipe()
	stdin, _ := embed.StdinPipe()
	embed.Stderr = os.Stderr
	if err := embed.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); embed.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("the embedding program said %q", line)
	}
	// Its one child is the supervisor, whose child is the server.
	var sup []string
	for deadline := time.Now().Add(5 * time.Second); len(sup) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sup = childrenOf(embed.Process.Pid)
	}
	if len(sup) != 1 {
		t.Fatalf("the embedding program has children %v, want one supervisor", sup)
	}
	cmdline, _ := os.ReadFile("/proc/" + sup[0] + "/cmdline")
	if !strings.Contains(string(cmdline), "__switchboard-supervise") {
		t.Errorf("its child runs %q, not the supervisor", strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	if servers := childrenOf(mustAtoi(t, sup[0])); len(servers) != 1 {
		t.Errorf("the supervisor has children %v, want the one server", servers)
	}
}

func childrenOf(pid int) []string {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []string
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
