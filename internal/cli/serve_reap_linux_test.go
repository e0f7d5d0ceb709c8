package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// alive reports whether pid runs (a zombie has already ended).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// TestServeStopReapsServers: no server process survives `serve` stopped by
// SIGINT, SIGTERM or SIGKILL.
func TestServeStopReapsServers(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			w := newGatewayWorld(t)
			w.servers(t, "alpha", "beta")
			w.permissions(t, []string{"mcp__alpha", "mcp__beta"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := w.command(t, "serve", "--stdio")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			client := mcp.NewClient(&mcp.Implementation{Name: "reap-test"}, nil)
			cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
			if err != nil {
				cmd.Process.Kill()
				t.Fatal(err)
			}
			defer cs.Close()
			var pids []int
			for _, s := range []string{"alpha", "beta"} {
				txt, isErr := callText(t, ctx, cs, s+"__pid", nil)
				pid, err := strconv.Atoi(pidRE.FindString(txt))
				if isErr || err != nil || !alive(pid) {
					t.Fatalf("%s pid: %q", s, txt)
				}
				pids = append(pids, pid)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if sig != syscall.SIGKILL && err != nil {
					t.Errorf("serve ended with %v after %v, want a clean exit", err, sig)
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("serve did not exit within 20s of %v", sig)
			}
			deadline := time.Now().Add(15 * time.Second)
			for _, pid := range pids {
				for alive(pid) {
					if time.Now().After(deadline) {
						syscall.Kill(pid, syscall.SIGKILL)
						t.Fatalf("server process %d survived serve's %v", pid, sig)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}
