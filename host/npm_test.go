package host_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// The npm reference servers, run by the host as they would be configured by
// a user: server-everything over stdio and Streamable HTTP, filesystem and
// memory over stdio, all at once.
func TestReferenceServers(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	p := npmtest.Install(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the filesystem server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := startEverythingHTTP(t, p)

	node := func(name string, args ...string) config.ResolvedServer {
		return resolved(name, config.Server{Type: config.TypeStdio, Command: p.Node, Args: args})
	}
	memory := node("memory", p.Memory)
	memory.Effective.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}
	h := newHost(t, cfgOf(
		node("everything", p.Everything),
		node("fs", p.Filesystem, root),
		memory,
		remote("everything-http", config.TypeHTTP, fmt.Sprintf("http://127.0.0.1:%d/mcp", port)),
	), &host.Options{Prompter: host.Decliner{},
		// Node's start-up on a loaded machine can pass the default 5 s bound;
		// that bound is tested elsewhere, this test is about the servers.
		ToolsWait: 60 * time.Second})

	ctx := ctxFor(t, 60*time.Second)
	list, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Warnings) > 0 {
		t.Errorf("warnings: %v", list.Warnings)
	}
	have := map[string]bool{}
	for _, tl := range list.Tools {
		have[tl.Name] = true
	}
	for _, want := range []string{"mcp__everything__echo", "mcp__everything-http__echo", "mcp__fs__read_text_file", "mcp__memory__create_entities"} {
		if !have[want] {
			t.Errorf("missing tool %s", want)
		}
	}
	for _, name := range []string{"everything", "everything-http"} {
		res := mustCall(t, h, "mcp__"+name+"__echo", map[string]any{"message": "via " + name})
		if !strings.Contains(textOf(res), "via "+name) {
			t.Errorf("%s echo = %q", name, textOf(res))
		}
	}
	res := mustCall(t, h, "mcp__fs__read_text_file", map[string]any{"path": filepath.Join(root, "hello.txt")})
	if !strings.Contains(textOf(res), "hello from the filesystem server") {
		t.Errorf("read_text_file = %q", textOf(res))
	}
	// The filesystem server refuses paths outside its roots: a tool error, not a host error.
	res = mustCall(t, h, "mcp__fs__read_text_file", map[string]any{"path": "/etc/passwd"})
	if !res.IsError {
		t.Errorf("read outside the allowed directory succeeded: %q", textOf(res))
	}
	mustCall(t, h, "mcp__memory__create_entities", map[string]any{"entities": []map[string]any{
		{"name": "Switchboard", "entityType": "project", "observations": []string{"an MCP host"}},
	}})
	res = mustCall(t, h, "mcp__memory__read_graph", map[string]any{})
	if !strings.Contains(textOf(res), "Switchboard") {
		t.Errorf("read_graph = %q", textOf(res))
	}
	prompts, _, err := h.Prompts(ctx)
	if err != nil || len(prompts) == 0 {
		t.Errorf("prompts = %d, %v", len(prompts), err)
	}
	resources, _, err := h.Resources(ctx)
	if err != nil || len(resources) == 0 {
		t.Fatalf("resources = %d, %v", len(resources), err)
	}
	if _, err := h.ReadResource(ctx, resources[0].Server, resources[0].Resource.URI); err != nil {
		t.Errorf("read %s: %v", resources[0].Resource.URI, err)
	}
	for _, st := range h.Status() {
		if st.State != host.StateConnected || st.Tools == 0 {
			t.Errorf("%s: %s (%s), %d tools", st.Name, st.State, st.Reason, st.Tools)
		}
	}
}

func startEverythingHTTP(t *testing.T, p npmtest.Paths) int {
	t.Helper()
	return startEverything(t, p, "streamableHttp", "listening on port")
}

// startEverything runs server-everything on a loopback port in mode
// (streamableHttp, sse) and returns the port once its log says ready.
func startEverything(t *testing.T, p npmtest.Paths, mode, ready string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(p.Node, p.Everything, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	listening := make(chan struct{})
	go func() {
		var once sync.Once
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), ready) {
				once.Do(func() { close(listening) })
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not start listening")
	}
	return port
}

// A Node server that crashes at start is reported with the line that says
// why, not Node's version banner, which is its last line.
func TestNodeCrashReasonNamesTheError(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	p := npmtest.Install(t)
	missing := filepath.Join(t.TempDir(), "does-not-exist.js")
	h := newHost(t, cfgOf(resolved("crash", config.Server{Type: config.TypeStdio, Command: p.Node, Args: []string{missing}})), nil)
	st := waitState(t, h, "crash", host.StateError, 30*time.Second)
	if !strings.Contains(st.Reason, "Error: Cannot find module") || strings.Contains(st.Reason, "Node.js v") {
		t.Errorf("reason %q; want the line naming the error", st.Reason)
	}
}
