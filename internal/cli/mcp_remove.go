package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
)

// MCPRemoveOptions are the inputs of `mcp remove`.
type MCPRemoveOptions struct {
	IO      *IOStreams
	Factory *Factory
	Name    string
	// Scope is --scope; "" removes from the one scope that defines the
	// name.
	Scope string
}

// NewMCPRemoveCmd returns `mcp remove`; runF, if not nil, replaces
// mcpRemoveRun.
func NewMCPRemoveCmd(f *Factory, runF func(context.Context, *MCPRemoveOptions) error) *cobra.Command {
	opts := &MCPRemoveOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:     "remove NAME [--scope user|project|local]",
		Aliases: []string{"rm"},
		Short:   "Remove a server from a scope",
		Long: `Remove a server's entry (and the comments that belong to it) from its file.
Without --scope, the server must be defined in exactly one scope.`,
		Args:              exactArgs(1, "a server name"),
		ValidArgsFunction: completeServerNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpRemoveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Scope, "scope", "s", "", "the scope to remove it from: user, project or local")
	registerScopeCompletion(cmd)
	return cmd
}

func mcpRemoveRun(ctx context.Context, opts *MCPRemoveOptions) error {
	f := opts.Factory
	if opts.Scope != "" {
		scope, err := parseScope(opts.Scope)
		if err != nil {
			return err
		}
		t, err := f.target(scope)
		if err != nil {
			return err
		}
		return removeFrom(f, t, opts.Name)
	}

	defined, err := f.definedIn(opts.Name)
	if err != nil {
		return err
	}
	switch len(defined) {
	case 0:
		return notDefinedErr(f, opts.Name)
	case 1:
		return removeFrom(f, defined[0], opts.Name)
	}
	var scopes []string
	for _, d := range defined {
		scopes = append(scopes, string(d.Scope))
	}
	return Usagef(fmt.Sprintf("choose one: switchboard mcp remove %s --scope %s", opts.Name, scopes[0]),
		"server %q is defined in several scopes: %s", opts.Name, strings.Join(scopes, ", "))
}

func removeFrom(f *Factory, t scopeTarget, name string) error {
	// Every entry of the workspace loses it, so that no other spelling
	// brings it back.
	found := false
	for _, p := range append([][]string{t.ObjPath}, t.Others...) {
		ok, err := config.RemoveServer(t.File, p, name)
		if err != nil {
			return configFileErr(err)
		}
		found = found || ok
	}
	if !found {
		hint := "see 'switchboard mcp list' for where servers are defined"
		if defined, err := f.definedIn(name); err == nil && len(defined) > 0 {
			hint = fmt.Sprintf("it is in %s scope: switchboard mcp remove %s --scope %s", defined[0].Scope, name, defined[0].Scope)
		}
		return Failuref(hint, "no server %q in %s", name, t.describe(f))
	}
	fmt.Fprintf(f.IO.Out, "Removed server %q from %s\n", name, t.describe(f))
	return nil
}

// notDefinedErr explains why a name cannot be removed: it is not in any
// file the mcp commands write (it may be a managed or --mcp-config server).
func notDefinedErr(f *Factory, name string) error {
	if r, err := f.LoadConfig(); err == nil {
		if s := r.Server(name); s != nil {
			switch s.Scope {
			case config.ScopeManaged:
				return RefusedErr(fmt.Errorf("server %q is defined by managed configuration (%s)", name, s.File),
					"ask your administrator; disable it for this workspace with: switchboard mcp disable "+name)
			case config.ScopeFlag:
				return Usagef("drop it from the --mcp-config you passed", "server %q comes from --mcp-config, not a scope file", name)
			}
		}
	}
	return Failuref("see 'switchboard mcp list' for the configured servers", "no server named %q in the user, project or local scope", name)
}
