package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// Issue 29, point 5: the first tools/list answers at once with what is
// connected, and a server that is slow to start arrives later by
// notifications/tools/list_changed. Before, the gateway held its first
// list up to --wait (5 s) + 1 s for servers still connecting, and Claude
// Code gives up on a tools/list after 5 s ("tools fetch failed").

// firstListGuard bounds the first tools/list. It is a guard with a
// margin, not a timing: with a server still starting the list takes about
// 2 s from serve's start (DefaultServeConnectWait); before the fix it took
// 5 s or more, and Claude Code cancels at 5 s.
const firstListGuard = 4 * time.Second

// lateWorld is a gateway world with two servers: fast (the echo test
// server) and slow, which starts serving only once the test creates the
// release file, as a server that takes 20 s to start would, but on the
// test's word rather than after a sleep.
type lateWorld struct {
	*gatewayWorld
	release string
}

func newLateWorld(t *testing.T) *lateWorld {
	t.Helper()
	w := &lateWorld{gatewayWorld: newGatewayWorld(t)}
	w.defaultWait = true // serve's own first-list wait is what is tested
	w.release = filepath.Join(w.dir, "release-slow")
	fastCmd, fastArgs := testserver.Command("echo")
	slowCmd, slowArgs := testserver.Command("slow-start", "-until-file", w.release)
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"fast": map[string]any{"command": fastCmd, "args": fastArgs},
		"slow": map[string]any{"command": slowCmd, "args": slowArgs, "startup_timeout": 600000},
	}})
	return w
}

func (w *lateWorld) releaseSlow(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(w.release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkLateLists checks what a client saw: a first list within the guard
// without the slow server's tools, the fast server's tools in it (or, on
// a machine so loaded that fast was not up within serve's first two
// seconds, by list_changed), and the slow server's by list_changed once
// released.
func checkLateLists(t *testing.T, first []string, took time.Duration, later []string) {
	t.Helper()
	t.Logf("first tools/list in %v: %v", took.Round(time.Millisecond), first)
	if took > firstListGuard {
		t.Errorf("the first tools/list took %v with a server still starting; want it at once (Claude Code gives up after 5 s)", took)
	}
	if slices.Contains(first, "slow__echo") {
		t.Errorf("the first list has the slow server's tools before it was released: %v", first)
	}
	if !slices.Contains(first, "fast__echo") {
		t.Logf("fast was not up within serve's first two seconds; its tools came by list_changed")
	}
	for _, want := range []string{"fast__echo", "slow__echo"} {
		if !slices.Contains(later, want) {
			t.Errorf("after the slow server started, list_changed did not bring %s: %v", want, later)
		}
	}
}

// TestGatewayFirstListAtOnce: a Go SDK client over stdio and HTTP.
func TestGatewayFirstListAtOnce(t *testing.T) {
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			w := newLateWorld(t)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			changed := make(chan struct{}, 1)
			client := mcp.NewClient(&mcp.Implementation{Name: "late-test", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
					select {
					case changed <- struct{}{}:
					default:
					}
				},
			})
			var tr mcp.Transport
			if mode == "stdio" {
				tr = &mcp.CommandTransport{Command: w.command(t, "serve", "--stdio")}
			} else {
				base, stop := startHTTPGateway(t, w.gatewayWorld, "--http", "127.0.0.1:0")
				defer stop()
				tr = &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}
			}
			cs, err := client.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			names := func(ctx context.Context) ([]string, error) {
				var out []string
				for tool, err := range cs.Tools(ctx, nil) {
					if err != nil {
						return nil, err
					}
					out = append(out, tool.Name)
				}
				return out, nil
			}
			lctx, lcancel := context.WithTimeout(ctx, firstListGuard)
			start := time.Now()
			first, err := names(lctx)
			took := time.Since(start)
			lcancel()
			if err != nil {
				t.Fatalf("the first tools/list, with a server still starting, failed after %v: %v", took.Round(time.Millisecond), err)
			}
			w.releaseSlow(t)
			later := first
			for !slices.Contains(later, "slow__echo") || !slices.Contains(later, "fast__echo") {
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatalf("no list_changed brought the slow server's tools: %v", later)
				}
				if later, err = names(ctx); err != nil {
					t.Fatal(err)
				}
			}
			checkLateLists(t, first, took, later)
		})
	}
}

// TestGatewayFirstListAtOnceTypeScript: the TypeScript SDK's client, over
// stdio and HTTP (testdata/gateway/ts_late_client.mjs).
func TestGatewayFirstListAtOnceTypeScript(t *testing.T) {
	p := npmtest.Install(t)
	script, err := filepath.Abs("testdata/gateway/ts_late_client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			w := newLateWorld(t)
			args := []string{script, mode}
			ready, urlFile := filepath.Join(w.dir, "ready"), filepath.Join(w.dir, "url")
			if mode == "stdio" {
				args = append(append(args, switchboardBin(t)), w.args("serve", "--stdio")...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, p.Node, args...)
			cmd.Env = append(append([]string{}, w.env...), "SDK="+p.SDK, "RELEASE="+w.release, "WANT=slow__echo,fast__echo",
				"READY="+ready, "URL_FILE="+urlFile)
			cmd.Dir = w.ws
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if mode == "http" {
				// The gateway starts once the client is ready to list,
				// as a client that connects to a gateway just started.
				for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
					if ctx.Err() != nil {
						t.Fatalf("the ts client never got ready: %s", stderr.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
				base, stop := startHTTPGateway(t, w.gatewayWorld, "--http", "127.0.0.1:0")
				defer stop()
				if err := os.WriteFile(urlFile, []byte(base+"/mcp"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("ts client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
			}
			out := []byte(stdout.String())
			var res struct {
				First, Later []string
				FirstMs      float64
				Changes      int
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("ts client output %q: %v", out, err)
			}
			if res.Changes == 0 {
				t.Errorf("the TypeScript client got no list_changed")
			}
			checkLateLists(t, res.First, time.Duration(res.FirstMs*float64(time.Millisecond)), res.Later)
		})
	}
}
