package toolsurface_test

import (
	"os"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestMain lets this test binary double as the test servers (the fork-exec
// trick), so the large-output tests call a real server through a host.
func TestMain(m *testing.M) {
	testserver.MaybeRun()
	os.Exit(m.Run())
}
