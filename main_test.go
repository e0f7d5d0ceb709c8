package switchboard_test

import (
	"os"
	"testing"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestMain makes this test binary the servers its tests start
// (testserver.Command) and their supervisors.
func TestMain(m *testing.M) {
	switchboard.MaybeRunSupervisor()
	testserver.MaybeRun()
	os.Exit(m.Run())
}
