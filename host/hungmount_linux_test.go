package host_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testfuse"
)

// A server whose working directory is on a mount that stopped answering
// fails at its startup timeout, however long the mount hangs, and the
// other servers serve meanwhile. (Looking at a directory there waits in
// the kernel for ever; only the wait for it can be bounded.)
func TestServerOnHungMountFailsAtItsTimeout(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	f := testfuse.Mount(t)
	f.AddDir("work")
	stuck := stdio("stuck", "echo")
	stuck.Effective.Cwd = filepath.Join(f.Dir, "work")
	stuck.Effective.StartupTimeout = 500
	f.Stall(testfuse.Everything)
	h := newHost(t, cfgOf(stdio("good", "echo"), stuck), nil)
	st := waitState(t, h, "stuck", host.StateError, 5*time.Second)
	if !strings.Contains(st.Reason, "did not start within 500ms") {
		t.Errorf("stuck's reason: %q", st.Reason)
	}
	waitState(t, h, "good", host.StateConnected, 10*time.Second)
	mustCall(t, h, "mcp__good__echo", map[string]any{"text": "still here"})
	f.Resume() // the abandoned start goes on, and its process is closed
}

// A server that never answers initialize because it waits in the kernel
// for a mount whose daemon took its read and lost its peer — where even
// SIGKILL does not free it — fails at its startup timeout, serves nothing,
// and holds up neither the other servers nor the host's Close.
func TestUnkillableServerFailsAtItsTimeout(t *testing.T) {
	t.Parallel() // waits on its own child processes and measures no time
	f := testfuse.Mount(t)
	f.AddFile("data", []byte("x"), 0o644)
	f.Stall(testfuse.Opens)
	f.Deafen()
	defer f.Resume()
	stuck := resolved("stuck", config.Server{Type: config.TypeStdio, Command: "/bin/sh",
		Args: []string{"-c", "exec cat " + filepath.Join(f.Dir, "data")}, StartupTimeout: 500})
	h := host.New(cfgOf(stdio("good", "echo"), stuck), &host.Options{
		LookupEnv:  func(string) (string, bool) { return "", false },
		CloseGrace: 200 * time.Millisecond,
		// Skips the bound on the wait for the SIGKILLed server's exit.
		Clock: newRecordingClock(),
	})
	closed := make(chan struct{})
	defer func() {
		go func() { h.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Errorf("Host.Close still blocked after 10s with a server stuck in the kernel")
		}
	}()
	st := waitState(t, h, "stuck", host.StateError, 8*time.Second)
	if !strings.Contains(st.Reason, "500ms") {
		t.Errorf("stuck's reason: %q", st.Reason)
	}
	waitState(t, h, "good", host.StateConnected, 10*time.Second)
	mustCall(t, h, "mcp__good__echo", map[string]any{"text": "still here"})
}
