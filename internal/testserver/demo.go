package testserver

import (
	"context"
	"flag"

	"github.com/switchboard-mcp/switchboard/internal/demoserver"
)

// The demo server is internal/demoserver, the one server the switchboard
// binary ships; it is registered here too so that tests reach it by name
// like every other server.
func init() {
	register("demo", serverDef{
		doc:       "the bundled example for `switchboard demo` (internal/demoserver): tools echo, add, word_count, roll_dice; prompt explain; resource demo://readme",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			p.build = demoserver.New
			return p.buildAndServe
		},
	})
}
