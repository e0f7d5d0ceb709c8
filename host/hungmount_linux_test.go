package host_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testfuse"
)

// A server whose working directory is on a mount that stopped answering
// fails at its startup timeout, however long the mount hangs, and the
// other servers serve meanwhile. (Looking at a directory there waits in
// the kernel for ever; only the wait for it can be bounded.)
func TestServerOnHungMountFailsAtItsTimeout(t *testing.T) {
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
