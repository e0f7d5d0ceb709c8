package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// MCPEnableOptions are the inputs of `mcp enable` and `mcp disable`.
type MCPEnableOptions struct {
	IO      *IOStreams
	Factory *Factory
	Name    string
	Enable  bool
	// Force records a name no scope defines even when a defined one is
	// close to it (see mcpEnableRun).
	Force bool
}

// NewMCPEnableCmd returns `mcp enable` (enable true) or `mcp disable`;
// runF, if not nil, replaces mcpEnableRun.
func NewMCPEnableCmd(f *Factory, enable bool, runF func(context.Context, *MCPEnableOptions) error) *cobra.Command {
	opts := &MCPEnableOptions{IO: f.IO, Factory: f, Enable: enable}
	verb, short := "enable", "Enable a server for this workspace"
	if !enable {
		verb, short = "disable", "Disable a server for this workspace"
	}
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Long: short + `.

This records your own choice for this workspace in your user file
(~/.switchboard/mcp.json, under "projects" → the workspace →
"enabledMcpServers" / "disabledMcpServers"), never in the repository and
never in a server's definition. Your choice beats every file of the
repository (.mcp.json, .switchboard/workspace.json), whose lists may only
switch servers off; only managed policy stands above it. Enabling a server you
disabled here forgets that choice when nothing else switches it off (the file is
as it was before the disable). Enabling a name that
no scope defines is allowed: it shows as missing until it is added. A name
close to a defined one is taken for a typo and refused with the name meant
(--force records it as it is).`,
		Args:              exactArgs(1, "a server name"),
		ValidArgsFunction: completeServerNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpEnableRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "record NAME even if no scope defines it and a defined name is close to it")
	return cmd
}

func mcpEnableRun(ctx context.Context, opts *MCPEnableOptions) error {
	f := opts.Factory
	if err := checkName(opts.Name); err != nil {
		return err
	}
	verb := "enable"
	if !opts.Enable {
		verb = "disable"
	}
	root, ok := f.WorkspaceRoot()
	if !ok {
		return Usagef("run it inside a project, or pass --workspace DIR",
			"%s works per workspace, and none was found from %s (no .mcp.json, .switchboard/ or .git above it)", verb, f.Cwd)
	}
	if err := typoedName(f, opts.Name, opts.Enable, opts.Force, verb); err != nil {
		return err
	}
	// The user's choice is kept in the user's own file, never in the
	// repository: a file the repository commits may only switch servers
	// off, so it could not carry this "on" (and a "off" there would be
	// shared with everyone who clones it).
	file := config.UserFile(f.Home(), f.HomeDir)
	key := localKeys(file, root)[0]
	if !opts.Enable || !enabledByClearing(f, file, key, opts.Name) {
		if err := config.SetLocalEnablement(file, key, opts.Name, opts.Enable); err != nil {
			return configFileErr(err)
		}
	}
	done := "Enabled"
	if !opts.Enable {
		done = "Disabled"
	}
	fmt.Fprintf(opts.IO.Out, "%s %q for workspace %s (%s)\n", done, opts.Name, termsafe.Line(f.tilde(root)), termsafe.Line(f.tilde(file)))

	// Say what still stands in the way, or that nothing defines it.
	r, err := f.LoadConfig()
	if err != nil {
		return nil
	}
	s := r.Server(opts.Name)
	switch {
	case s == nil && !opts.Enable:
		fmt.Fprintf(opts.IO.ErrOut, "note: no scope defines %q\n", opts.Name)
	case s == nil || s.Availability == config.Missing:
		fmt.Fprintf(opts.IO.ErrOut, "note: no scope defines %q; it shows as missing until you add it (switchboard mcp add %s ...)\n", opts.Name, opts.Name)
	case opts.Enable && s.Availability == config.Disabled:
		fmt.Fprintf(opts.IO.ErrOut, "warning: %q stays disabled: %s\n", opts.Name, termsafe.Line(s.DisabledReason))
	case opts.Enable && s.Availability == config.Invalid:
		fmt.Fprintf(opts.IO.ErrOut, "warning: %q is invalid: %s\n", opts.Name, termsafe.Line(s.Err().Error()))
	}
	return nil
}

// enabledByClearing enables name by forgetting the user's own choice for
// it (a disable undone gives back the file as it was), when that is
// enough: a defined server that nothing else switches off. Otherwise the
// choice is recorded as an enable (it beats the repository's lists).
func enabledByClearing(f *Factory, file, key, name string) bool {
	cfg, err := f.LoadConfig()
	if err != nil {
		return false
	}
	if s := cfg.Server(name); s == nil || s.Availability == config.Missing {
		return false // recorded: it shows as missing until it is added
	}
	if err := config.ClearLocalEnablement(file, key, name); err != nil {
		return false
	}
	cfg, err = f.LoadConfig()
	if err != nil {
		return false
	}
	s := cfg.Server(name)
	return s != nil && s.Availability != config.Disabled
}

// typoedName refuses a name no scope defines when a defined one is close
// to it: `mcp enable ech` meant echo, and recording "ech" would leave echo
// as it was and add a missing server. Disabling a name that only the
// enable lists hold (a missing server) is undoing such a record, and
// allowed. force records the name as it is.
func typoedName(f *Factory, name string, enable, force bool, verb string) error {
	if force {
		return nil
	}
	cfg, err := f.LoadConfig()
	if err != nil {
		return nil // the edit reports what is wrong with the files
	}
	if s := cfg.Server(name); s != nil && (s.Availability != config.Missing || !enable) {
		return nil
	}
	var near []string
	for _, n := range nearestNames(name, cfg) {
		if s := cfg.Server(n); n != name && s != nil && s.Availability != config.Missing {
			near = append(near, n)
		}
	}
	if len(near) == 0 {
		return nil
	}
	return Failuref(fmt.Sprintf("did you mean %s? (pass --force to %s %q anyway)", strings.Join(near, ", "), verb, name),
		"no scope defines a server named %q", name)
}
