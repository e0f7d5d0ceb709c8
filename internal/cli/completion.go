package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
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
