package host_test

import (
	"os"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestMain lets this test binary double as the test servers and as the
// process supervisor, so the tests spawn real child processes.
func TestMain(m *testing.M) {
	proc.MaybeRunSupervisor()
	testserver.MaybeRun()
	maybeRunHost()
	os.Exit(m.Run())
}
