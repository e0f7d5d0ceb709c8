// Command switchboard manages MCP servers and uses them by hand; see
// internal/cli for the commands and `switchboard --help`.
package main

import (
	"os"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func main() {
	// Both hooks return at once unless this process was re-executed as a
	// server supervisor or as a bundled test server.
	proc.MaybeRunSupervisor()
	testserver.MaybeRun()
	os.Exit(cli.Main())
}
