package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newDemoPlaceholderCmd stands in for `switchboard demo` until the runtime
// registers the real one (registerCommand); NewRootCmd adds it only then.
func newDemoPlaceholderCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Run the whole chain end to end on a bundled example server",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprint(f.IO.Out, `switchboard demo will run the whole chain on a bundled example server:
  1. resolve a configuration holding the bundled server (no files are touched),
  2. check launch trust and start the server in the background,
  3. list its tools as the model sees them (mcp__<server>__<tool>),
  4. call one tool through the permission check and print the enveloped result.
The runtime is not in this build yet; until it is, try the configuration side:
  switchboard mcp add time -- uvx mcp-server-time
  switchboard mcp list
`)
			return nil
		},
	}
}
