package cli

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// completionWait bounds how long shell completion waits for servers: a
// person is waiting at the prompt.
const completionWait = 5 * time.Second

// completionSession starts a host for shell completion: nothing drawn or
// printed on stderr (the shell owns the terminal), nobody asked anything,
// and a short wait for the servers.
func completionSession(ctx context.Context, f *Factory, keep func(config.ResolvedServer) bool) (*session, error) {
	o := newRuntimeOptions(f)
	quiet := *o.IO
	quiet.ErrOut, quiet.CanPrompt = io.Discard, false
	o.IO, o.ErrTTY = &quiet, false
	o.Wait = min(max(o.Wait, 0), completionWait)
	// Nothing runs on these servers: no need to give them time to wind down.
	o.HostOptions = func(h *host.Options) { h.CloseGrace = 300 * time.Millisecond }
	s, err := startSession(ctx, &o, keep)
	if err != nil {
		return nil, err
	}
	s.wait(ctx, o.Wait)
	return s, nil
}

// completePromptNames completes `switchboard prompt` with the slash
// commands of the connected servers' prompts.
func completePromptNames(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := context.Background()
		s, err := completionSession(ctx, f, nil)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer s.close(nil)
		prompts, _, _ := s.h.Prompts(ctx)
		cmds := slashCommands(prompts)
		var out []cobra.Completion
		for _, p := range prompts {
			c, _ := cmds.Command(p.Server, p.Prompt.Name)
			if strings.HasPrefix(c, toComplete) || strings.HasPrefix(c, "/"+toComplete) {
				out = append(out, cobra.CompletionWithDesc(c, descFirstLine(p.Prompt.Description)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completePromptArgs completes --arg of `switchboard prompt /server:prompt`:
// first the prompt's argument names (NAME=), then, after the '=', the
// values the server suggests through completion/complete, given the other
// --arg values already on the line.
func completePromptArgs(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		if len(args) != 1 {
			return nil, none
		}
		server, prompt, err := parseSlashName(args[0])
		if err != nil {
			return nil, none
		}
		given := map[string]string{}
		if raw, err := cmd.Flags().GetStringArray("arg"); err == nil {
			for _, kv := range raw {
				if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
					given[k] = v
				}
			}
		}
		ctx := context.Background()
		s, err := completionSession(ctx, f, serverOnly(server))
		if err != nil {
			return nil, none
		}
		defer s.close(nil)
		prompts, _, _ := s.h.Prompts(ctx)
		ref, ok := slashCommands(prompts).Resolve("/" + server + ":" + prompt)
		if !ok {
			return nil, none
		}
		var def *host.Prompt
		for i := range prompts {
			if prompts[i].Server == ref.Server && prompts[i].Prompt.Name == ref.Prompt {
				def = &prompts[i]
			}
		}
		if def == nil {
			return nil, none
		}
		name, partial, hasValue := strings.Cut(toComplete, "=")
		if !hasValue {
			var out []cobra.Completion
			for _, a := range def.Prompt.Arguments {
				if _, done := given[a.Name]; done || !strings.HasPrefix(a.Name, name) {
					continue
				}
				// The shell shows descriptions and types the names into
				// the command line: nothing in them may act on the terminal
				// (or add a tab, which would split name from description).
				out = append(out, cobra.CompletionWithDesc(termsafe.Line(a.Name)+"=", oneLineText(a.Description)))
			}
			return out, none | cobra.ShellCompDirectiveNoSpace
		}
		delete(given, name)
		got, err := s.h.Complete(ctx, ref.Server, host.PromptArgRef(ref.Prompt), name, partial, given)
		if err != nil {
			return nil, none
		}
		out := make([]cobra.Completion, 0, len(got.Values))
		for _, v := range got.Values {
			out = append(out, name+"="+termsafe.Line(v))
		}
		return out, none
	}
}
