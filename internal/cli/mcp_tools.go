package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// MCPToolsOptions are the inputs of `mcp tools enable|disable`.
type MCPToolsOptions struct {
	IO      *IOStreams
	Factory *Factory
	Enable  bool
	Scope   string // local (default in a workspace) or user
	Force   bool   // record a name no scope defines even when a defined one is close
	Server  string
	Tools   []string
}

// newMCPToolsCmd returns `mcp tools`, which hides tools from the model or
// shows them again (tool filters).
func newMCPToolsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Hide a server's tools from the model, or show them again",
		Long: `Hide tools from the model (tool filters), or show them again.

A hidden tool is absent from "switchboard tools", every provider shape,
tool_search and the gateway's tools/list; calling it is refused (exit 3) with
the filter that hides it. Names are tool names as the server gives them
("delete_repo"), or globs with * ("delete_*").

  switchboard mcp tools disable github delete_repo 'merge_*'
  switchboard mcp tools enable github delete_repo

The filter is written to your own settings: for this workspace (local,
the default in a workspace) or for every workspace (--scope user), in
~/.switchboard/mcp.json under "toolFilters". A server's own "enabledTools" /
"disabledTools", the repository's .switchboard/workspace.json and the managed
configuration can filter too; every layer can only hide.

A server name no scope defines is recorded, for a server you add later,
unless a defined name is close to it ("gihtub" for "github"): that is
refused (exit 1) with the name meant; --force records it as given.`,
		Args: cobra.ArbitraryArgs,
		RunE: groupRunE,
	}
	cmd.AddCommand(newMCPToolsSwitchCmd(f, false), newMCPToolsSwitchCmd(f, true))
	return cmd
}

func newMCPToolsSwitchCmd(f *Factory, enable bool) *cobra.Command {
	opts := &MCPToolsOptions{IO: f.IO, Factory: f, Enable: enable}
	verb, short := "disable", "Hide tools of a server from the model"
	if enable {
		verb, short = "enable", "Show hidden tools of a server again"
	}
	cmd := &cobra.Command{
		Use:   verb + " SERVER TOOL...",
		Short: short,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return Usagef("usage: "+cmd.UseLine(), "%s needs a server and at least one tool", cmd.CommandPath())
			}
			return nil
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return completeServerNames(f)(cmd, args, toComplete)
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Server, opts.Tools = args[0], args[1:]
			return mcpToolsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "record the filter for a server name no scope defines, even when a defined one is close to it")
	cmd.Flags().StringVarP(&opts.Scope, "scope", "s", "", "where to write: local (this workspace; the default in one) or user (every workspace)")
	_ = cmd.RegisterFlagCompletionFunc("scope", cobra.FixedCompletions([]string{"local", "user"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func mcpToolsRun(ctx context.Context, opts *MCPToolsOptions) error {
	f := opts.Factory
	if err := checkName(opts.Server); err != nil {
		return err
	}
	for _, t := range opts.Tools {
		if strings.TrimSpace(t) == "" {
			return Usagef("give tool names or globs such as 'delete_*'", "an empty tool name")
		}
	}
	file := config.UserFile(f.Home(), f.HomeDir)
	root, inWorkspace := f.WorkspaceRoot()
	var objPath []string
	where := "for every workspace"
	switch opts.Scope {
	case "", "local":
		if !inWorkspace {
			if opts.Scope == "local" {
				return Usagef("run it inside a project, pass --workspace DIR, or use --scope user",
					"local scope needs a workspace, and none was found from %s", f.Cwd)
			}
			break
		}
		objPath = []string{"projects", localKeys(file, root)[0]}
		where = "for workspace " + f.tilde(root)
	case "user":
	default:
		return Usagef("use --scope local or --scope user", "tool filters are written to local or user scope, not %q", opts.Scope)
	}
	// A near miss (`github` typed `gihtub`) is refused as `mcp enable`
	// refuses it: the filter would land on a name nothing serves and leave
	// the tools meant shown. A name that is close to none is recorded, for
	// a server to be added later (the note below says so).
	verb := "hide tools of"
	if opts.Enable {
		verb = "show tools of"
	}
	if err := typoedName(f, opts.Server, true, opts.Force, verb); err != nil {
		return err
	}
	if err := config.SetToolsHidden(file, objPath, opts.Server, opts.Tools, !opts.Enable); err != nil {
		return configFileErr(err)
	}
	say := func(done string, tools []string) {
		fmt.Fprintf(opts.IO.Out, "%s %s of %q %s (%s)\n", done, termsafe.Line(strings.Join(tools, ", ")),
			opts.Server, termsafe.Line(where), termsafe.Line(f.tilde(file)))
	}
	if !opts.Enable {
		say("Hid", opts.Tools)
	}
	r, err := f.LoadConfig()
	var s *config.ResolvedServer
	if err == nil {
		s = r.Server(opts.Server)
	}
	if opts.Enable {
		// "Showed again" only for what is shown now: a tool another
		// filter (or a glob of yours, such as e*) still hides gets the
		// warning that says which, not a line saying it is back.
		var shown []string
		var hidden [][2]string
		for _, t := range opts.Tools {
			if s != nil {
				if hid, why := s.Tools.Hidden(t); hid {
					hidden = append(hidden, [2]string{t, why})
					continue
				}
			}
			shown = append(shown, t)
		}
		if len(shown) > 0 {
			say("Showed again", shown)
		}
		for _, h := range hidden {
			fmt.Fprintf(opts.IO.ErrOut, "warning: %s stays hidden: %s\n", termsafe.Line(h[0]), termsafe.Line(h[1]))
		}
	}
	if err == nil && s == nil {
		fmt.Fprintf(opts.IO.ErrOut, "note: no scope defines %q (yet)\n", opts.Server)
	}
	return nil
}
