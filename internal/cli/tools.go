package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

func init() {
	registerCommand(func(f *Factory) *cobra.Command { return NewToolsCmd(f, nil) })
}

// ToolsOptions are the inputs of `switchboard tools`.
type ToolsOptions struct {
	runtimeOptions
	// Server, if set, lists only that server's tools.
	Server string
	// Provider, if set, prints the tools as that model provider's tool
	// definitions (openai, anthropic, gemini), with or without --json.
	Provider string
	JSON     bool
}

// NewToolsCmd returns `switchboard tools`.
func NewToolsCmd(f *Factory, runF func(context.Context, *ToolsOptions) error) *cobra.Command {
	opts := &ToolsOptions{}
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools a model sees, as mcp__<server>__<tool>",
		Long: `Start the configured servers, wait at most --wait for them, and list the tools
of every connected server under the names a model sees (mcp__<server>__<tool>).
Servers still connecting are named in a warning on stderr.

With --json, print an array of {name, server, tool, title, description,
inputSchema, deferred, profiles, ui, permission, rule, ruleSource,
tightenedBy, conditionalRules}: the description as a model gets it (capped),
the input schema normalized; deferred when the tool waits for tool_search,
profiles the settings' profiles that show it, ui the MCP App it shows; and
what the permission rules say about calling the tool: permission is allow,
ask or deny, rule the rule that decided ("" for the default, ask) and
ruleSource its file, and tightenedBy "destructiveHint" when the tool's
annotation kept a broad grant (mcp__server) from allowing it. Rules with
argument conditions decide only some calls: they are listed in
conditionalRules. Title, deferred, profiles, ui, permission, ruleSource,
tightenedBy and conditionalRules are left out when empty. The table shows
the decision as its PERMISSION column.

Tools are pinned: a tool whose definition changed since the model was first
shown it is held (a project server's, or with "toolChanges": "ask") or served
and reported; stderr names them. 'switchboard tools diff' shows the change
word by word, 'switchboard tools accept SERVER [TOOL…]' pins it. On a terminal
a held change is asked about. Descriptions are listed as the model reads them:
invisible and deceptive characters removed or made visible.

Piped, the first line is the header (NAME SERVER PERMISSION DESCRIPTION
DEFERRED, tab-separated), then each tool is one tab-separated row with the
same five columns: name, server, permission, description, deferred (yes or
no). Skip the header with tail -n +2, or use --json.

With --provider openai|anthropic|gemini, print instead the JSON array of tool
definitions that provider's API takes, schemas cleaned for it (OpenAI:
{type:"function",function:{name,description,parameters}}; Anthropic: {name,
description,input_schema}; Gemini: function declarations {name,description,
parameters}). Provider shapes are JSON by nature, so they print as JSON with or
without --json.`,
		Example: `  switchboard tools
  switchboard tools --server github --json
  switchboard tools --provider gemini --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.runtimeOptions = newRuntimeOptions(f)
			opts.JSON = f.global().JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return toolsRun(cmd.Context(), opts)
		},
	}
	cmd.AddCommand(newToolsDiffCmd(f), newToolsAcceptCmd(f)) // toolpins.go
	cmd.Flags().StringVar(&opts.Server, "server", "", "list only the tools of server `NAME`")
	_ = cmd.RegisterFlagCompletionFunc("server", completeFlagServerNames(f))
	cmd.Flags().StringVar(&opts.Provider, "provider", "", "print the tools in `PROVIDER`'s own format: openai, anthropic or gemini")
	return cmd
}

// toolJSON is one element of `tools --json`, a contract scripts rely on.
type toolJSON struct {
	Name        string         `json:"name"`
	Server      string         `json:"server"`
	Tool        string         `json:"tool"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	// Deferred marks a tool left out of the model's list until tool_search
	// loads it (defer_loading, --tools, automatic deferral).
	Deferred bool `json:"deferred,omitempty"`
	// Profiles are the settings' profiles that show the tool (include
	// its server and do not filter it out).
	Profiles []string `json:"profiles,omitempty"`
	// UI is the ui:// resource the tool shows as an MCP App (its
	// _meta.ui.resourceUri, the server's own URI); "" without one.
	UI string `json:"ui,omitempty"`
	toolPermission
}

// toolPermission is what the permission rules (see package policy) say about
// calling a tool, its arguments aside; empty for a built-in tool and when
// the command checks no permissions.
type toolPermission struct {
	// Permission is allow, ask or deny.
	Permission policy.Action `json:"permission,omitempty"`
	// Rule is the rule that decided; "" for the default (ask).
	Rule string `json:"rule"`
	// RuleSource is where Rule is written.
	RuleSource string `json:"ruleSource,omitempty"`
	// TightenedBy names the annotation that turned an allow into an ask.
	TightenedBy string `json:"tightenedBy,omitempty"`
	// ConditionalRules are the rules with argument conditions that name
	// the tool: they decide the calls whose arguments they match.
	ConditionalRules []string `json:"conditionalRules,omitempty"`
}

// cell is the PERMISSION column: the decision, and the lists of the
// argument rules that decide some calls otherwise.
func (p toolPermission) cell() string {
	if p.Permission == "" {
		return "-"
	}
	s := string(p.Permission)
	if p.TightenedBy != "" {
		s += " (" + p.TightenedBy + ")"
	}
	if len(p.ConditionalRules) > 0 {
		s += " (some arguments: other rules)"
	}
	return s
}

// toolPermissions returns what the session's rules say about each tool.
func (s *session) toolPermissions() func(host.Tool) toolPermission {
	if s.opts.Policy == nil {
		return func(host.Tool) toolPermission { return toolPermission{} }
	}
	p := s.sb.Policy()
	if len(s.opts.SessionRules) > 0 {
		p = p.With(s.opts.SessionRules...)
	}
	rules := p.Rules()
	return func(t host.Tool) toolPermission {
		if t.Server == "" || t.Tool == nil {
			return toolPermission{} // built in (tool_search)
		}
		req := policy.Request{Tool: t.Name, Server: t.Server, ToolName: t.Tool.Name}
		if a := t.Tool.Annotations; a != nil {
			req.Annotations = policy.Annotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint != nil && *a.DestructiveHint}
		}
		d := p.Decide(req)
		out := toolPermission{Permission: d.Action, TightenedBy: d.TightenedBy}
		if d.Rule != nil {
			out.Rule, out.RuleSource = d.Rule.Text, d.Rule.Source.String()
		}
		for _, r := range rules {
			if r.Pattern().HasArgs() && r.Problem() == "" && r.Pattern().MatchName(req) {
				out.ConditionalRules = append(out.ConditionalRules, string(r.List)+" "+r.Text)
			}
		}
		return out
	}
}

func toolsRun(ctx context.Context, opts *ToolsOptions) (err error) {
	var provider shape.Provider
	if opts.Provider != "" {
		if provider, err = shape.ParseProvider(opts.Provider); err != nil {
			return UsageErr(err, "pass --provider openai, anthropic or gemini")
		}
	}
	s, lctx, cancel, err := startListing(ctx, &opts.runtimeOptions, opts.Server)
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()
	defer cancel()
	list, err := s.h.Tools(lctx)
	if err != nil && ctx.Err() != nil {
		return err
	}
	if s.opts.IO.CanPrompt && len(s.h.ToolChanges()) > 0 {
		// Held changes are asked about at the terminal first (toolpins.go).
		s.askToolChanges(lctx)
		if list, err = s.h.Tools(lctx); err != nil && ctx.Err() != nil {
			return err
		}
	}
	s.warn(list.Warnings)
	s.warnToolChanges()

	if provider != "" {
		if err := printProviderTools(opts.IO.Out, provider, list.Tools); err != nil {
			return err
		}
	} else if opts.JSON {
		perm := s.toolPermissions()
		ps := s.profiles()
		out := []toolJSON{}
		add := func(t host.Tool, deferred bool) {
			out = append(out, toolJSON{
				Name: t.Name, Server: t.Server, Tool: t.Tool.Name, Title: t.Tool.Title,
				Description:    toolsurface.CapDescription(t.Tool.Description, toolsurface.DefaultDescriptionCap),
				InputSchema:    toolsurface.NormalizeSchema(t.Tool.InputSchema),
				Deferred:       deferred,
				Profiles:       profilesShowing(ps, t.Server, t.Tool.Name),
				UI:             host.UIResourceURI(t.Tool),
				toolPermission: perm(t),
			})
		}
		for _, t := range list.Tools {
			add(t, false)
		}
		for _, t := range list.Deferred {
			add(t, true)
		}
		if err := printJSON(opts.IO.Out, out); err != nil {
			return err
		}
	} else if err := printTools(opts.IO, list.Tools, list.Deferred, s.toolPermissions()); err != nil {
		return err
	} else if opts.IO.IsTTY {
		printToolProfiles(opts.IO.Out, s.profiles(), append(slices.Clone(list.Tools), list.Deferred...))
	}
	if opts.Server != "" {
		if err := serverNotReady(s, opts.Server); err != nil {
			return err
		}
	}
	if len(list.Tools)+len(list.Deferred) > 0 {
		return nil
	}
	if opts.JSON || provider != "" {
		// A script gets [] on stdout; stderr says why, so that "the
		// list failed" is not read as "the server has no tools".
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", noToolsMessage(s))
	} else {
		fmt.Fprintln(opts.IO.ErrOut, noToolsMessage(s))
	}
	return nil
}

// printToolProfiles says, under the table, how many of the tools each
// profile of the settings shows (--json names them per tool).
func printToolProfiles(w io.Writer, ps config.Profiles, tools []host.Tool) {
	if len(ps) == 0 {
		return
	}
	count := map[string]int{}
	for _, t := range tools {
		if t.Tool != nil {
			for _, p := range profilesShowing(ps, t.Server, t.Tool.Name) {
				count[p]++
			}
		}
	}
	var parts []string
	for _, n := range ps.Names() {
		parts = append(parts, fmt.Sprintf("%s %d", termsafe.Line(n), count[n]))
	}
	fmt.Fprintf(w, "\nProfiles (tools shown): %s\n", strings.Join(parts, ", "))
}

// printProviderTools prints tools as provider p's tool definitions.
func printProviderTools(w io.Writer, p shape.Provider, tools []host.Tool) error {
	in := make([]toolsurface.Tool, 0, len(tools))
	for _, t := range tools {
		in = append(in, toolsurface.Tool{Name: t.Name, Description: t.Tool.Description, InputSchema: t.Tool.InputSchema})
	}
	shaped, err := shape.Tools(p, in)
	if err != nil {
		return FailureErr(err, "")
	}
	return printJSON(w, shaped)
}

// serverNotReady is the failure of a command aimed at one server that is
// not connected: its state and reason, and where to look.
func serverNotReady(s *session, name string) error {
	for _, st := range s.statuses() {
		if st.Name != name || st.State == host.StateConnected {
			continue
		}
		msg := fmt.Sprintf("server %s %s", name, st.State.Phrase())
		if st.Reason != "" {
			msg += ": " + st.Reason
		}
		hint := "run `switchboard status` for details"
		switch st.State {
		case host.StateNeedsApproval, host.StateApprovalStale:
			return RefusedErr(fmt.Errorf("%s", msg), "run `switchboard mcp approve "+name+"` to allow it to start")
		case host.StateDisabled:
			hint = "run `switchboard mcp enable " + name + "` to turn it on"
		}
		if h := headerHint(st); h != "" {
			hint = h
		}
		return FailureErr(fmt.Errorf("%s", msg), hint)
	}
	return nil
}

// headerHint is the advice for a remote server that refused access and
// publishes no OAuth metadata (oauth.ErrHeaderRequired): send the
// credential as a header, single-quoted so that the shell keeps ${TOKEN}
// for Switchboard to expand. "" for any other server.
func headerHint(st host.ServerStatus) string {
	if !strings.Contains(st.Reason, oauth.ErrHeaderRequired.Error()) {
		return ""
	}
	return fmt.Sprintf("give it the header it wants: `switchboard mcp remove %s`, then `switchboard mcp add --transport %s -H 'Authorization: Bearer ${TOKEN}' %s %s` (or add \"headers\" to its entry in %s)",
		st.Name, dashEmpty(string(st.Type)), st.Name, dashEmpty(commandText(st)), dashEmpty(st.File))
}

// noServerReadable reports a configuration with errors and no valid
// server: the files hold servers, perhaps, but none could be read, and
// saying "No MCP servers are configured" would send the user to add one.
func noServerReadable(cfg *config.Resolved) bool {
	errs := false
	for _, d := range cfg.Diagnostics {
		errs = errs || d.Severity == config.SeverityError
	}
	if !errs {
		return false
	}
	for _, rs := range cfg.Servers {
		if rs.Availability != config.Invalid {
			return false
		}
	}
	return true
}

// unreadableMessage is what an empty listing says when noServerReadable.
const unreadableMessage = "No server could be read because of the configuration errors below."

// noToolsMessage explains an empty tool list.
func noToolsMessage(s *session) string {
	if noServerReadable(s.cfg) {
		return unreadableMessage
	}
	if len(s.cfg.Servers) == 0 {
		return noServersText(s.opts.Importable)
	}
	statuses := s.h.Status()
	var failed []string
	for _, st := range statuses {
		if why, ok := st.ListErrors["tools/list"]; ok && st.State == host.StateConnected {
			failed = append(failed, fmt.Sprintf("%s (%s)", st.Name, why))
		}
	}
	if len(failed) > 0 {
		// Connected, but their lists failed: not "no server is connected".
		who := "server " + failed[0] + " is"
		if len(failed) > 1 {
			who = "servers " + strings.Join(failed, ", ") + " are"
		}
		return fmt.Sprintf("No tools: %s connected, but listing its tools failed. Run `switchboard status` for details; `switchboard tools` asks again.", who)
	}
	refused := s.sandboxRefusals(statuses)
	for _, st := range statuses {
		if r, ok := refused[st.Name]; ok {
			// Not slow: refused by its sandbox. Waiting would not help.
			return fmt.Sprintf("No tools: %s's sandbox refused it something: %s. To allow it: %s", st.Name, r.What, r.Fix)
		}
	}
	for _, st := range statuses {
		if st.State == host.StateConnecting {
			// Most often a first run: npx and uvx download the server
			// before it starts, which takes longer than the default wait.
			return fmt.Sprintf("No tools yet: still connecting after %s (a server run by npx or uvx downloads itself the first time; it gets 120s to start): wait for it once with `switchboard tools --wait 120s`.",
				formatElapsed(s.opts.Wait))
		}
	}
	return "No tools: no server is connected. Run `switchboard status` to see why."
}

// printTools prints the tool table: name, server, permission (perm), first
// line of the description (capped to the terminal). When some tools are
// deferred, they are listed too, and a deferred column tells them apart.
func printTools(ios *IOStreams, tools, deferred []host.Tool, perm func(host.Tool) toolPermission) error {
	if len(deferred) > 0 {
		return printToolsDeferred(ios, tools, deferred, perm)
	}
	t := newTablePrinter(ios, "name", "server", "permission", "description")
	if !ios.IsTTY {
		t = newTablePrinter(ios, "name", "server", "permission", "description", "deferred")
	}
	width := 80
	if ios.Width > 0 {
		width = ios.Width
	}
	nameW := 0
	cells := make([]string, len(tools))
	for i, tool := range tools {
		cells[i] = perm(tool).cell()
		nameW = max(nameW, len(tool.Name)+len(tool.Server)+len(cells[i]))
	}
	descW := max(width-nameW-9, 30)
	for i, tool := range tools {
		desc := descFirstLine(tool.Tool.Description)
		if ios.IsTTY {
			desc = truncRunes(desc, descW)
		}
		if !ios.IsTTY {
			// Piped columns are fixed (see the command's help): deferred
			// is always the fifth.
			t.AddRow(tool.Name, tool.Server, cells[i], desc, "no")
			continue
		}
		t.AddRow(tool.Name, tool.Server, cells[i], desc)
	}
	return t.Render()
}

func printToolsDeferred(ios *IOStreams, tools, deferred []host.Tool, perm func(host.Tool) toolPermission) error {
	isDeferred := map[string]bool{}
	for _, d := range deferred {
		isDeferred[d.Name] = true
	}
	// Both lists are sorted by name: merge them.
	all := make([]host.Tool, 0, len(tools)+len(deferred))
	for i, j := 0, 0; i < len(tools) || j < len(deferred); {
		if j == len(deferred) || i < len(tools) && tools[i].Name < deferred[j].Name {
			all = append(all, tools[i])
			i++
		} else {
			all = append(all, deferred[j])
			j++
		}
	}
	t := newTablePrinter(ios, "name", "server", "permission", "deferred", "description")
	if !ios.IsTTY {
		// Piped columns are fixed: deferred is always the fifth.
		t = newTablePrinter(ios, "name", "server", "permission", "description", "deferred")
	}
	width := 80
	if ios.Width > 0 {
		width = ios.Width
	}
	nameW := 0
	cells := make([]string, len(all))
	for i, tool := range all {
		cells[i] = perm(tool).cell()
		nameW = max(nameW, len(tool.Name)+len(tool.Server)+len(cells[i]))
	}
	descW := max(width-nameW-18, 30)
	for i, tool := range all {
		desc := descFirstLine(tool.Tool.Description)
		if ios.IsTTY {
			desc = truncRunes(desc, descW)
		}
		server, d := tool.Server, "no"
		if server == "" {
			server = "(built-in)"
		}
		if isDeferred[tool.Name] {
			d = "yes"
		}
		if !ios.IsTTY {
			t.AddRow(tool.Name, server, cells[i], desc, d)
			continue
		}
		t.AddRow(tool.Name, server, cells[i], d, desc)
	}
	return t.Render()
}

// descFirstLine is the first non-empty line of s, trimmed and made safe
// to print (termsafe.Line) before it is cut to a column: the server wrote
// it.
func descFirstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return termsafe.Line(l)
		}
	}
	return ""
}
