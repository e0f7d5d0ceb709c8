package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// What the model reads (docs/security.md): `tools diff`, `tools accept`,
// the terminal's question about a changed tool, and what tools, status,
// call and doctor say about pinned tools, deceptive text and call hooks.

// ToolsDiffOptions are the inputs of `switchboard tools diff`.
type ToolsDiffOptions struct {
	runtimeOptions
	// Server, if set, shows only that server's changes.
	Server string
	JSON   bool
}

func newToolsDiffCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "diff [SERVER]",
		Short: "Show tools and prompts whose definition changed since it was pinned, word by word",
		Long: `Start the servers (or SERVER), list their tools and prompts, and show every tool
whose definition — name, description, input schema, annotations — differs from
the one pinned for this workspace, field by field, as a word diff: [-removed-]
{+added+}; then every prompt whose name, title, description or arguments do.
Each says whether it is held (not shown to the model until you accept it), served
("toolChanges": "notify") or was accepted ("toolChanges": "accept"), and the
command that accepts it. Then the deceptive text found in tool and prompt
definitions (tag characters, bidi controls, zero-width characters…), which the
model reads removed or made visible.

With --json, print {changes: [{server, tool, name, kind, state, reason, pinnedAt,
changes: [{field, old, new, added, removed, words}]}], promptChanges: [{server,
prompt, kind, state, reason, pinnedAt, changes}], findings: [{server, tool,
findings: [{kind, field, count, action, hidden}]}]}.`,
		Example: `  switchboard tools diff
  switchboard tools diff github --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &ToolsDiffOptions{runtimeOptions: newRuntimeOptions(f), JSON: f.global().JSON}
			if len(args) == 1 {
				opts.Server = args[0]
			}
			return toolsDiffRun(cmd.Context(), opts)
		},
	}
}

// toolsDiffJSON is `tools diff --json`.
type toolsDiffJSON struct {
	Changes       []host.ToolChange   `json:"changes"`
	PromptChanges []host.PromptChange `json:"promptChanges"`
	Findings      []serverFindings    `json:"findings"`
}

type serverFindings struct {
	Server   string                    `json:"server"`
	Tool     string                    `json:"tool"`
	Findings []toolsurface.TextFinding `json:"findings"`
}

func toolsDiffRun(ctx context.Context, opts *ToolsDiffOptions) (err error) {
	s, lctx, cancel, err := startListing(ctx, &opts.runtimeOptions, opts.Server)
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()
	defer cancel()
	list, _ := s.h.Tools(lctx)
	_, _, _ = s.h.Prompts(lctx) // their findings too
	if list != nil {
		s.warn(list.Warnings)
	}
	if opts.Server != "" {
		if err := serverNotReady(s, opts.Server); err != nil {
			return err
		}
	}
	out := toolsDiffJSON{Changes: s.h.ToolChanges(), PromptChanges: s.h.PromptChanges(), Findings: []serverFindings{}}
	if out.Changes == nil {
		out.Changes = []host.ToolChange{}
	}
	if out.PromptChanges == nil {
		out.PromptChanges = []host.PromptChange{}
	}
	var unchecked []string // still connecting: their tools were not compared
	for _, st := range s.statuses() {
		if st.State == host.StateConnecting {
			unchecked = append(unchecked, termsafe.Line(st.Name))
		}
		for _, tf := range st.Findings {
			out.Findings = append(out.Findings, serverFindings{Server: st.Name, Tool: tf.Tool, Findings: tf.Findings})
		}
		if st.PinError != "" {
			fmt.Fprintf(opts.IO.ErrOut, "warning: %s: %s\n", termsafe.Line(st.Name), termsafe.Line(st.PinError))
		}
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, out)
	}
	switch {
	case len(out.Changes) > 0 || len(out.PromptChanges) > 0:
	case len(unchecked) > 0:
		fmt.Fprintf(opts.IO.Out, "No tool or prompt of the servers that connected changed since it was pinned; not checked, still connecting: %s (wait for them with --wait 120s).\n", strings.Join(unchecked, ", "))
	default:
		fmt.Fprintln(opts.IO.Out, "No tool or prompt changed since it was pinned.")
	}
	for _, c := range out.Changes {
		writeToolChange(opts.IO.Out, c, opts.tilde(s.cfg.Workspace))
	}
	for _, c := range out.PromptChanges {
		writePromptChange(opts.IO.Out, c, opts.tilde(s.cfg.Workspace))
	}
	if len(out.Findings) > 0 {
		fmt.Fprintln(opts.IO.Out, "\nDeceptive text in definitions (the model reads it removed or made visible):")
		for _, f := range out.Findings {
			for _, x := range f.Findings {
				fmt.Fprintf(opts.IO.Out, "  %s %s: %s\n", termsafe.Line(f.Server), termsafe.Line(f.Tool), termsafe.Line(x.String()))
			}
		}
	}
	return nil
}

// writeToolChange shows one change for people: what, its state and why,
// every field that differs as a word diff, and the command that accepts
// it. Everything the server wrote is escaped.
func writeToolChange(w io.Writer, c host.ToolChange, workspace string) {
	what := "changed since it was pinned"
	if !c.PinnedAt.IsZero() {
		what += " on " + c.PinnedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	if c.Kind == host.ChangeAdded {
		what = "is new since the server's tools were pinned"
	}
	fmt.Fprintf(w, "%s: tool %s %s: %s\n", termsafe.Line(c.Server), termsafe.Line(c.Tool), what, termsafe.Line(c.State))
	fmt.Fprintf(w, "  %s\n", termsafe.Line(c.Reason))
	for _, d := range c.Changes {
		fmt.Fprintf(w, "  %s: %s\n", termsafe.Line(d.Field), termsafe.Line(d.Words))
	}
	if c.State != host.ChangeAccepted {
		where := ""
		if workspace != "" {
			where = " (pins it for workspace " + termsafe.Line(workspace) + ")"
		}
		fmt.Fprintf(w, "  accept: %s%s\n", termsafe.Line(host.AcceptCommand(c.Server, c.Tool)), where)
	}
}

// writePromptChange shows one prompt change as writeToolChange shows a
// tool's.
func writePromptChange(w io.Writer, c host.PromptChange, workspace string) {
	what := "changed since it was pinned"
	if !c.PinnedAt.IsZero() {
		what += " on " + c.PinnedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	if c.Kind == host.ChangeAdded {
		what = "is new since the server's prompts were pinned"
	}
	fmt.Fprintf(w, "%s: prompt %s %s: %s\n", termsafe.Line(c.Server), termsafe.Line(c.Prompt), what, termsafe.Line(c.State))
	fmt.Fprintf(w, "  %s\n", termsafe.Line(c.Reason))
	for _, d := range c.Changes {
		fmt.Fprintf(w, "  %s: %s\n", termsafe.Line(d.Field), termsafe.Line(d.Words))
	}
	if c.State != host.ChangeAccepted {
		where := ""
		if workspace != "" {
			where = " (pins it for workspace " + termsafe.Line(workspace) + ")"
		}
		fmt.Fprintf(w, "  accept: %s%s\n", termsafe.Line(host.PromptAcceptCommand(c.Server, c.Prompt)), where)
	}
}

// ToolsAcceptOptions are the inputs of `switchboard tools accept`.
type ToolsAcceptOptions struct {
	runtimeOptions
	Server string
	Tools  []string
	// Prompts are the prompts to accept (--prompt). With neither Tools
	// nor Prompts, every changed tool and prompt of Server is accepted.
	Prompts []string
}

func newToolsAcceptCmd(f *Factory) *cobra.Command {
	var prompts []string
	cmd := &cobra.Command{
		Use:        "accept SERVER [TOOL…] [--prompt=PROMPT…]",
		SuggestFor: []string{"pin"},
		Short:      "Pin the definitions a server's tools and prompts have now, so that changed ones are served",
		Long: `Start SERVER, list its tools and prompts, and pin the definition each changed
one has now (the named TOOLs and --prompt PROMPTs, or, when none is named, every
changed tool and prompt): a held tool or prompt is then served, and a running
gateway tells its clients the list changed. Review the change first with
'switchboard tools diff SERVER'. Pins are kept per workspace beside your launch
approvals (~/.switchboard/tool-pins.json).`,
		Example: `  switchboard tools diff github
  switchboard tools accept github create_issue
  switchboard tools accept github --prompt=review`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &ToolsAcceptOptions{runtimeOptions: newRuntimeOptions(f), Server: args[0], Tools: args[1:], Prompts: prompts}
			return toolsAcceptRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&prompts, "prompt", nil, "accept this changed prompt (repeatable)")
	return cmd
}

func toolsAcceptRun(ctx context.Context, opts *ToolsAcceptOptions) (err error) {
	s, lctx, cancel, err := startListing(ctx, &opts.runtimeOptions, opts.Server)
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()
	defer cancel()
	list, _ := s.h.Tools(lctx)
	if list != nil {
		s.warn(list.Warnings)
	}
	_, _, _ = s.h.Prompts(lctx) // their pins are decided by a listing
	if err := serverNotReady(s, opts.Server); err != nil {
		return err
	}
	for _, st := range s.statuses() {
		if st.Name == opts.Server && st.PinError != "" {
			return FailureErr(errors.New(st.PinError), "")
		}
	}
	// This process listed the server afresh: what it pins may not be what
	// an earlier `tools diff` showed (a server can change between the
	// two), so what is pinned is shown, word by word.
	hint := fmt.Sprintf("`switchboard tools diff %s` shows what changed", opts.Server)
	all := len(opts.Tools) == 0 && len(opts.Prompts) == 0
	var changes []host.ToolChange
	if all || len(opts.Tools) > 0 {
		if changes, err = s.h.AcceptToolChanges(opts.Server, opts.Tools...); err != nil {
			return FailureErr(err, hint)
		}
	}
	var promptChanges []host.PromptChange
	if all || len(opts.Prompts) > 0 {
		promptChanges, err = s.h.AcceptPromptChanges(opts.Server, opts.Prompts...)
		// A server that offers no prompts, or has not listed them, has
		// none to accept when none was named.
		if err != nil && (!all || len(s.h.PromptChanges()) > 0) {
			return FailureErr(err, hint)
		}
	}
	if len(changes) == 0 && len(promptChanges) == 0 {
		fmt.Fprintf(opts.IO.Out, "No tool or prompt of %s changed since it was pinned.\n", termsafe.Line(opts.Server))
		return nil
	}
	where := ""
	if ws := s.cfg.Workspace; ws != "" {
		where = " for workspace " + termsafe.Line(opts.tilde(ws))
	}
	var accepted []string
	for _, c := range changes {
		accepted = append(accepted, termsafe.Line(c.Tool))
	}
	for _, c := range promptChanges {
		accepted = append(accepted, "prompt "+termsafe.Line(c.Prompt))
	}
	fmt.Fprintf(opts.IO.Out, "Accepted %s of %s: pinned as they are now%s.\n", strings.Join(accepted, ", "), termsafe.Line(opts.Server), where)
	for _, c := range changes {
		fmt.Fprintf(opts.IO.Out, "%s:\n", termsafe.Line(c.Tool))
		for _, d := range c.Changes {
			fmt.Fprintf(opts.IO.Out, "  %s: %s\n", termsafe.Line(d.Field), termsafe.Line(d.Words))
		}
	}
	for _, c := range promptChanges {
		fmt.Fprintf(opts.IO.Out, "prompt %s:\n", termsafe.Line(c.Prompt))
		for _, d := range c.Changes {
			fmt.Fprintf(opts.IO.Out, "  %s: %s\n", termsafe.Line(d.Field), termsafe.Line(d.Words))
		}
	}
	return nil
}

// AcceptToolChange implements switchboard.ToolChangeAsker at the terminal:
// it shows the change word by word and asks. Only yes accepts; anything
// else holds the tool for this run.
func (p *sessionPrompter) AcceptToolChange(ctx context.Context, c host.ToolChange) (bool, error) {
	release := p.s.line.Hold()
	defer release()
	w := p.s.opts.IO.ErrOut
	fmt.Fprintf(w, "The tool %s of server %s is not the one you were shown before.\n", termsafe.Line(c.Tool), termsafe.Line(c.Server))
	fmt.Fprintln(w, "Its definition is what the model reads: a changed description can tell it to do anything. Accept it only if you trust this.")
	fmt.Fprintln(w)
	writeToolChange(w, c, "")
	ok, err := askApproval(ctx, p.s.input(), w, "Accept the new definition? [y]es (pinned for this workspace), [N]o (held for this run): ")
	if err != nil || !ok {
		fmt.Fprintf(w, "  Not accepted: %s stays held.\n\n", termsafe.Line(c.Name))
		return false, err
	}
	fmt.Fprintf(w, "  Accepted %s.\n\n", termsafe.Line(c.Name))
	return true, nil
}

// warnToolChanges says on stderr which tools are held, or served changed,
// and the command that shows the change.
func (s *session) warnToolChanges() {
	var byServer = map[string][]string{}
	var order []string
	for _, c := range s.h.ToolChanges() {
		if c.State == host.ChangeAccepted {
			continue
		}
		if _, ok := byServer[c.Server]; !ok {
			order = append(order, c.Server)
		}
		byServer[c.Server] = append(byServer[c.Server], fmt.Sprintf("%s (%s, %s)", c.Tool, c.Kind, c.State))
	}
	sort.Strings(order)
	for _, srv := range order {
		fmt.Fprintf(s.opts.IO.ErrOut, "warning: %s: tools not as pinned: %s; see `switchboard tools diff %s`\n",
			termsafe.Line(srv), termsafe.Line(strings.Join(byServer[srv], ", ")), termsafe.Line(srv))
	}
	s.warnPromptChanges()
	for _, st := range s.statuses() {
		if st.PinError != "" {
			fmt.Fprintf(s.opts.IO.ErrOut, "warning: %s: no tool is served: %s\n", termsafe.Line(st.Name), termsafe.Line(st.PinError))
		}
	}
}

// warnPromptChanges says on stderr which prompts are held, or served
// changed, and the command that shows the change.
func (s *session) warnPromptChanges() {
	var byServer = map[string][]string{}
	var order []string
	for _, c := range s.h.PromptChanges() {
		if c.State == host.ChangeAccepted {
			continue
		}
		if _, ok := byServer[c.Server]; !ok {
			order = append(order, c.Server)
		}
		byServer[c.Server] = append(byServer[c.Server], fmt.Sprintf("%s (%s, %s)", c.Prompt, c.Kind, c.State))
	}
	for _, srv := range order { // PromptChanges is sorted by server
		fmt.Fprintf(s.opts.IO.ErrOut, "warning: %s: prompts not as pinned: %s; see `switchboard tools diff %s`\n",
			termsafe.Line(srv), termsafe.Line(strings.Join(byServer[srv], ", ")), termsafe.Line(srv))
	}
}

// askToolChanges asks at the terminal about held tool changes (nothing
// when nobody can be asked), before a listing is shown.
func (s *session) askToolChanges(ctx context.Context) {
	if err := s.sb.AskToolChanges(ctx); err != nil && !errors.Is(err, errEOF) && ctx.Err() == nil {
		fmt.Fprintf(s.opts.IO.ErrOut, "warning: %s\n", termsafe.Line(err.Error()))
	}
}

// heldErr is the exit of a call of a tool that tool pinning holds.
func heldErr(err error) error {
	var he *host.HeldToolError
	errors.As(err, &he)
	return RefusedErr(err, he.Hint())
}

// toolPinChecks are doctor's "tools" checks of one server: held tools
// (fail), changes served as they are (note) and deceptive text found in
// its definitions (note).
func toolPinChecks(st host.ServerStatus) []doctorCheck {
	var out []doctorCheck
	if st.PinError != "" {
		out = append(out, check("tools", st.Name, doctorFail, "no tool is served: "+st.PinError, ""))
		return out
	}
	for _, c := range st.ToolChanges {
		fields := make([]string, len(c.Changes))
		for i, d := range c.Changes {
			fields[i] = d.Field
		}
		msg := fmt.Sprintf("tool %s is %s: %s (%s)", c.Tool, c.State, c.Reason, strings.Join(fields, ", "))
		fix := fmt.Sprintf("review it with `switchboard tools diff %s`, then `%s`", st.Name, host.AcceptCommand(st.Name, c.Tool))
		switch c.State {
		case host.ChangeHeld:
			out = append(out, check("tools", st.Name, doctorFail, msg, fix))
		case host.ChangeServed:
			out = append(out, check("tools", st.Name, doctorNote, msg, fix))
		}
	}
	for _, c := range st.PromptChanges {
		fields := make([]string, len(c.Changes))
		for i, d := range c.Changes {
			fields[i] = d.Field
		}
		msg := fmt.Sprintf("prompt %s is %s: %s (%s)", c.Prompt, c.State, c.Reason, strings.Join(fields, ", "))
		fix := fmt.Sprintf("review it with `switchboard tools diff %s`, then `%s`", st.Name, host.PromptAcceptCommand(st.Name, c.Prompt))
		switch c.State {
		case host.ChangeHeld:
			out = append(out, check("tools", st.Name, doctorFail, msg, fix))
		case host.ChangeServed:
			out = append(out, check("tools", st.Name, doctorNote, msg, fix))
		}
	}
	for _, tf := range st.Findings {
		for _, f := range tf.Findings {
			out = append(out, check("tools", st.Name, doctorNote,
				fmt.Sprintf("%s: %s (what the model reads has it %s)", tf.Tool, f.String(), f.Action),
				"nothing to do for the model; ask yourself why this server hides text"))
		}
	}
	return out
}

// hookChecks are doctor's "hooks" checks: the hooks in force, and those
// that cannot be read (every call is refused until they are fixed).
func hookChecks(hooks []config.CallHook, problems []string, o *runtimeOptions) []doctorCheck {
	var out []doctorCheck
	for _, p := range problems {
		out = append(out, check("hooks", "", doctorFail, o.tilde(p), "fix the hook in your settings, or remove it (docs/security.md, Call hooks)"))
	}
	for _, h := range hooks {
		out = append(out, check("hooks", "", doctorPass, hookLine(h, o), ""))
	}
	return out
}

// hookLine describes a hook in one line: its name, when it runs, what it
// runs, for which tools, what a failure does, and where it is written.
func hookLine(h config.CallHook, o *runtimeOptions) string {
	var on []string
	if h.Before {
		on = append(on, "before")
	}
	if h.After {
		on = append(on, "after")
	}
	what := h.URL
	if len(h.Command) > 0 {
		what = strings.Join(h.Command, " ")
	}
	tools := "every tool"
	if len(h.Tools) > 0 {
		tools = strings.Join(h.Tools, ", ")
	}
	fail := "a failure refuses the call"
	if h.FailOpen {
		fail = "a failure lets the call go on"
	}
	return fmt.Sprintf("call hook %s runs %s calls of %s: %s (timeout %d ms; %s) — %s", h.Name, strings.Join(on, " and "), tools,
		termsafe.Line(what), h.TimeoutMs, fail, o.tilde(h.Position.String()))
}
