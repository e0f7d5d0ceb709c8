package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/review"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/trust"
)

func init() {
	registerMCPCommand(func(f *Factory) *cobra.Command { return NewMCPApproveCmd(f, nil) })
	registerMCPCommand(func(f *Factory) *cobra.Command { return NewMCPRevokeCmd(f, nil) })
	registerMCPCommand(func(f *Factory) *cobra.Command { return NewMCPResetChoicesCmd(f, nil) })
}

// MCPApproveOptions are the inputs of `mcp approve`.
type MCPApproveOptions struct {
	IO      *IOStreams
	Factory *Factory
	Name    string
	// Yes approves without asking (for scripts).
	Yes bool
}

// NewMCPApproveCmd returns `mcp approve NAME [--yes]`; runF, if not nil,
// replaces mcpApproveRun.
func NewMCPApproveCmd(f *Factory, runF func(context.Context, *MCPApproveOptions) error) *cobra.Command {
	opts := &MCPApproveOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "approve NAME",
		Short: "Approve a project server (.mcp.json) to start in this workspace",
		Long: `Approve a project-scope server: one defined in the repository's .mcp.json.

Such servers never start until you approve exactly what would run. This shows
the literal command line, every env pair (dangerous ones called out), cwd, url,
headers and which of your environment variables it will see, then asks for
confirmation. The approval is stored in ~/.switchboard/trust.json for this
workspace and covers this exact definition: if the repository changes it, the
server is held as approval-stale until you approve it again.

--yes approves without asking, for scripts: review the definition first.`,
		Example: `  switchboard mcp approve filesystem
  switchboard mcp approve filesystem --yes`,
		Args:              exactArgs(1, "a server name"),
		ValidArgsFunction: completeApprovable(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpApproveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "approve without asking")
	return cmd
}

func mcpApproveRun(ctx context.Context, opts *MCPApproveOptions) error {
	f := opts.Factory
	if err := checkName(opts.Name); err != nil {
		return err
	}
	cfg, err := f.LoadConfig()
	if err != nil {
		return err
	}
	rs := cfg.Server(opts.Name)
	if rs == nil || rs.Availability == config.Missing {
		return unknownServer(opts.IO.ErrOut, cfg, opts.Name)
	}
	if rs.Trust != config.TrustRepo {
		where := string(rs.Scope) + " scope"
		if rs.File != "" {
			where += ", " + f.tilde(rs.File)
		}
		return Usagef("only project-scope servers (from the repository's .mcp.json) need approval",
			"server %q is not a project server (%s): it starts without approval", opts.Name, where)
	}
	if cfg.Workspace == "" {
		return Usagef("run it inside the project, or pass --workspace DIR", "no workspace found for %q", opts.Name)
	}
	lt, err := f.launchTrust(cfg)
	if err != nil {
		return err
	}
	if err := lt.Store().Err(); err != nil {
		return FailureErr(err, "")
	}
	v := lt.Store().Check(rs, cfg.Workspace)
	if v.Status == trust.Approved {
		fmt.Fprintf(opts.IO.Out, "%s is already approved in workspace %s (%s).\n", opts.Name, workspaceName(f, cfg.Workspace), v.Fingerprint)
		return nil
	}
	sandbox, helper := lt.sandboxPolicies(rs)
	writeReview(opts.IO.ErrOut, rs, v, lt.environ(), sandbox, helper)
	if !opts.Yes {
		if !opts.IO.CanPrompt {
			return Usagef("review the definition above, then run `switchboard mcp approve "+opts.Name+" --yes`",
				"cannot ask for confirmation: no terminal")
		}
		ok, err := askApproval(ctx, newLineReader(opts.IO.In), opts.IO.ErrOut, "Approve it? [y]es, [N]o: ")
		if err != nil || !ok {
			return FailureErr(fmt.Errorf("%s was not approved", opts.Name), "")
		}
	}
	a, err := lt.Store().Approve(cfg.Workspace, rs, lt.now())
	if err != nil {
		return FailureErr(err, "")
	}
	fmt.Fprintf(opts.IO.Out, "Approved %s for workspace %s (%s).\n", opts.Name, workspaceName(f, cfg.Workspace), a.Fingerprint)
	if rs.Availability != config.Available {
		why := rs.DisabledReason
		if err := rs.Err(); err != nil {
			why = err.Error()
		}
		if why != "" {
			why = ": " + why
		}
		fmt.Fprintf(opts.IO.ErrOut, "note: %s is %s%s, so it still will not start.\n", opts.Name, rs.Availability, termsafe.Line(why))
	}
	return nil
}

// workspaceName names a workspace for people: its path as found, and the
// directory it resolves to when that differs (approvals are filed under
// the resolved path, see trust.WorkspaceKey).
func workspaceName(f *Factory, ws string) string {
	name := f.tilde(ws)
	if k := trust.WorkspaceKey(ws); k != "" && k != ws {
		name += " (" + f.tilde(k) + ")"
	}
	return termsafe.Line(name) // a directory name can hold escape sequences
}

// MCPRevokeOptions are the inputs of `mcp revoke`.
type MCPRevokeOptions struct {
	IO      *IOStreams
	Factory *Factory
	Name    string
	All     bool
}

// NewMCPRevokeCmd returns `mcp revoke NAME | --all`; runF, if not nil,
// replaces mcpRevokeRun.
func NewMCPRevokeCmd(f *Factory, runF func(context.Context, *MCPRevokeOptions) error) *cobra.Command {
	opts := &MCPRevokeOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "revoke NAME | --all",
		Short: "Withdraw the approval of a project server in this workspace",
		Long: `Withdraw the approval of a project server (or of all, with --all) in this
workspace. A server that is running now is not stopped; it will ask for
approval before it starts again.`,
		Example: `  switchboard mcp revoke filesystem
  switchboard mcp revoke --all`,
		ValidArgsFunction: completeServerNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.All && len(args) > 0:
				return Usagef("pass a name or --all, not both", "revoke takes a server name or --all")
			case !opts.All && len(args) != 1:
				return Usagef("run 'switchboard mcp revoke --help' for usage", "revoke takes one server name, or --all")
			}
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpRevokeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "revoke every approval of this workspace")
	return cmd
}

// trustWorkspace returns the workspace and store of an approval command.
func trustWorkspace(f *Factory, verb string) (string, *trust.Store, error) {
	root, ok := f.WorkspaceRoot()
	if !ok {
		return "", nil, Usagef("run it inside a project, or pass --workspace DIR",
			"%s works per workspace, and none was found from %s (no .mcp.json, .switchboard/ or .git above it)", verb, f.Cwd)
	}
	st := trust.Open(f.Home())
	if err := st.Err(); err != nil {
		return "", nil, FailureErr(err, "")
	}
	return root, st, nil
}

const revokeNote = review.RevokeNote

func mcpRevokeRun(_ context.Context, opts *MCPRevokeOptions) error {
	f := opts.Factory
	if opts.All {
		return resetChoices(opts.IO, f, "revoke")
	}
	if err := checkName(opts.Name); err != nil {
		return err
	}
	root, st, err := trustWorkspace(f, "revoke")
	if err != nil {
		return err
	}
	found, err := st.Revoke(root, opts.Name)
	if err != nil {
		return FailureErr(err, "")
	}
	if !found {
		// Nothing to undo fails, as `mcp logout` of a server without
		// tokens does, and as every name that names nothing (README, exit
		// codes): a script learns that the name it revoked was not there.
		return FailureErr(fmt.Errorf("%s was not approved in workspace %s; nothing to revoke", opts.Name, workspaceName(f, root)), unapprovedHint(f, opts.Name))
	}
	fmt.Fprintf(opts.IO.Out, "Revoked the approval of %s in workspace %s. %s\n", opts.Name, workspaceName(f, root), revokeNote)
	return nil
}

// MCPResetChoicesOptions are the inputs of `mcp reset-project-choices`.
type MCPResetChoicesOptions struct {
	IO      *IOStreams
	Factory *Factory
}

// NewMCPResetChoicesCmd returns `mcp reset-project-choices`; runF, if not
// nil, replaces its run function.
func NewMCPResetChoicesCmd(f *Factory, runF func(context.Context, *MCPResetChoicesOptions) error) *cobra.Command {
	opts := &MCPResetChoicesOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:   "reset-project-choices",
		Short: "Forget every project server approval of this workspace",
		Long: `Forget every approval given to project servers (.mcp.json) in this workspace:
each will ask again before it starts. Running servers are not stopped.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return resetChoices(opts.IO, f, "reset-project-choices")
		},
	}
}

func resetChoices(ios *IOStreams, f *Factory, verb string) error {
	root, st, err := trustWorkspace(f, verb)
	if err != nil {
		return err
	}
	names, err := st.Reset(root)
	if err != nil {
		return FailureErr(err, "")
	}
	if len(names) == 0 {
		fmt.Fprintf(ios.Out, "No project server approvals to forget in workspace %s.\n", workspaceName(f, root))
		return nil
	}
	fmt.Fprintf(ios.Out, "Forgot %d approval(s) in workspace %s: %s. %s\n", len(names), workspaceName(f, root), strings.Join(names, ", "), revokeNote)
	return nil
}

// unapprovedHint is the hint of a revoke that found no approval (and of a
// logout that found no tokens): the name meant, when no scope defines this
// one and a defined one is close to it.
func unapprovedHint(f *Factory, name string) string {
	cfg, err := f.LoadConfig()
	if err != nil || cfg.Server(name) != nil {
		return ""
	}
	var near []string
	for _, n := range nearestNames(name, cfg) {
		if n != name {
			near = append(near, n)
		}
	}
	if len(near) == 0 {
		return fmt.Sprintf("no scope defines a server named %q", name)
	}
	return fmt.Sprintf("no scope defines a server named %q; did you mean %s?", name, strings.Join(near, ", "))
}
