// Command switchboard manages MCP servers and uses them by hand; see
// internal/cli for the commands and `switchboard --help`.
package main

import (
	"os"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/demoserver"
	"github.com/switchboard-mcp/switchboard/internal/proc"
)

func main() {
	// Both hooks return at once unless this process was re-executed as a
	// server supervisor or as the demo's example server. The test servers
	// are not here: they live with the tests (internal/testserver).
	proc.MaybeRunSupervisor()
	demoserver.MaybeRun()
	os.Exit(cli.Main())
}
