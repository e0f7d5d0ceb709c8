package npmtest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

func newClient() *mcp.Client {
	// No roots: with the SDK's default roots capability server-everything
	// holds a roots timer and Close waits for SIGTERM (GO-SDK-NOTES).
	return mcp.NewClient(&mcp.Implementation{Name: "npmtest", Version: "v0"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
}

func commandTransport(t *testing.T, cmd *exec.Cmd) *mcp.CommandTransport {
	t.Helper()
	cmd.Stderr = &logWriter{t: t}
	cmd.WaitDelay = 2 * time.Second
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
}

type logWriter struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *logWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func toolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// TestReferenceServers starts each pinned npm server over stdio through the
// Go SDK and lists its tools.
//
// The server/discover probe (go-sdk #1177), measured with server-everything,
// server-filesystem and server-memory 2026.8.31 (TS SDK 1.32.2) and go-sdk
// v1.8.0: none of the three dies on it. Each answers the probe with
// {"code":-32601,"message":"Method not found"} and stays up; the Go client
// then falls back to initialize on the same connection and negotiates
// 2025-11-25. So the default Connect (no ProtocolVersion) works, costs one
// extra round trip, and gives the same session as pinning
// ProtocolVersion "2025-11-25" (both are tested below). A server that does
// die on the probe is simulated by testserver's discover-kill.
func TestReferenceServers(t *testing.T) {
	p := npmtest.Install(t)
	for _, tt := range []struct {
		name     string
		args     []string
		env      []string
		wantTool string
	}{
		{"everything", []string{p.Everything}, nil, "echo"},
		{"filesystem", []string{p.Filesystem, t.TempDir()}, nil, "list_directory"},
		{"memory", []string{p.Memory}, []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}, "create_entities"},
	} {
		for _, version := range []string{"", "2025-11-25"} {
			t.Run(fmt.Sprintf("%s/version=%q", tt.name, version), func(t *testing.T) {
				t.Parallel()
				cmd := exec.Command(p.Node, tt.args...)
				cmd.Env = append(os.Environ(), tt.env...)
				tr := commandTransport(t, cmd)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				start := time.Now()
				cs, err := newClient().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatalf("Connect: %v\nstderr: %s", err, cmd.Stderr)
				}
				defer cs.Close()
				t.Logf("connected in %v, negotiated %s", time.Since(start).Round(time.Millisecond), cs.InitializeResult().ProtocolVersion)
				names := toolNames(t, ctx, cs)
				if !slices.Contains(names, tt.wantTool) {
					t.Errorf("tools %v lack %q", names, tt.wantTool)
				}
				if tt.name == "everything" {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
					if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.Content[0].(*mcp.TextContent).Text), "hi") {
						t.Errorf("echo = %+v, %v", res, err)
					}
				}
			})
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestEverythingStreamableHTTP runs server-everything in its Streamable HTTP
// mode (argument streamableHttp, port from $PORT, endpoint /mcp).
func TestEverythingStreamableHTTP(t *testing.T) {
	p := npmtest.Install(t)
	port := freePort(t)
	cmd := exec.Command(p.Node, p.Everything, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				close(ready)
			}
			t.Logf("server-everything: %s", sc.Text())
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not start listening")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}
	cs, err := newClient().Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("Connect over Streamable HTTP: %v", err)
	}
	defer cs.Close()
	t.Logf("negotiated %s, session %q", cs.InitializeResult().ProtocolVersion, cs.ID())
	if names := toolNames(t, ctx, cs); !slices.Contains(names, "echo") {
		t.Errorf("tools %v lack echo", names)
	}
}

func TestInstallIsInstantSecondTime(t *testing.T) {
	npmtest.Install(t)
	start := time.Now()
	p := npmtest.Install(t)
	if d := time.Since(start); d > time.Second {
		t.Errorf("second Install took %v", d)
	}
	for _, f := range []string{p.Node, p.Everything, p.Filesystem, p.Memory, p.SDK, p.Inspector, p.Claude} {
		if !filepath.IsAbs(f) {
			t.Errorf("%q is not absolute", f)
		}
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}

// The local registry serves the published package to npm, from a cold
// cache, with no uplink.
func TestRegistryServesItsPackages(t *testing.T) {
	r := npmtest.StartRegistry(t)
	cmd := exec.Command("npm", "view", "switchboard-echo-server", "version", "--registry", r.URL)
	cmd.Env = append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1.0.0" {
		t.Fatalf("npm view: %v\n%s", err, out)
	}
	cmd = exec.Command("npm", "view", "left-pad", "version", "--registry", r.URL)
	cmd.Env = append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false", "npm_config_fetch_retries=0")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("a package it does not hold was served: %s", out)
	}
}
