package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

func init() {
	registerCommand(func(f *Factory) *cobra.Command { return NewStatusCmd(f, nil) })
}

// StatusOptions are the inputs of `switchboard status`.
type StatusOptions struct {
	runtimeOptions
	JSON bool
}

// NewStatusCmd returns `switchboard status`, the /mcp view.
func NewStatusCmd(f *Factory, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show every configured server: state, tools, token cost, errors",
		Long: `Start every configured server, wait at most --wait for them, and show each one:
its type, scope, state, tool count, the estimated token cost of its tools, and why
it is not connected. A server in error shows its literal command line and the last
lines it wrote to stderr. The footer names the configuration files in use.

States: connected, connecting, error, circuit-open, needs-approval, approval-stale,
disabled, paused, missing.

Piped, the first line is the header (NAME TYPE SCOPE STATE TOOLS TOKENS REASON
COMMAND, tab-separated), then one tab-separated row per server with those eight
columns; a cell with nothing to say is empty or "-". Skip the header with
tail -n +2, or use --json.

Exit status 0 even when servers are in error (status is a report); 2 when the
configuration has an error (each is printed on stderr, after the report).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &StatusOptions{runtimeOptions: newRuntimeOptions(f), JSON: f.global().JSON}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
}

// statusRun starts the servers, waits for them and reports.
func statusRun(ctx context.Context, opts *StatusOptions) (err error) {
	s, err := startSession(ctx, &opts.runtimeOptions, nil)
	if err != nil {
		return err
	}
	s.reading = true
	s.outside = true
	if s.sb.Profile() == "" {
		// What the settings' profiles write that does nothing (a field
		// ignored, a definition the managed one wins over): the profiles
		// column would show it otherwise without a word. Under --profile,
		// that profile's are said already (warnProfile).
		s.diags = append(slices.Clone(s.diags), profileWarnings(s.sb.Settings())...)
	}
	defer func() { err = s.close(err) }()
	report := s.snapshot(ctx)
	if opts.JSON {
		return printJSON(opts.IO.Out, report.json(s.cfg, opts.now()))
	}
	return report.print(opts.IO, s.cfg, &opts.runtimeOptions)
}

// statusReport is what status shows.
type statusReport struct {
	Servers []host.ServerStatus
	// Sandbox says what each stdio server can reach (sandbox.go).
	Sandbox map[string]string
	// Hooks are the call hooks in force, HookProblems those that cannot
	// be read (every call is refused meanwhile).
	Hooks        []config.CallHook
	HookProblems []string
	// Refused says, for a sandboxed server whose stderr shows what its
	// sandbox refused it, that and the setting that allows it.
	Refused map[string]refusal
	// Profiles are the settings' profiles that include each server (nil
	// when there are none).
	Profiles map[string][]string
	// Runners names, for each stdio server a package runner starts, the
	// runner ("npx"): one still connecting may be downloading itself.
	Runners map[string]string
}

// snapshot waits (bounded by --wait), lists the tools of the connected
// servers so that their counts and token costs are known, and takes the
// host's status.
func (s *session) snapshot(ctx context.Context) statusReport {
	if !s.wait(ctx, s.opts.Wait) && s.runnersWait {
		s.waitForRunners(ctx)
	}
	// Listing tools fills the counts status shows. It gets its own bound:
	// --wait may be spent already, and a connected server should still be
	// asked.
	lctx, cancel := context.WithTimeout(ctx, max(s.opts.Wait, 2*time.Second))
	defer cancel()
	_, _ = s.h.Tools(lctx) // errors show as server states
	// Prompts and resources too, so that a server whose prompts/list or
	// resources/list fails is not shown as healthy (their failures are
	// in each status' ListErrors); all but the failing ones are cached.
	_, _, _ = s.h.Prompts(lctx)
	_, _, _ = s.h.Resources(lctx)
	servers := s.statuses()
	hooks, problems := s.h.CallHooks()
	r := statusReport{Servers: servers, Sandbox: s.sandboxes(), Refused: s.sandboxRefusals(servers), Hooks: hooks, HookProblems: problems, Runners: s.runners()}
	if ps := s.profiles(); len(ps) > 0 {
		r.Profiles = map[string][]string{}
		for _, st := range servers {
			r.Profiles[st.Name] = profilesShowing(ps, st.Name, "")
		}
	}
	return r
}

// errorStates are the states whose command line and stderr are shown.
func isErrorState(st host.State) bool {
	return st == host.StateError || st == host.StateCircuitOpen
}

// statusStderrLines is how many stderr lines a server in error shows.
const statusStderrLines = 5

func (r statusReport) print(ios *IOStreams, cfg *config.Resolved, o *runtimeOptions) error {
	if len(r.Servers) == 0 && noServerReadable(cfg) {
		fmt.Fprintln(ios.ErrOut, unreadableMessage)
		return nil
	}
	if len(r.Servers) == 0 {
		fmt.Fprintln(ios.ErrOut, noServersText(o.Importable))
		if ios.IsTTY {
			printFiles(ios.Out, cfg, o)
		}
		return nil
	}
	now := o.now()
	if !ios.IsTTY {
		// Piped: the header, then one plain row per server, with the
		// command line last, for cut and awk; scripts wanting more use
		// --json.
		t := newTablePrinter(ios, statusPipedColumns...)
		for _, st := range r.Servers {
			t.AddRow(st.Name, dashEmpty(string(st.Type)), dashEmpty(string(st.Scope)), string(st.State),
				toolsCell(st), countCell(st, st.Tokens), r.reason(st, now), commandText(st))
		}
		return t.Render()
	}
	cols := []string{"name", "type", "scope", "state", "tools", "tokens", "reason"}
	if r.Profiles != nil {
		// Which profiles include each server (--profile NAME shows one).
		cols = slices.Insert(cols, 4, "profiles")
	}
	t := newTablePrinter(ios, cols...)
	for _, st := range r.Servers {
		row := []string{st.Name, dashEmpty(string(st.Type)), dashEmpty(string(st.Scope)), string(st.State),
			toolsCell(st), countCell(st, st.Tokens), r.reason(st, now)}
		if r.Profiles != nil {
			row = slices.Insert(row, 4, dashEmpty(strings.Join(r.Profiles[st.Name], ",")))
		}
		t.AddRow(row...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	printSandboxes(ios.Out, r)
	printHooks(ios.Out, r, o)
	for _, st := range r.Servers {
		_, refused := r.Refused[st.Name]
		if !isErrorState(st.State) && len(st.ListErrors) == 0 && !refused {
			continue
		}
		// The reason, command line, path and stderr were written by the
		// repository or the server: shown escaped, never acted on.
		fmt.Fprintf(ios.Out, "\n%s (%s): %s\n", termsafe.Line(st.Name), st.State, termsafe.Line(dashEmpty(st.Reason)+st.NextTryNote(now)))
		if c := commandText(st); c != "" {
			fmt.Fprintf(ios.Out, "  command: %s\n", termsafe.Line(c))
		}
		if st.File != "" {
			fmt.Fprintf(ios.Out, "  defined in: %s\n", termsafe.Line(o.tilde(st.File)))
		}
		if rf, ok := r.Refused[st.Name]; ok {
			fmt.Fprintf(ios.Out, "  sandbox: %s\n  to allow it: %s\n", termsafe.Line(rf.What), termsafe.Line(rf.Fix))
		}
		if tail := lastNonEmptyLines(st.StderrTail, statusStderrLines); len(tail) > 0 {
			fmt.Fprintln(ios.Out, "  stderr:")
			for _, l := range tail {
				fmt.Fprintf(ios.Out, "    %s\n", truncRunes(termsafe.Line(l), 200))
			}
		}
	}
	printFiles(ios.Out, cfg, o)
	return nil
}

// noServersMessage is what status and mcp list say on stderr when no
// server is configured (stdout stays empty).
const noServersMessage = "No MCP servers are configured. Add one with `switchboard mcp add NAME -- COMMAND [ARGS…]`, or see it all work with `switchboard demo`."

// noServersText is noServersMessage, followed, when other tools keep
// servers on this machine (importable: importableSources), by a line for
// each with the command that imports them: a newcomer who already has
// servers elsewhere need not type them again.
func noServersText(importable func() []string) string {
	if importable == nil {
		return noServersMessage
	}
	here := importable()
	if len(here) == 0 {
		return noServersMessage
	}
	return noServersMessage + "\nOther tools keep servers on this machine; import them:\n  " + strings.Join(here, "\n  ")
}

// statusPipedColumns are status's piped columns (its help names them).
var statusPipedColumns = []string{"name", "type", "scope", "state", "tools", "tokens", "reason", "command"}

// reason is reasonText, and first, for a server whose sandbox refused it
// something, what (the sandbox, not its slowness, is why it is not
// connected).
func (r statusReport) reason(st host.ServerStatus, now time.Time) string {
	if rf, ok := r.Refused[st.Name]; ok {
		return "sandbox: " + rf.What + "; " + reasonText(st, now)
	}
	if runner := r.Runners[st.Name]; runner != "" && st.State == host.StateConnecting && (st.Reason == "" || st.Reason == "starting") {
		return reasonText(st, now) + " (" + runner + " may be downloading it: a first run takes longer; --wait 120s waits for it)"
	}
	return reasonText(st, now)
}

// runners names the package runner of each stdio server one starts.
func (s *session) runners() map[string]string {
	out := map[string]string{}
	for i := range s.cfg.Servers {
		if r := packageRunner(&s.cfg.Servers[i]); r != "" {
			out[s.cfg.Servers[i].Name] = r
		}
	}
	return out
}

// reasonText is the REASON cell: the one-line reason, for a server still
// connecting how long it has been at it, and for one in error when it is
// tried again.
func reasonText(st host.ServerStatus, now time.Time) string {
	if st.State == host.StateConnecting {
		s := "still connecting after " + formatElapsed(now.Sub(st.Since))
		if st.Reason != "" && st.Reason != "starting" {
			s += ": " + st.Reason
		}
		return s
	}
	r := st.Reason
	for _, more := range []string{heldText(st), secretNamedText(st)} {
		if more == "" {
			continue
		}
		if r != "" {
			r += "; "
		}
		r += more
	}
	return r + st.NextTryNote(now)
}

// secretNamedText says how many tools are not served because a name of
// theirs holds a secret value ("" when none).
func secretNamedText(st host.ServerStatus) string {
	switch st.SecretNamed {
	case 0:
		return ""
	case 1:
		return "1 tool not served: a name of it holds a secret value (docs/security.md)"
	}
	return fmt.Sprintf("%d tools not served: a name of theirs holds a secret value (docs/security.md)", st.SecretNamed)
}

// heldText says which tools and prompts pinning holds ("" when none).
func heldText(st host.ServerStatus) string {
	if st.PinError != "" {
		return "no tool served: the tool pin store cannot be used (see doctor)"
	}
	held := append([]string{}, st.Held...)
	for _, p := range st.HeldPrompts {
		held = append(held, "prompt "+p)
	}
	if len(held) == 0 {
		return ""
	}
	return fmt.Sprintf("held (changed since pinned): %s; see `switchboard tools diff %s`", strings.Join(held, ", "), st.Name)
}

// toolsCell is the tool count, with how many are deferred when any are.
func toolsCell(st host.ServerStatus) string {
	c := countCell(st, st.Tools)
	if st.Deferred > 0 {
		c += fmt.Sprintf(" (%d deferred)", st.Deferred)
	}
	return c
}

// countCell renders a tool or token count: "?" or "-" when it is not
// known (ServerStatus.UnknownCount).
func countCell(st host.ServerStatus, n int) string {
	if s := st.UnknownCount(n); s != "" {
		return s
	}
	return strconv.Itoa(n)
}

func dashEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncRunes(s string, n int) string {
	r := []rune(s)
	if n <= 1 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func lastNonEmptyLines(lines []string, n int) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// printFiles prints the footer: the configuration files in use, and which
// of them exist.
func printFiles(w io.Writer, cfg *config.Resolved, o *runtimeOptions) {
	f := cfg.Files
	fmt.Fprintln(w, "\nConfiguration files:")
	// row prints one file; a path of "" prints the note alone.
	row := func(label, path, note string) {
		if path == "" {
			fmt.Fprintf(w, "  %-10s %s\n", label, termsafe.Line(note))
			return
		}
		if !pathExists(path) {
			note = strings.TrimSpace(note + " (not found)")
		}
		if note != "" {
			note = " " + note
		}
		fmt.Fprintf(w, "  %-10s %s%s\n", label, termsafe.Line(o.tilde(path)), termsafe.Line(note))
	}
	row("user", f.User, "")
	if cfg.Workspace == "" {
		row("project", "", "(no workspace)")
		row("local", "", "(no workspace)")
	} else {
		row("project", f.Project, "")
		// The entry read and edited, which may spell the directory
		// another way than the root (a symlink).
		row("local", f.Local, fmt.Sprintf("under \"projects\" → %q", o.tilde(localKeys(f.Local, cfg.Workspace)[0])))
	}
	row("managed", f.Managed, "")
	if cfg.Workspace == "" {
		row("workspace", "", "(no workspace)")
	} else {
		row("workspace", f.Workspace, "")
	}
	for _, fl := range f.Flags {
		row("flag", "", fl)
	}
}

func pathExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// statusJSON is `status --json`, a contract scripts rely on: servers and files, plus the
// workspace and the configuration diagnostics.
type statusJSON struct {
	Workspace   string              `json:"workspace"`
	Servers     []statusServerJSON  `json:"servers"`
	Files       statusFilesJSON     `json:"files"`
	Diagnostics []config.Diagnostic `json:"diagnostics"`
	// Hooks are the call hooks in force; HookProblems the ones that cannot
	// be read, while which every call is refused.
	Hooks        []config.CallHook `json:"hooks"`
	HookProblems []string          `json:"hookProblems,omitempty"`
}

type statusServerJSON struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Scope  string `json:"scope"`
	State  string `json:"state"`
	Error  string `json:"error"`
	Tools  int    `json:"tools"`
	Tokens int    `json:"tokens"`
	// Deferred counts the tools held back for tool_search.
	Deferred int    `json:"deferred"`
	Command  string `json:"command"`
	Trust    string `json:"trust"`
	File     string `json:"file"`
	// Since is when the server entered its state; ElapsedMs is how long
	// ago that was (for a connecting server, how long it has been trying).
	Since      time.Time `json:"since"`
	ElapsedMs  int64     `json:"elapsed_ms"`
	Protocol   string    `json:"protocol"`
	ServerInfo string    `json:"serverInfo"`
	Stderr     []string  `json:"stderr"`
	Reconnects int       `json:"reconnects"`
	// Reconnecting: it lost its connection and is being reconnected; its
	// last tools stay served meanwhile.
	Reconnecting bool `json:"reconnecting,omitempty"`
	// NextTry is when a server in error (or reconnecting) is tried again,
	// or when an open circuit is probed; absent when no try is due.
	NextTry *time.Time     `json:"nextTry,omitempty"`
	Stats   host.CallStats `json:"stats"`
	// Sandbox: what a stdio server can reach, in words (docs/security.md,
	// Sandbox).
	Sandbox string `json:"sandbox,omitempty"`
	// ListErrors: per list request ("tools/list"…), why it failed.
	ListErrors map[string]string `json:"listErrors,omitempty"`
	// Held: tools not served because their definition is not the pinned
	// one; ToolChanges says why each is held, or served changed;
	// PinError, why no tool is served; Findings, the deceptive text in
	// its definitions (docs/security.md, What the model reads).
	Held []string `json:"held,omitempty"`
	// Profiles are the settings' profiles that include the server.
	Profiles    []string           `json:"profiles,omitempty"`
	ToolChanges []statusChangeJSON `json:"toolChanges,omitempty"`
	// HeldPrompts and PromptChanges are Held and ToolChanges for its
	// prompts (docs/security.md, Prompt pinning).
	HeldPrompts   []string                 `json:"heldPrompts,omitempty"`
	PromptChanges []statusPromptChangeJSON `json:"promptChanges,omitempty"`
	PinError      string                   `json:"pinError,omitempty"`
	Findings      []host.ToolFindings      `json:"findings,omitempty"`
	// SecretNamed counts its tools not served because a name of theirs
	// holds a secret value (docs/security.md, Secrets going the wrong way).
	SecretNamed int `json:"secretNamed,omitempty"`
	// SandboxRefused: what its stderr shows its sandbox refused it, and
	// the setting that allows it.
	SandboxRefused *refusalJSON `json:"sandboxRefused,omitempty"`
}

// statusChangeJSON is a tool change as status --json shows it; `tools
// diff --json` has the definitions and the word diff.
type statusChangeJSON struct {
	Tool   string   `json:"tool"`
	Kind   string   `json:"kind"`
	State  string   `json:"state"`
	Reason string   `json:"reason"`
	Fields []string `json:"fields"`
}

// statusPromptChangeJSON is a prompt change as status --json shows it.
type statusPromptChangeJSON struct {
	Prompt string   `json:"prompt"`
	Kind   string   `json:"kind"`
	State  string   `json:"state"`
	Reason string   `json:"reason"`
	Fields []string `json:"fields"`
}

type refusalJSON struct {
	What string `json:"what"`
	Fix  string `json:"fix"`
}

type statusFilesJSON struct {
	User      string   `json:"user"`
	Project   string   `json:"project"`
	Local     string   `json:"local"`
	Managed   string   `json:"managed"`
	Workspace string   `json:"workspace"`
	Flags     []string `json:"flags"`
}

func (r statusReport) json(cfg *config.Resolved, now time.Time) statusJSON {
	out := statusJSON{
		Workspace: cfg.Workspace,
		Servers:   []statusServerJSON{},
		Files: statusFilesJSON{
			User: cfg.Files.User, Project: cfg.Files.Project, Local: cfg.Files.Local,
			Managed: cfg.Files.Managed, Workspace: cfg.Files.Workspace, Flags: cfg.Files.Flags,
		},
		Diagnostics: cliDiagnostics(cfg.Diagnostics),
	}
	if out.Files.Flags == nil {
		out.Files.Flags = []string{}
	}
	if out.Diagnostics == nil {
		out.Diagnostics = []config.Diagnostic{}
	}
	for _, st := range r.Servers {
		stderr := st.StderrTail
		if stderr == nil {
			stderr = []string{}
		}
		var elapsed int64
		if !st.Since.IsZero() {
			elapsed = now.Sub(st.Since).Milliseconds()
		}
		var next *time.Time
		if !st.NextTry.IsZero() {
			next = &st.NextTry
		}
		out.Servers = append(out.Servers, statusServerJSON{
			Name: st.Name, Type: string(st.Type), Scope: string(st.Scope), State: string(st.State),
			Error: st.Reason, Tools: st.Tools, Tokens: st.Tokens, Deferred: st.Deferred, Command: commandText(st),
			Trust: string(st.Trust), File: st.File, Since: st.Since, ElapsedMs: elapsed,
			Protocol: st.Protocol, ServerInfo: st.ServerInfo, Stderr: stderr,
			Reconnects: st.Reconnects, Reconnecting: st.Reconnecting, NextTry: next, Stats: st.Stats,
			Sandbox: r.Sandbox[st.Name], ListErrors: st.ListErrors,
			Held: st.Held, HeldPrompts: st.HeldPrompts, PinError: st.PinError, Findings: st.Findings, SecretNamed: st.SecretNamed,
			Profiles: r.Profiles[st.Name],
		})
		if rf, ok := r.Refused[st.Name]; ok {
			out.Servers[len(out.Servers)-1].SandboxRefused = &refusalJSON{What: rf.What, Fix: rf.Fix}
		}
		for _, c := range st.ToolChanges {
			fields := make([]string, len(c.Changes))
			for i, d := range c.Changes {
				fields[i] = d.Field
			}
			sj := &out.Servers[len(out.Servers)-1]
			sj.ToolChanges = append(sj.ToolChanges, statusChangeJSON{Tool: c.Tool, Kind: c.Kind, State: c.State, Reason: c.Reason, Fields: fields})
		}
		for _, c := range st.PromptChanges {
			fields := make([]string, len(c.Changes))
			for i, d := range c.Changes {
				fields[i] = d.Field
			}
			sj := &out.Servers[len(out.Servers)-1]
			sj.PromptChanges = append(sj.PromptChanges, statusPromptChangeJSON{Prompt: c.Prompt, Kind: c.Kind, State: c.State, Reason: c.Reason, Fields: fields})
		}
	}
	out.Hooks, out.HookProblems = r.Hooks, r.HookProblems
	if out.Hooks == nil {
		out.Hooks = []config.CallHook{}
	}
	return out
}

// printHooks prints the call hooks in force, and those that cannot be
// read, after the table.
func printHooks(w io.Writer, r statusReport, o *runtimeOptions) {
	if len(r.Hooks)+len(r.HookProblems) == 0 {
		return
	}
	fmt.Fprintln(w, "\nCall hooks:")
	for _, h := range r.Hooks {
		fmt.Fprintf(w, "  %s\n", hookLine(h, o))
	}
	for _, p := range r.HookProblems {
		fmt.Fprintf(w, "  cannot be read, so every call is refused: %s\n", termsafe.Line(o.tilde(p)))
	}
}

// commandText is the literal command line, or "" when the server has none
// (the host quotes a missing server's empty command as a pair of quotes).
func commandText(st host.ServerStatus) string {
	if st.Command == "''" {
		return ""
	}
	return st.Command
}

// profileWarnings are the warnings of st's profiles (see
// [config.SettingsStack.Profiles]); their errors are doctor's and a
// --profile run's to report.
func profileWarnings(st *config.SettingsStack) []config.Diagnostic {
	if st == nil {
		return nil
	}
	_, diags := st.Profiles()
	return slices.DeleteFunc(diags, func(d config.Diagnostic) bool { return d.Severity != config.SeverityWarning })
}
