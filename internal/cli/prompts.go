package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func init() {
	registerCommand(func(f *Factory) *cobra.Command { return NewPromptsCmd(f, nil) })
	registerCommand(func(f *Factory) *cobra.Command { return NewPromptCmd(f, nil) })
}

// PromptsOptions are the inputs of `switchboard prompts`.
type PromptsOptions struct {
	runtimeOptions
	Server string
	JSON   bool
}

// NewPromptsCmd returns `switchboard prompts`.
func NewPromptsCmd(f *Factory, runF func(context.Context, *PromptsOptions) error) *cobra.Command {
	opts := &PromptsOptions{}
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "List the servers' prompts as /server:prompt slash commands",
		Long: `Start the configured servers, wait at most --wait for them, and list the prompts
of every connected server as the slash commands they become (/<server>:<prompt>),
with their arguments (required ones marked *). Render one with 'switchboard prompt'.

Piped, the first line is the header (PROMPT ARGUMENTS DESCRIPTION,
tab-separated), then one tab-separated row per prompt: the slash command, its
arguments separated by spaces, the first line of its description. Skip the
header with tail -n +2, or use --json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.runtimeOptions = newRuntimeOptions(f)
			opts.JSON = f.global().JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return promptsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Server, "server", "", "list only the prompts of server `NAME`")
	return cmd
}

type promptArgJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

type promptJSON struct {
	Name        string          `json:"name"` // /server:prompt
	Server      string          `json:"server"`
	Prompt      string          `json:"prompt"`
	Description string          `json:"description"`
	Arguments   []promptArgJSON `json:"arguments"`
}

// slashName is how a prompt is named in messages: /<server>:<prompt>,
// sanitized as toolsurface.SlashCommand does.
func slashName(server, prompt string) string { return toolsurface.SlashCommand(server, prompt) }

// slashCommands assigns the listed prompts their slash commands, telling
// apart prompts whose names collide once sanitized.
func slashCommands(prompts []host.Prompt) *toolsurface.SlashCommands {
	refs := make([]toolsurface.PromptRef, len(prompts))
	for i, p := range prompts {
		refs[i] = toolsurface.PromptRef{Server: p.Server, Prompt: p.Prompt.Name}
	}
	return toolsurface.NewSlashCommands(refs)
}

func promptsRun(ctx context.Context, opts *PromptsOptions) (err error) {
	s, lctx, cancel, err := startListing(ctx, &opts.runtimeOptions, opts.Server)
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()
	defer cancel()
	prompts, warnings, lerr := s.h.Prompts(lctx)
	if lerr != nil && ctx.Err() != nil {
		return lerr
	}
	s.warn(warnings)
	s.warnPromptChanges()
	cmds := slashCommands(prompts)
	command := func(p host.Prompt) string { c, _ := cmds.Command(p.Server, p.Prompt.Name); return c }
	if opts.JSON {
		out := []promptJSON{}
		for _, p := range prompts {
			j := promptJSON{Name: command(p), Server: p.Server, Prompt: p.Prompt.Name,
				Description: p.Prompt.Description, Arguments: []promptArgJSON{}}
			for _, a := range p.Prompt.Arguments {
				j.Arguments = append(j.Arguments, promptArgJSON{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			out = append(out, j)
		}
		if err := printJSON(opts.IO.Out, out); err != nil {
			return err
		}
	} else {
		t := newTablePrinter(opts.IO, "prompt", "arguments", "description")
		for _, p := range prompts {
			var args []string
			for _, a := range p.Prompt.Arguments {
				n := a.Name
				if a.Required {
					n += "*"
				}
				args = append(args, n)
			}
			desc := descFirstLine(p.Prompt.Description)
			if opts.IO.IsTTY {
				desc = truncRunes(desc, 70)
			}
			t.AddRow(command(p), strings.Join(args, " "), desc)
		}
		if err := t.Render(); err != nil {
			return err
		}
		if len(prompts) == 0 && noServerReadable(s.cfg) {
			fmt.Fprintln(opts.IO.ErrOut, unreadableMessage)
		} else if len(prompts) == 0 {
			fmt.Fprintln(opts.IO.ErrOut, "No prompts: no connected server offers any.")
		}
	}
	if opts.Server != "" {
		return serverNotReady(s, opts.Server)
	}
	return nil
}

// PromptOptions are the inputs of `switchboard prompt`.
type PromptOptions struct {
	runtimeOptions
	// Server and Prompt come from /server:prompt.
	Server, Prompt string
	// Args are the --arg k=v values.
	Args map[string]string
	JSON bool
}

// NewPromptCmd returns `switchboard prompt /server:prompt [--arg k=v]…`.
func NewPromptCmd(f *Factory, runF func(context.Context, *PromptOptions) error) *cobra.Command {
	var rawArgs []string
	cmd := &cobra.Command{
		Use:   "prompt /SERVER:PROMPT [--arg NAME=VALUE]…",
		Short: "Render one server prompt with its arguments",
		Long: `Render a server's prompt (prompts/get) with its arguments and print its messages.
Required arguments not given with --arg are asked for on a terminal; without one,
the command fails naming them.`,
		Example: `  switchboard prompt /demo:explain --arg topic=MCP`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 && argWords(args[1:]) {
				// `prompt /s:p city=Paris`: the prompt's arguments given
				// as words; they go with --arg.
				return Usagef("switchboard prompt "+shellQuote(args[0])+" "+argFlags(args[1:]),
					"prompt takes one /server:prompt; a prompt's arguments go with --arg NAME=VALUE")
			}
			if len(args) != 1 {
				return Usagef("e.g. switchboard prompt /demo:explain --arg topic=MCP", "prompt takes one /server:prompt, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			server, prompt, err := parseSlashName(args[0])
			if err != nil {
				return err
			}
			kv, err := parseKeyValues(rawArgs)
			if err != nil {
				return err
			}
			opts := &PromptOptions{runtimeOptions: newRuntimeOptions(f), Server: server, Prompt: prompt, Args: kv, JSON: f.global().JSON}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return promptRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&rawArgs, "arg", nil, "prompt argument `NAME=VALUE` (repeatable)")
	cmd.ValidArgsFunction = completePromptNames(f)
	_ = cmd.RegisterFlagCompletionFunc("arg", completePromptArgs(f))
	return cmd
}

// parseSlashName splits "/server:prompt" (the slash is optional).
func parseSlashName(s string) (server, prompt string, err error) {
	server, prompt, err = toolsurface.ParseSlashCommand(s)
	if err != nil {
		return "", "", UsageErr(err, "name a prompt as /server:prompt; `switchboard prompts` lists them")
	}
	return server, prompt, nil
}

// parseKeyValues reads repeated NAME=VALUE flags.
func parseKeyValues(raw []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range raw {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, Usagef("write each argument as --arg NAME=VALUE", "invalid --arg %q", kv)
		}
		out[k] = v
	}
	return out, nil
}

func promptRun(ctx context.Context, opts *PromptOptions) (err error) {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	if cfg.Server(opts.Server) == nil {
		return unknownServer(opts.IO.ErrOut, cfg, opts.Server)
	}
	s, err := startSessionWith(ctx, &opts.runtimeOptions, cfg, serverOnly(opts.Server))
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()
	s.wait(ctx, -1)
	if err := serverNotReady(s, opts.Server); err != nil {
		return err
	}
	prompts, _, lerr := s.h.Prompts(ctx)
	if lerr != nil {
		return FailureErr(fmt.Errorf("listing the prompts of %s: %w", opts.Server, lerr), "")
	}
	var def *mcp.Prompt
	var names []string
	// The command may be the sanitized one `prompts` showed, or the name
	// as the server spells it.
	ref, _ := slashCommands(prompts).Resolve("/" + opts.Server + ":" + opts.Prompt)
	for _, p := range prompts {
		names = append(names, p.Prompt.Name)
		if p.Server == ref.Server && p.Prompt.Name == ref.Prompt {
			def = p.Prompt
		}
	}
	if def == nil {
		for _, c := range s.h.PromptChanges() {
			if c.Server == opts.Server && c.Prompt == opts.Prompt && c.State == host.ChangeHeld {
				he := &host.HeldPromptError{Server: c.Server, Prompt: c.Prompt, Reason: c.Reason}
				return RefusedErr(he, he.Hint())
			}
		}
		hint := fmt.Sprintf("server %s offers no prompts", opts.Server)
		if len(names) > 0 {
			hint = fmt.Sprintf("server %s offers: %s", opts.Server, strings.Join(names, ", "))
		}
		return Failuref(hint, "server %s has no prompt %q", opts.Server, opts.Prompt)
	}
	if err := s.completeArgs(ctx, opts.Server, def, opts.Args); err != nil {
		return err
	}
	res, gerr := s.h.GetPrompt(ctx, opts.Server, def.Name, opts.Args)
	var held *host.HeldPromptError
	if errors.As(gerr, &held) { // changed since it was listed
		return RefusedErr(gerr, held.Hint())
	}
	if gerr != nil {
		if errors.Is(gerr, host.ErrNotConnected) {
			return FailureErr(gerr, "run `switchboard status` to see why")
		}
		return FailureErr(fmt.Errorf("rendering %s: %w", slashName(opts.Server, opts.Prompt), gerr), "")
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, res)
	}
	printPromptResult(opts.IO, res)
	return nil
}

// completeArgs asks on the terminal for the required arguments not given,
// or fails naming them.
func (s *session) completeArgs(ctx context.Context, server string, def *mcp.Prompt, args map[string]string) error {
	var missing []*mcp.PromptArgument
	for _, a := range def.Arguments {
		if _, ok := args[a.Name]; !ok && a.Required {
			missing = append(missing, a)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !s.opts.IO.CanPrompt {
		var names, flags []string
		for _, a := range missing {
			names = append(names, a.Name)
			flags = append(flags, "--arg "+a.Name+"=…")
		}
		return Usagef("pass "+strings.Join(flags, " "),
			"missing required argument%s of %s: %s", plural(len(names)), slashName(server, def.Name), strings.Join(names, ", "))
	}
	in := s.input()
	w := s.opts.IO.ErrOut
	for _, a := range missing {
		q := "  " + a.Name // askLoop makes the question safe to print
		if a.Title != "" && a.Title != a.Name {
			q = "  " + a.Title + " (" + a.Name + ")"
		}
		if a.Description != "" {
			fmt.Fprintf(w, "  %s\n", oneLineText(a.Description))
		}
		// Offer what the server suggests (completion/complete); "abc?"
		// asks again for the values that start with abc.
		if hint := s.suggest(ctx, server, def.Name, a.Name, "", args); hint != "" {
			fmt.Fprintf(w, "  %s (type the start of a value and ? for more)\n", termsafe.Line(hint))
		}
		v, err := askLoop(ctx, in, w, q+": ", func(answer string) (any, error) {
			if partial, ok := strings.CutSuffix(answer, "?"); ok {
				if hint := s.suggest(ctx, server, def.Name, a.Name, partial, args); hint != "" {
					return nil, errors.New(hint)
				}
				return nil, fmt.Errorf("no suggestions for %q", partial)
			}
			if strings.TrimSpace(answer) == "" {
				return nil, errors.New("an answer is required")
			}
			return answer, nil
		})
		if err != nil {
			return Usagef("pass --arg "+a.Name+"=…", "no value for required argument %s", a.Name)
		}
		args[a.Name] = v.(string)
	}
	return nil
}

// suggest returns "suggestions: a, b, c" for an argument of a prompt, or ""
// when the server offers none (or takes too long: a person is waiting).
func (s *session) suggest(ctx context.Context, server, prompt, arg, partial string, given map[string]string) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	got, err := s.h.Complete(ctx, server, host.PromptArgRef(prompt), arg, partial, given)
	if err != nil || len(got.Values) == 0 {
		return ""
	}
	const show = 10
	vals := got.Values
	more := ""
	if len(vals) > show || got.HasMore {
		n := max(got.Total, len(vals)) - min(len(vals), show)
		if n > 0 {
			more = fmt.Sprintf(" (+%d more)", n)
		} else {
			more = " (more)"
		}
		vals = vals[:min(len(vals), show)]
	}
	return "suggestions: " + strings.Join(vals, ", ") + more
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// printPromptResult prints a rendered prompt's messages: each preceded by
// its role when there is more than one, or on a terminal.
func printPromptResult(ios *IOStreams, res *mcp.GetPromptResult) {
	labels := len(res.Messages) > 1 || ios.IsTTY
	for i, m := range res.Messages {
		if labels {
			if i > 0 {
				fmt.Fprintln(ios.Out)
			}
			fmt.Fprintf(ios.Out, "[%s]\n", termsafe.Line(string(m.Role)))
		}
		// The server wrote the text: its lines are kept, anything the
		// terminal would act on is shown escaped.
		fmt.Fprintln(ios.Out, termsafe.Text(strings.TrimRight(contentText(m.Content), "\n")))
	}
}

// contentText renders one content block for a person.
func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource link %s]", c.URI)
	case *mcp.EmbeddedResource:
		if c.Resource != nil {
			if c.Resource.Text != "" {
				return c.Resource.Text
			}
			return fmt.Sprintf("[resource %s, %d bytes]", c.Resource.URI, len(c.Resource.Blob))
		}
	}
	return fmt.Sprintf("[%T]", c)
}
