package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/host"
)

// Version is the switchboard version; release builds set it with
// -ldflags "-X github.com/switchboard-mcp/switchboard/internal/cli.Version=v1.2.3".
var Version = ""

// ProtocolRevisions are the MCP protocol revisions switchboard speaks,
// oldest first.
var ProtocolRevisions = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// VersionOptions are the inputs of `switchboard version`.
type VersionOptions struct {
	IO   *IOStreams
	JSON bool
}

// NewVersionCmd returns `switchboard version`; runF, if not nil, replaces
// versionRun (tests).
func NewVersionCmd(f *Factory, runF func(context.Context, *VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the MCP protocol revisions spoken",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return versionRun(cmd.Context(), opts)
		},
	}
}

func versionRun(_ context.Context, opts *VersionOptions) error {
	v := buildVersion()
	if opts.JSON {
		return printJSON(opts.IO.Out, struct {
			Version           string   `json:"version"`
			ProtocolRevisions []string `json:"protocolRevisions"`
			Go                string   `json:"go"`
		}{v, ProtocolRevisions, runtime.Version()})
	}
	_, err := fmt.Fprintf(opts.IO.Out, "switchboard %s\nMCP protocol revisions: %s\n", v, strings.Join(ProtocolRevisions, ", "))
	return err
}

// buildVersion is Version, else the module version Go recorded, else
// host.Version: the one version string `version` prints, the host sends
// servers as its clientInfo and the gateway gives clients as serverInfo.
func buildVersion() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return host.Version
}

// noArgs is cobra.NoArgs with a usage error (exit 2).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return Usagef(fmt.Sprintf("run '%s --help' for usage", cmd.CommandPath()),
			"%s takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}

// exactArgs is cobra.ExactArgs with a usage error naming what is missing.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef("usage: "+cmd.UseLine(), "%s needs %s", cmd.CommandPath(), what)
		}
		return nil
	}
}
