package host_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// The tests of a runtime that recovers (issue 29): a connect that fails for
// reasons of its own is not tried a second time pinned to an older protocol
// revision.

// starts reads the counter a test server's -state file keeps; -1 while
// the server is writing it.
func starts(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %q", file, b)
	}
	return n
}

// A server that exits at once, before reading anything, is started once:
// it is not tried again pinned to an older protocol revision, which only
// doubled its time to the error (issue 29, point 4). The one that needs
// the pin still gets it (TestDiscoverKillRetriesPinned).
func TestExitAtOnceIsNotRetriedPinned(t *testing.T) {
	file := filepath.Join(t.TempDir(), "starts")
	// The hold clock keeps the next try (a second later) from coming.
	h := newHost(t, cfgOf(stdio("broken", "exit-init", "-state", file)), &host.Options{Clock: newHoldClock()})
	st := waitState(t, h, "broken", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "fatal: cannot open database") {
		t.Errorf("reason %q", st.Reason)
	}
	if n := starts(t, file); n != 1 {
		t.Errorf("the server was started %d times for one try, want 1", n)
	}
}

// A remote server that answers 401 is asked once per try (server/discover,
// then initialize): no pinned retry (issue 29, point 4).
func TestUnauthorizedIsNotRetriedPinned(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{RequireHeader: "Authorization: Bearer right"})
	h := newHost(t, cfgOf(remote("locked", config.TypeHTTP, srv.URL)), &host.Options{Clock: newHoldClock()})
	st := waitState(t, h, "locked", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "Unauthorized") {
		t.Errorf("reason %q", st.Reason)
	}
	if n := srv.Requests(); n != 2 {
		t.Errorf("%d requests for one try, want 2 (server/discover and initialize)", n)
	}
}
