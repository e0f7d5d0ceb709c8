package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

var completionShells = []string{"bash", "zsh", "fish", "powershell"}

func newCompletionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script",
		Long: `Print a completion script for your shell. For example:

  bash:        source <(switchboard completion bash)
  zsh:         switchboard completion zsh > "${fpath[1]}/_switchboard"
  fish:        switchboard completion fish > ~/.config/fish/completions/switchboard.fish
  powershell:  switchboard completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: completionShells,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return Usagef("usage: switchboard completion "+strings.Join(completionShells, "|"), "completion needs the name of a shell")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), f.IO.Out
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return Usagef("choose one of "+strings.Join(completionShells, ", "), "unknown shell %q", args[0])
		},
	}
}

// completeServerNames completes the first argument with the configured
// server names (those that match what was typed so far).
func completeServerNames(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		r, err := f.LoadConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []cobra.Completion
		for _, s := range r.Servers {
			if strings.HasPrefix(s.Name, toComplete) {
				names = append(names, cobra.CompletionWithDesc(s.Name, fmt.Sprintf("%s, %s scope", s.Effective.Type, s.Scope)))
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFlagServerNames completes a flag's value (tools --server) with
// the configured server names.
func completeFlagServerNames(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	names := completeServerNames(f)
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return names(cmd, nil, toComplete)
	}
}

// completeToolNames completes `call` with the names a model sees
// (mcp__server__tool), deferred tools included and filtered ones not. Once
// the server's part is typed, only that server is started.
func completeToolNames(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var keep func(config.ResolvedServer) bool
		if rest, ok := strings.CutPrefix(toComplete, "mcp__"); ok {
			if server, _, ok := strings.Cut(rest, "__"); ok && server != "" {
				keep = serverOnly(server)
			}
		}
		ctx := context.Background()
		s, err := completionSession(ctx, f, keep)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer s.close(nil)
		list, _ := s.h.Tools(ctx)
		if list == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, t := range append(append([]host.Tool(nil), list.Tools...), list.Deferred...) {
			if t.Server != "" && strings.HasPrefix(t.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(termsafe.Line(t.Name), descFirstLine(t.Tool.Description)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeResourceRefs completes `read` with the @server:uri of every
// listed resource (templates need filling in, so they are left out). Once
// "@server:" is typed, only that server is started.
func completeResourceRefs(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var keep func(config.ResolvedServer) bool
		if server, _, ok := strings.Cut(strings.TrimPrefix(toComplete, "@"), ":"); ok && server != "" {
			keep = serverOnly(server)
		}
		ctx := context.Background()
		s, err := completionSession(ctx, f, keep)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer s.close(nil)
		resources, _, _ := s.h.Resources(ctx)
		var out []cobra.Completion
		for _, r := range resources {
			ref := termsafe.Line(resourceRef(r.Server, r.Resource.URI))
			if strings.HasPrefix(ref, toComplete) || strings.HasPrefix(ref, "@"+toComplete) {
				out = append(out, cobra.CompletionWithDesc(ref, descFirstLine(r.Resource.Name)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeApprovable completes `mcp approve` with only the servers it can
// approve: project servers whose launch needs a person's approval (new, or
// changed since approved). Nothing is started.
func completeApprovable(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := f.LoadConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		lt, err := f.launchTrust(cfg)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, rs := range lt.Pending(cfg) {
			if strings.HasPrefix(rs.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(rs.Name, lt.Verdict(rs).Status.String()))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
