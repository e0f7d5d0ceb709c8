package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// The npm reference servers work inside the sandbox: server-filesystem on
// the workspace, server-memory with its file in the workspace, and
// server-everything started by npx with the npm cache allowed. Each sees
// the packages read-only, the workspace read-write, no network; the
// filesystem server cannot read a file the sandbox hides even when asked.
func TestReferenceServersSandboxed(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	requireSandboxHost(t)
	p := npmtest.Install(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the sandbox\n"), 0o644)
	hidden, err := os.MkdirTemp("/var/tmp", "sandbox-hidden-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(hidden) })
	os.WriteFile(filepath.Join(hidden, "secret.txt"), []byte("secret"), 0o644)

	box := &config.Sandbox{FS: &config.SandboxFS{Read: []string{p.Dir}, Write: []string{ws}}}
	srv := func(name string, def config.Server) config.ResolvedServer {
		def.Type, def.Sandbox, def.Cwd = config.TypeStdio, box, ws
		return resolved(name, def)
	}
	memory := srv("memory", config.Server{Command: p.Node, Args: []string{p.Memory},
		Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(ws, "memory.jsonl")}})
	// npx finds the pinned package in testdata/npm's node_modules (its cwd),
	// and keeps its own files in ~/.npm, which the sandbox adds read-write.
	npx := srv("npx-everything", config.Server{Command: "npx", Args: []string{"--offline", "--no-install", "mcp-server-everything"}})
	npx.Effective.Cwd, npx.Written.Cwd = p.Dir, p.Dir
	h := newHost(t, cfgOf(
		srv("fs", config.Server{Command: p.Node, Args: []string{p.Filesystem, ws, hidden}}),
		memory,
		npx,
	), &host.Options{Prompter: host.Decliner{}, ToolsWait: 60 * time.Second, Environ: os.Environ})
	ctx := ctxFor(t, 90*time.Second)
	list, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Warnings) > 0 {
		for _, st := range h.Status() {
			t.Logf("%s: %s %s %q", st.Name, st.State, st.Reason, st.StderrTail)
		}
		t.Fatalf("warnings: %v", list.Warnings)
	}
	res := mustCall(t, h, "mcp__fs__read_text_file", map[string]any{"path": filepath.Join(ws, "hello.txt")})
	if !strings.Contains(textOf(res), "hello from the sandbox") {
		t.Errorf("read_text_file in the workspace = %q", textOf(res))
	}
	res = mustCall(t, h, "mcp__fs__write_file", map[string]any{"path": filepath.Join(ws, "out.txt"), "content": "written"})
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "written" {
		t.Errorf("write_file in the workspace: %q, file %q", textOf(res), b)
	}
	// Allowed by the server's own arguments, hidden by the sandbox.
	res = mustCall(t, h, "mcp__fs__read_text_file", map[string]any{"path": filepath.Join(hidden, "secret.txt")})
	if !res.IsError {
		t.Errorf("the sandboxed filesystem server read a hidden file: %q", textOf(res))
	}
	mustCall(t, h, "mcp__memory__create_entities", map[string]any{"entities": []map[string]any{
		{"name": "Switchboard", "entityType": "project", "observations": []string{"sandboxed"}}}})
	if b, err := os.ReadFile(filepath.Join(ws, "memory.jsonl")); err != nil || !strings.Contains(string(b), "Switchboard") {
		t.Errorf("the memory file in the workspace: %q, %v", b, err)
	}
	res = mustCall(t, h, "mcp__npx-everything__echo", map[string]any{"message": "through npx"})
	if !strings.Contains(textOf(res), "through npx") {
		t.Errorf("npx echo = %q", textOf(res))
	}
}

// npx fetches through the sandbox's proxy: server-everything, started by
// npx in an empty workspace with an empty npm cache of its own (nothing
// to fall back on: without the network it cannot start), with only
// registry.npmjs.org:443 allowed. npm finds the proxy in HTTPS_PROXY; the
// supervisor resolves the name and relays.
func TestNpxThroughNetworkAllowList(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	requireSandboxHost(t)
	npmtest.Install(t) // the registry is reachable, and the version below is the pinned one
	ws := t.TempDir()
	rs := resolved("everything", config.Server{Type: config.TypeStdio, Command: "npx",
		Args: []string{"--yes", "@modelcontextprotocol/server-everything@2026.8.31"},
		Cwd:  ws, Env: map[string]string{"npm_config_cache": filepath.Join(ws, ".npm-cache")},
		Sandbox: &config.Sandbox{Network: config.SandboxNetwork{Allow: []string{"registry.npmjs.org:443"}}}})
	h := newHost(t, cfgOf(rs), &host.Options{Prompter: host.Decliner{}, ToolsWait: 120 * time.Second, Environ: os.Environ})
	list, err := h.Tools(ctxFor(t, 150*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Warnings) > 0 {
		st := statusOf(h, "everything")
		t.Fatalf("warnings: %v; %s %s %q", list.Warnings, st.State, st.Reason, st.StderrTail)
	}
	res := mustCall(t, h, "mcp__everything__echo", map[string]any{"message": "fetched through the proxy"})
	if !strings.Contains(textOf(res), "fetched through the proxy") {
		t.Errorf("echo = %q", textOf(res))
	}
}
