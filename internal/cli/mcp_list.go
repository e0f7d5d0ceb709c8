package cli

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/trust"
)

// serverJSON is one server in `mcp list --json` and `mcp get --json`. The
// first eight keys are the contract scripts rely on; the rest are extra.
// Command, args and url are as written, before ${VAR} expansion, so that
// the output never holds a secret the file does not.
type serverJSON struct {
	Name    string   `json:"name"`
	Scope   string   `json:"scope"`
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	URL     string   `json:"url"`
	Enabled bool     `json:"enabled"`
	File    string   `json:"file"`

	// Availability is available, disabled, missing or invalid.
	Availability   string `json:"availability"`
	DisabledReason string `json:"disabledReason,omitempty"`
	Trust          string `json:"trust,omitempty"`
	Error          string `json:"error,omitempty"`
	// Profiles are the settings' profiles that include the server (mcp
	// list only; absent when there are none).
	Profiles []string `json:"profiles,omitempty"`
}

// serverDetailJSON is `mcp get --json`: the list object, the rest of the
// definition, and warnings.
type serverDetailJSON struct {
	serverJSON
	Env            map[string]string `json:"env,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Cwd            string            `json:"cwd,omitempty"`
	Description    string            `json:"description,omitempty"`
	Timeout        int               `json:"timeout,omitempty"`
	StartupTimeout int               `json:"startup_timeout,omitempty"`
	Tasks          string            `json:"tasks,omitempty"`
	Shadows        []string          `json:"shadows,omitempty"`
	MissingEnv     []string          `json:"missingEnv,omitempty"`
	// Approval is the launch-trust verdict in this workspace; absent
	// for a name nobody defines.
	Approval *approvalJSON `json:"approval,omitempty"`
	Warnings []string      `json:"warnings"`
	// Sandbox says in words what a stdio server can reach (docs/security.md,
	// Sandbox);
	// SandboxPolicy is the same as data (absent: unconfined).
	Sandbox       string                `json:"sandbox,omitempty"`
	SandboxPolicy *config.SandboxPolicy `json:"sandboxPolicy,omitempty"`
}

func toServerJSON(s *config.ResolvedServer) serverJSON {
	w := s.Written
	j := serverJSON{
		Name:           s.Name,
		Scope:          string(s.Scope),
		Type:           string(s.Effective.Type),
		Command:        w.Command,
		Args:           shownArgs(w),
		URL:            shownURL(w),
		Enabled:        s.Availability == config.Available || s.Availability == config.Invalid && w.IsEnabled(),
		File:           s.File,
		Availability:   string(s.Availability),
		DisabledReason: s.DisabledReason,
		Trust:          string(s.Trust),
	}
	if j.Type == "" {
		j.Type = string(config.InferType(w))
	}
	if j.Args == nil {
		j.Args = []string{}
	}
	if err := s.Err(); err != nil {
		j.Error = err.Error()
	}
	return j
}

// enabledText is the ENABLED column, the same words on a terminal and
// piped (scripts that want a boolean use --json's "enabled").
func enabledText(s *config.ResolvedServer) string {
	switch s.Availability {
	case config.Available:
		return "yes"
	case config.Disabled:
		return "no (" + shortReason(s.DisabledReason) + ")"
	}
	return string(s.Availability) // missing, invalid
}

// shortReason cuts a disabled reason down to what fits a table cell; `mcp
// get` shows it whole.
func shortReason(r string) string {
	for _, p := range []struct{ prefix, short string }{
		{"disabled in workspace", "workspace"},
		{"enabled: false", "enabled: false"},
		{"disabledMcpServers", "disabledMcpServers"},
	} {
		if strings.HasPrefix(r, p.prefix) {
			return p.short
		}
	}
	return r
}

// targetText is what a server runs or dials, as written.
func targetText(w config.Server) string {
	if w.Command != "" {
		words := append([]string{w.Command}, shownArgs(w)...)
		for i, word := range words {
			if q := trust.Quote(word); strings.HasPrefix(q, "$'") {
				words[i] = q
			} else {
				words[i] = shellQuote(word)
			}
		}
		return strings.Join(words, " ")
	}
	return terminalSafe(shownURL(w))
}

// terminalSafe returns s, or its $'…' quoted form (trust.Quote) when it
// holds something a terminal would act on or hide: escape sequences,
// invisible or reordering characters. Definitions, project ones above all,
// are written by others; what is printed must be what is there.
func terminalSafe(s string) string {
	if q := trust.Quote(s); strings.HasPrefix(q, "$'") {
		return q
	}
	return s
}

// shownArgs and shownURL are a definition's args and URL as they may be
// printed: secret-looking parts redacted (--api-key VALUE, ?token=VALUE),
// and so is any secret value of its own env or headers that they repeat.
func shownArgs(w config.Server) []string {
	return redact.CommandArgs(w.Args, redact.Secrets(w.Env, w.Headers)...)
}

func shownURL(w config.Server) string {
	return redact.String(w.URL, redact.Secrets(w.Env, w.Headers)...)
}

// shownEnv and shownHeaders are a definition's env and headers as they may
// be printed: ${VAR} references as written, secret values redacted.
func shownEnv(m map[string]string) map[string]string {
	return shownValues(m, false)
}

func shownHeaders(m map[string]string) map[string]string {
	return shownValues(m, true)
}

func shownValues(m map[string]string, header bool) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = redact.ConfigValue(k, v, header)
	}
	return out
}

// MCPListOptions are the inputs of `mcp list`.
type MCPListOptions struct {
	IO      *IOStreams
	Factory *Factory
	JSON    bool
}

// NewMCPListCmd returns `mcp list`; runF, if not nil, replaces mcpListRun.
func NewMCPListCmd(f *Factory, runF func(context.Context, *MCPListOptions) error) *cobra.Command {
	opts := &MCPListOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the configured servers of every scope",
		Long: `List the effective server of each name (local > project > user; managed
servers override all), with its scope, file and whether it is enabled here.

Piped, the first line is the header (NAME TYPE SCOPE ENABLED COMMAND / URL FILE,
tab-separated), then one tab-separated row per server with those six columns;
ENABLED reads as on a terminal: yes, no (why), missing or invalid. When the
settings define profiles, a seventh column, PROFILES, names those that include
the server (comma-separated, "-" for none). Skip the header with tail -n +2,
or use --json.

Problems in the configuration files are printed on stderr, one per line with
file:line:col and a fix, after the valid servers; the exit code is then 2.`,
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpListRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func mcpListRun(ctx context.Context, opts *MCPListOptions) error {
	f := opts.Factory
	r, err := f.LoadConfig()
	if err != nil {
		return err
	}
	profiles := f.profiles(r)
	r = markNameRefusals(inProfile(r, profiles, f.global().Profile))
	if opts.JSON {
		list := make([]serverJSON, 0, len(r.Servers))
		for i := range r.Servers {
			sj := toServerJSON(&r.Servers[i])
			sj.Profiles = profiles.Including(r.Servers[i].Name)
			list = append(list, sj)
		}
		if err := printJSON(opts.IO.Out, list); err != nil {
			return err
		}
		return reportDiagnostics(opts.IO.ErrOut, r.Diagnostics, nil)
	}
	tty := opts.IO.IsTTY
	switch {
	case len(r.Servers) == 0 && noServerReadable(r):
		// Not "No MCP servers are configured": the files may hold
		// servers, and that would send the user to add one.
		fmt.Fprintln(opts.IO.ErrOut, unreadableMessage)
	case len(r.Servers) == 0:
		// On stderr, piped too, as every list command says it has
		// nothing: stdout stays empty for a script.
		fmt.Fprintln(opts.IO.ErrOut, noServersText(func() []string { return importableLines(opts.Factory) }))
	}
	if len(r.Servers) > 0 {
		cols := []string{"name", "type", "scope", "enabled", "command / url", "file"}
		if len(profiles) > 0 {
			cols = append(cols, "profiles")
		}
		t := newTablePrinter(opts.IO, cols...)
		t.Shrink(4)
		for i := range r.Servers {
			s := &r.Servers[i]
			typ := string(s.Effective.Type)
			if typ == "" {
				typ = "-"
			}
			scope, file := string(s.Scope), s.File
			if s.Availability == config.Missing {
				scope = "-"
			}
			if tty {
				file = f.tilde(file)
			}
			if file == "" {
				file = "-"
			}
			row := []string{s.Name, typ, scope, enabledText(s), targetText(s.Written), file}
			if len(profiles) > 0 {
				row = append(row, dashEmpty(strings.Join(profiles.Including(s.Name), ",")))
			}
			t.AddRow(row...)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return reportDiagnostics(opts.IO.ErrOut, r.Diagnostics, nil)
}

// MCPGetOptions are the inputs of `mcp get`.
type MCPGetOptions struct {
	IO      *IOStreams
	Factory *Factory
	JSON    bool
	Name    string
}

// NewMCPGetCmd returns `mcp get`; runF, if not nil, replaces mcpGetRun.
func NewMCPGetCmd(f *Factory, runF func(context.Context, *MCPGetOptions) error) *cobra.Command {
	opts := &MCPGetOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one server's effective definition and why it is (not) used",
		Long: `Show one server's effective definition (command or URL as written, env and
headers with secrets hidden), whether it is enabled here, its launch trust and
its warnings.

Piped, each line is one tab-separated key and value (name, scope, file, type,
command, url, cwd, env, header, description, enabled, sandbox, trust, approval,
…; env and header repeat), then one line per warning: its severity and text.
--json gives the same as one object.

Problems in the configuration files are printed on stderr, one per line with
file:line:col and a fix; the exit code is then 2, as for mcp list.`,
		Args:              exactArgs(1, "a server name"),
		ValidArgsFunction: completeServerNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpGetRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func mcpGetRun(ctx context.Context, opts *MCPGetOptions) error {
	f := opts.Factory
	r, err := f.LoadConfig()
	if err != nil {
		return err
	}
	r = markNameRefusals(inProfile(r, f.profiles(r), f.global().Profile))
	s := r.Server(opts.Name)
	onlyThis := func(server string) bool { return server == opts.Name }
	if s == nil {
		if err := reportDiagnostics(opts.IO.ErrOut, r.Diagnostics, onlyThis); err != nil {
			return Configf("fix the configuration errors above; the server may be defined in a file that did not load",
				"no server named %q", opts.Name)
		}
		hint := "see 'switchboard mcp list' for the configured servers"
		if near := nearestNames(opts.Name, r); len(near) > 0 {
			hint = "did you mean " + strings.Join(near, ", ") + "?"
		}
		return Failuref(hint, "no server named %q", opts.Name)
	}

	d := serverDetailJSON{serverJSON: toServerJSON(s)}
	w := s.Written
	d.Env, d.Headers, d.Cwd, d.Description = shownEnv(w.Env), shownHeaders(w.Headers), w.Cwd, w.Description
	d.Timeout, d.StartupTimeout, d.Tasks = w.Timeout, w.StartupTimeout, w.Tasks
	d.MissingEnv = s.MissingEnv
	if defaults := f.sandboxDefaults(); config.InferType(s.Effective) == config.TypeStdio {
		d.Sandbox = sandboxWords(s, r.Workspace, defaults, f.tilde)
		d.SandboxPolicy = sandboxOf(s, r.Workspace, defaults)
	} else {
		d.Sandbox = sandboxWords(s, r.Workspace, defaults, f.tilde) // its headersHelper's, if the repository wrote one
	}
	for _, sc := range s.Shadows {
		d.Shadows = append(d.Shadows, string(sc))
	}
	var trustNotes []string
	if s.Availability != config.Missing {
		lt, err := f.launchTrust(r)
		if err != nil {
			return err
		}
		a := lt.approval(s)
		d.Approval = &a
		if s.Trust == config.TrustRepo {
			for _, w := range lt.warnings { // a broken trust store or settings file
				trustNotes = append(trustNotes, w.Error())
			}
		}
	}
	notes := serverNotes(r, s, d.Approval, trustNotes)
	d.Warnings = []string{}
	for _, n := range notes {
		d.Warnings = append(d.Warnings, n.text)
	}

	if opts.JSON {
		if err := printJSON(opts.IO.Out, d); err != nil {
			return err
		}
	} else if err := printServerDetail(opts.IO, f, r, s, d, notes); err != nil {
		return err
	}
	// The server's own problems are already shown; report the others
	// (the files', other servers'), and exit 2 on an error anywhere, as
	// mcp list does: a script cannot tell a configuration it half reads
	// from a good one otherwise.
	var others []config.Diagnostic
	for _, g := range r.Diagnostics {
		if g.Server != s.Name {
			others = append(others, g)
		}
	}
	fileErr := reportDiagnostics(opts.IO.ErrOut, others, nil)
	if s.Availability == config.Invalid {
		return Configf("fix the definition as shown above", "server %q is invalid", s.Name)
	}
	return fileErr
}

// note is one line of `mcp get`'s warnings, with its severity.
type note struct {
	severity config.Severity
	text     string
}

// serverNotes are the one-line warnings of `mcp get`: the server's
// diagnostics (missing environment variables among them), why it is
// disabled, which definitions it shadows, and why launch trust holds it
// (approval, in the words of `status`) with the problems of the trust
// store or settings behind that verdict (trustNotes).
func serverNotes(r *config.Resolved, s *config.ResolvedServer, approval *approvalJSON, trustNotes []string) []note {
	var notes []note
	warn := func(text string) { notes = append(notes, note{config.SeverityWarning, text}) }
	for _, d := range s.Diagnostics {
		notes = append(notes, note{d.Severity, cliDiagnostic(d).Error()})
	}
	if s.Availability == config.Disabled {
		warn("disabled: " + s.DisabledReason)
	}
	for _, sc := range s.Shadows {
		file := scopeFile(r, sc)
		msg := fmt.Sprintf("shadows the %s-scope definition", sc)
		if file != "" {
			msg += " in " + file
		}
		warn(msg + fmt.Sprintf("; this %s-scope one is used", s.Scope))
	}
	if approval != nil && approval.Reason != "" {
		warn(approval.Reason)
	}
	for _, t := range trustNotes {
		warn(t)
	}
	return notes
}

// scopeFile is the file that holds a scope's servers.
func scopeFile(r *config.Resolved, sc config.Scope) string {
	switch sc {
	case config.ScopeUser:
		return r.Files.User
	case config.ScopeLocal:
		return r.Files.Local
	case config.ScopeProject:
		return r.Files.Project
	case config.ScopeManaged:
		return r.Files.Managed
	}
	return ""
}

// printServerDetail prints `mcp get`: aligned "Key: value" lines on a
// terminal, "key<TAB>value" rows when piped.
func printServerDetail(ios *IOStreams, f *Factory, r *config.Resolved, s *config.ResolvedServer, d serverDetailJSON, notes []note) error {
	tty := ios.IsTTY
	path := func(p string) string {
		if tty {
			return f.tilde(p)
		}
		return p
	}
	type row struct{ key, value string }
	rows := []row{{"name", s.Name}}
	scope := string(s.Scope)
	if s.Scope == config.ScopeLocal && r.Workspace != "" {
		scope += " (workspace " + path(r.Workspace) + ")"
	}
	if s.Availability != config.Missing {
		rows = append(rows, row{"scope", scope})
	}
	if s.File != "" {
		file := path(s.File)
		if tty && s.Pos.Line > 0 {
			file += fmt.Sprintf(":%d", s.Pos.Line)
		}
		rows = append(rows, row{"file", file})
	}
	if d.Type != "" {
		rows = append(rows, row{"type", d.Type})
	}
	w := s.Written
	if w.Command != "" {
		rows = append(rows, row{"command", targetText(w)})
	}
	if w.URL != "" {
		rows = append(rows, row{"url", shownURL(w)})
	}
	if w.Cwd != "" {
		rows = append(rows, row{"cwd", w.Cwd})
	}
	for _, k := range sortedKeys(d.Env) {
		rows = append(rows, row{"env", k + "=" + d.Env[k]})
	}
	for _, k := range sortedKeys(d.Headers) {
		rows = append(rows, row{"header", k + ": " + d.Headers[k]})
	}
	if w.Description != "" {
		rows = append(rows, row{"description", w.Description})
	}
	rows = append(rows, row{"enabled", enabledText(s)})
	if d.Sandbox != "" {
		rows = append(rows, row{"sandbox", d.Sandbox})
	}
	if s.Availability != config.Missing {
		tr := string(s.Trust)
		if tty {
			switch s.Trust {
			case config.TrustUser:
				tr += " (starts without asking)"
			case config.TrustRepo:
				tr += " (repository-authored: starts only once approved)"
			}
		}
		rows = append(rows, row{"trust", tr})
	}
	if a := d.Approval; a != nil {
		if tty {
			rows = append(rows, row{"approval", approvalSummary(s, *a, path)})
		} else {
			rows = append(rows, row{"approval", a.Verdict})
		}
		for _, l := range approvalDetails(*a) {
			rows = append(rows, row{l.label, l.value})
		}
		// An invalid definition does not start once approved: its error
		// line says what to fix first.
		if a.Fix != "" && s.Availability != config.Invalid {
			rows = append(rows, row{"fix", a.Fix})
		}
	}

	for i := range rows {
		rows[i].value = terminalSafe(rows[i].value)
	}
	var b strings.Builder
	if tty {
		width := 0
		for _, r := range rows[1:] {
			width = max(width, len(r.key)+1)
		}
		fmt.Fprintf(&b, "%s:\n", s.Name)
		for _, r := range rows[1:] {
			key := strings.ToUpper(r.key[:1]) + r.key[1:] + ":"
			fmt.Fprintf(&b, "  %-*s  %s\n", width, key, r.value)
		}
		if len(notes) > 0 {
			b.WriteString("Warnings:\n")
			for _, n := range notes {
				prefix := ""
				if n.severity == config.SeverityError {
					prefix = "error: "
				}
				fmt.Fprintf(&b, "  - %s%s\n", prefix, terminalSafe(n.text))
			}
		}
	} else {
		for _, r := range rows {
			fmt.Fprintf(&b, "%s\t%s\n", strings.ReplaceAll(r.key, " ", "_"), r.value)
		}
		for _, n := range notes {
			fmt.Fprintf(&b, "%s\t%s\n", n.severity, terminalSafe(n.text))
		}
	}
	_, err := fmt.Fprint(ios.Out, b.String())
	return err
}

// profiles are the usable profiles of the settings of r's workspace
// (its local and project settings' too); their problems are doctor's to
// report.
func (f *Factory) profiles(r *config.Resolved) config.Profiles {
	var profiles config.Profiles
	if st, err := f.settingsStack(r); err == nil {
		profiles, _ = st.Profiles()
	}
	return profiles
}

// inProfile is r as --profile NAME (checked before RunE) shows it: the
// servers the profile leaves out are disabled, "not in profile NAME", as
// status lists them. name "" is r itself. A name profiles lacks
// includes no server (fail closed: a zero Profile would include all).
func inProfile(r *config.Resolved, profiles config.Profiles, name string) *config.Resolved {
	if name == "" {
		return r
	}
	p, ok := profiles[name]
	only := *r
	only.Servers = slices.Clone(r.Servers)
	for i := range only.Servers {
		if rs := &only.Servers[i]; rs.Availability == config.Available && (!ok || !p.IncludesServer(rs.Name)) {
			rs.Availability, rs.DisabledReason = config.Disabled, fmt.Sprintf("not in profile %q", name)
		}
	}
	return &only
}

// markNameRefusals returns r with each available server that no host runs
// for its name (policy.ServerConflicts over every configured name, as the
// host decides it: a__b, or my-srv beside my_srv) made invalid, with why
// at its entry: mcp list and get say what status and doctor will, instead
// of "yes" and an approval that could never start it.
func markNameRefusals(r *config.Resolved) *config.Resolved {
	names := make([]string, len(r.Servers))
	for i, rs := range r.Servers {
		names[i] = rs.Name
	}
	refused := policy.ServerConflicts(names)
	if len(refused) == 0 {
		return r
	}
	out := *r
	out.Servers = slices.Clone(r.Servers)
	out.Diagnostics = slices.Clone(r.Diagnostics)
	for i := range out.Servers {
		rs := &out.Servers[i]
		why, ok := refused[rs.Name]
		if !ok || rs.Availability != config.Available {
			continue
		}
		d := config.Diagnostic{Severity: config.SeverityError, Position: rs.Pos, Server: rs.Name, Field: "name", Message: why}
		rs.Availability = config.Invalid
		rs.Diagnostics = append(slices.Clone(rs.Diagnostics), d)
		out.Diagnostics = append(out.Diagnostics, d)
	}
	return &out
}

// nearestNames suggests configured names close to a mistyped one.
func nearestNames(name string, r *config.Resolved) []string {
	var out []string
	lower := strings.ToLower(name)
	for _, s := range r.Servers {
		n := strings.ToLower(s.Name)
		if strings.Contains(n, lower) || strings.Contains(lower, n) || levenshtein(n, lower) <= 2 {
			out = append(out, s.Name)
		}
	}
	return out
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
