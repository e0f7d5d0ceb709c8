package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/trust"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

func init() {
	registerCommand(func(f *Factory) *cobra.Command { return NewDoctorCmd(f, nil) })
}

// DoctorOptions are the inputs of `switchboard doctor`.
type DoctorOptions struct {
	runtimeOptions
	JSON bool
}

// NewDoctorCmd returns `switchboard doctor`: why is my server not used?
func NewDoctorCmd(f *Factory, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check everything that keeps a server or a tool from being used, each with its fix",
		Long: `Run every check that explains why a server or a tool is not used, and say how
to fix each problem:

  config       the configuration files parse, with file:line:col for each problem
  server       each server's state after --wait, and why it is not connected
               (with the last lines it wrote to stderr when it failed)
  trust        each server's launch-trust verdict (project servers from the
               repository's .mcp.json start only once approved): approved,
               pre-approved by your settings, rejected, pending approval (with
               the literal command it would run and the command that approves
               it) or changed since approval (and what changed); user, local
               and managed servers need no approval. A server held by launch
               trust is reported here rather than under server. Also: a trust
               store or settings file that cannot be used
  sandbox      what each sandboxed server can reach; a failure where this
               system cannot sandbox it, where its definition asks for what
               a repository's sandbox refuses, or where its stderr shows
               what the sandbox refused it, with the setting that allows it
  env          ${VAR} references that are not set
  secrets      which secrets (${secret:NAME}) each server names, and whether
               your store has them; a project server's are not looked up
               until it is approved
  shadowed     a definition hidden by one of the same name in a higher scope
  tools        tools held because their definition changed since it was pinned,
               changed tools served as they are ("toolChanges": "notify"), the
               tool pin store when it cannot be used, and deceptive text (tag
               characters, bidi controls…) found in tool and prompt definitions
  hooks        the call hooks in force, and any that cannot be read (every call
               is refused until it is fixed)
  permissions  permission rules that can never match or are ignored: mcp__git*,
               mcp__github__get_* (* only replaces a whole last segment), a bare *,
               mcp__* in allow, allow rules in the project's own settings,
               malformed argument rules, rules naming a server that is not
               configured or a tool the connected server does not offer,
               settings files that do not parse
  profiles     the settings' profiles: errors that drop one, and entries that
               name no configured server (a typo: fail; near none: warn)

Piped, the first line is the header (LEVEL CHECK SERVER MESSAGE FIX,
tab-separated), then one tab-separated row per check: pass, note, warn or
fail, the check, the server ("-" for none), the message and the fix (empty
for none). Skip the header with tail -n +2, or use --json.

With --json, print an array of {check, server, ok, level, message, fix};
trust checks add "approval" (the object of 'switchboard mcp get NAME --json').

Exit status 0 when no check fails (a note or a warn is no failure), 1 when
one fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &DoctorOptions{runtimeOptions: newRuntimeOptions(f), JSON: f.global().JSON}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return doctorRun(cmd.Context(), opts)
		},
	}
}

// doctorLevel grades a check: a note is something a person may want to
// know (a disabled or shadowed server) that is not a failure; a warning
// is something written that does not do what it says (a field ignored, a
// definition another wins over) but leaves everything usable: it is not a
// failure either (doctor still exits 0).
type doctorLevel string

const (
	doctorPass doctorLevel = "pass"
	doctorNote doctorLevel = "note"
	doctorWarn doctorLevel = "warn"
	doctorFail doctorLevel = "fail"
)

// doctorCheck is one row of doctor (`doctor --json` keys scripts rely on:
// check, server, ok, message, fix).
type doctorCheck struct {
	Check   string      `json:"check"`
	Server  string      `json:"server"`
	OK      bool        `json:"ok"`
	Level   doctorLevel `json:"level"`
	Message string      `json:"message"`
	Fix     string      `json:"fix"`
	// Details are more lines for people (a failed server's stderr, what a
	// server held by launch trust would run).
	Details []string `json:"details,omitempty"`
	// Approval is the launch-trust verdict of a trust check.
	Approval *approvalJSON `json:"approval,omitempty"`
}

func check(name, server string, level doctorLevel, message, fix string) doctorCheck {
	return doctorCheck{Check: name, Server: server, OK: level != doctorFail, Level: level, Message: message, Fix: fix}
}

func doctorRun(ctx context.Context, opts *DoctorOptions) (err error) {
	s, err := startSession(ctx, &opts.runtimeOptions, nil)
	if err != nil {
		return err
	}
	// Doctor reports the diagnostics itself, as checks.
	s.diags = nil
	// A verdict on a server npx is still downloading would be a false
	// fail: on a terminal, doctor waits for it as the listings do.
	s.runnersWait = true
	defer func() { err = s.close(err) }()
	report := s.snapshot(ctx)

	var pol *policy.Policy
	if opts.Policy != nil {
		pol = s.sb.Policy()
	}
	tools := map[string][]host.Tool{}
	if list, _ := s.h.Tools(ctx); list != nil { // cached by snapshot
		for _, t := range list.Tools {
			tools[t.Server] = append(tools[t.Server], t)
		}
	}
	var lt *launchTrust
	if opts.Trust != nil {
		// Built afresh: it sees approvals given at the prompt of this run.
		if lt, err = opts.Trust(s.cfg); err != nil {
			return err
		}
	}
	checks := doctorChecks(ctx, s.cfg, report.Servers, tools, pol, lt, &opts.runtimeOptions)
	checks = append(checks, hookChecks(report.Hooks, report.HookProblems, &opts.runtimeOptions)...)
	// A repository's own callHooks never run: said, so that nobody counts
	// on them.
	if st := s.sb.Settings(); st != nil {
		_, diags := st.CallHooks()
		for _, d := range diags {
			if d.Severity == config.SeverityWarning {
				checks = append(checks, check("hooks", "", doctorNote, opts.tilde(d.Position.String()+": "+d.Message), d.Fix))
			}
		}
	}
	if opts.JSON {
		if err := printJSON(opts.IO.Out, checks); err != nil {
			return err
		}
	} else if err := printDoctor(opts.IO, checks, s.cfg, &opts.runtimeOptions); err != nil {
		return err
	}
	for _, c := range checks {
		if !c.OK {
			return silentExit(ExitFailure)
		}
	}
	return nil
}

// missingEnvPrefix starts the diagnostic config adds for unset variables;
// doctor shows those as env checks instead.
const missingEnvPrefix = "Missing environment variables"

// doctorChecks runs every check on what the session found: the servers'
// states and the tools of the connected ones.
// lt, if not nil, gives each server's launch-trust verdict.
func doctorChecks(ctx context.Context, cfg *config.Resolved, servers []host.ServerStatus, tools map[string][]host.Tool, pol *policy.Policy, lt *launchTrust, o *runtimeOptions) []doctorCheck {
	var out []doctorCheck

	// Configuration files.
	nconfig := 0
	for _, d := range cfg.Diagnostics {
		if d.Server != "" && strings.HasPrefix(d.Message, missingEnvPrefix) {
			continue
		}
		out = append(out, check("config", d.Server, doctorFail, diagnosticText(d, o), cliDiagnostic(d).Fix))
		nconfig++
	}
	if nconfig == 0 {
		out = append(out, check("config", "", doctorPass, "the configuration files parse and every definition is valid", ""))
	}
	if c, ok := sharedFileCheck(cfg.Workspace, o); ok {
		out = append(out, c)
	}

	// The trust store and the settings that pre-approve: when unusable,
	// nothing is approved (fail closed), which is worth saying once.
	if lt != nil {
		for _, d := range lt.warnings {
			msg := d.Message
			if p := d.Position; p.File != "" {
				p.File = o.tilde(p.File)
				msg = p.String() + ": " + msg
			}
			out = append(out, check("trust", "", doctorFail, msg, d.Fix))
		}
	}

	// Approvals by name alone, for every repository: a repository that
	// names its server like one of these starts it without asking.
	if lt != nil && lt.home != "" {
		if user := userSettings(lt.settings); user != nil {
			var what string
			switch {
			case user.EnableAllProjectMcpServers():
				what = `"enableAllProjectMcpServers": true approves every project server of every repository you open`
			case len(user.EnabledMcpjsonServers()) > 0:
				what = fmt.Sprintf(`"enabledMcpjsonServers" %s approves a server of that name in every repository you open, whatever it runs`,
					termsafe.Line(strings.Join(user.EnabledMcpjsonServers(), ", ")))
			}
			if what != "" {
				out = append(out, check("trust", "", doctorNote, o.tilde(filepath.Join(lt.home, UserSettingsFile))+": "+what,
					`move it under "projects" → this workspace's path (local settings), or approve each server with switchboard mcp approve NAME`))
			}
		}
	}

	// Servers: state, launch trust, missing variables, shadowed definitions.
	status := map[string]host.ServerStatus{}
	for _, st := range servers {
		status[st.Name] = st
	}
	var names []string
	for _, rs := range cfg.Servers {
		names = append(names, rs.Name)
	}
	// A server whose name no host runs (a__b; my-srv beside my_srv) is
	// fixed by renaming it: approving it, running its command or reading
	// its sandbox would not start it.
	refused := policy.ServerConflicts(names)
	for _, rs := range cfg.Servers {
		st, ok := status[rs.Name]
		if !ok {
			continue
		}
		if why := refused[rs.Name]; why != "" && rs.Availability == config.Available {
			fix := "rename it in " + o.tilde(rs.File)
			if policy.ServerNameProblem(rs.Name) == "" {
				fix = "rename all but one of them (this one is in " + o.tilde(rs.File) + ")"
			}
			out = append(out, check("server", rs.Name, doctorFail, why, fix))
			continue
		}
		if rs.Availability == config.Available && host.IsGatewayServer(&rs) {
			// Written by install-gateway into a file a client reads, which
			// Switchboard reads too: nothing to start, approve or fix.
			out = append(out, check("server", rs.Name, doctorNote,
				fmt.Sprintf("the Switchboard gateway's own entry in %s (%s), for the clients that read that file; Switchboard never starts it", o.tilde(rs.File), commandText(st)), ""))
			continue
		}
		if lt == nil || rs.Availability == config.Missing {
			out = append(out, serverCheck(rs, st, cfg.Workspace, o))
		} else {
			a := lt.approval(&rs)
			// Held by launch trust, and nothing else: the trust check says
			// it all (a server check would repeat it, with a worse fix).
			held := !a.Allowed && rs.Availability == config.Available && string(st.State) == a.State
			if !held {
				out = append(out, serverCheck(rs, st, cfg.Workspace, o))
			}
			out = append(out, trustCheck(rs, st, a, held, o))
			if a.Verdict == trust.Rejected.String() {
				continue // it never starts: what its sandbox would be is noise
			}
		}
		if c, ok := sandboxCheck(&rs, st, cfg.Workspace, o); ok {
			out = append(out, c)
		}
		out = append(out, toolPinChecks(st)...) // toolpins.go
		if len(rs.Secrets) > 0 {
			allowed := rs.Trust != config.TrustRepo
			if lt != nil {
				allowed = lt.approval(&rs).Allowed
			}
			out = append(out, secretCheck(ctx, &rs, allowed, o))
		}
		if len(rs.MissingEnv) > 0 {
			out = append(out, check("env", rs.Name, doctorFail,
				missingEnvPrefix+": "+strings.Join(rs.MissingEnv, ", "),
				"set them in the environment, or give each a default: ${VAR:-default}"))
		}
		if len(rs.Shadows) > 0 {
			var hidden []string
			for _, sc := range rs.Shadows {
				hidden = append(hidden, string(sc))
			}
			where := string(rs.Scope)
			if rs.File != "" {
				where += " (" + o.tilde(rs.File) + ")"
			}
			out = append(out, check("shadowed", rs.Name, doctorNote,
				fmt.Sprintf("the %s definition is used; it hides the %s one", where, strings.Join(hidden, " and ")),
				fmt.Sprintf("edit the %s definition, or remove it with `switchboard mcp remove %s --scope %s`", rs.Scope, rs.Name, rs.Scope)))
		}
	}

	out = append(out, gatewayRepeatChecks(servers, tools)...)

	// Permission rules.
	probs := append(pol.Problems(names), unknownToolRules(pol, status, tools)...)
	for _, p := range probs {
		src := p.Source
		if src.File != "" {
			src.File = o.tilde(src.File)
		}
		msg := p.Message
		if p.Rule != nil {
			msg = fmt.Sprintf("%q in permissions.%s of %s: %s", p.Rule.Text, p.Rule.List, src, p.Message)
		} else {
			msg = fmt.Sprintf("%s: %s", src, oneLineText(msg)) // the file names itself in src
		}
		out = append(out, check("permissions", ruleServer(p, names), doctorFail, msg, problemFix(p)))
	}
	if len(probs) == 0 {
		n := len(pol.Rules())
		msg := "no permission rules: every MCP tool call is asked for"
		if n > 0 {
			msg = fmt.Sprintf("%d permission rules, each of which can match", n)
		}
		out = append(out, check("permissions", "", doctorPass, msg, ""))
	}
	return append(out, profileChecks(lt, names, o)...)
}

// gatewayRepeatChecks notes each server that is a Switchboard gateway
// (its serverInfo) serving tools of servers configured here as well: a
// client's entry for the gateway, imported (`mcp import`), makes every one
// of them reach a model twice, directly and through the gateway.
func gatewayRepeatChecks(servers []host.ServerStatus, tools map[string][]host.Tool) []doctorCheck {
	var out []doctorCheck
	serverOf := map[string]string{} // a tool's namespaced name → its server
	for srv, ts := range tools {
		for _, t := range ts {
			serverOf[t.Name] = srv
		}
	}
	for _, st := range servers {
		if name, _, _ := strings.Cut(st.ServerInfo, " "); name != "switchboard" {
			continue
		}
		// A gateway serves mcp__<server>__<tool> as <server>__<tool>.
		var again []string
		for _, t := range tools[st.Name] {
			if srv, ok := serverOf[toolsurface.Prefix+t.Tool.Name]; ok && srv != st.Name {
				again = append(again, t.Tool.Name)
			}
		}
		if len(again) == 0 {
			continue
		}
		shown := again
		if len(shown) > 3 {
			shown = append(slices.Clone(shown[:3]), "…")
		}
		out = append(out, check("server", st.Name, doctorNote,
			fmt.Sprintf("a Switchboard gateway serving %d tools of servers configured here too (%s): a model sees each twice, through it and directly",
				len(again), termsafe.Line(strings.Join(shown, ", "))),
			fmt.Sprintf("if it serves this configuration (a client's entry for the gateway, imported), remove it: switchboard mcp remove %s", termsafe.Line(st.Name))))
	}
	return out
}

// diagnosticText is a diagnostic as a doctor check says it:
// "~/file:line:col: field "f": message".
func diagnosticText(d config.Diagnostic, o *runtimeOptions) string {
	msg := d.Message
	if d.Field != "" {
		msg = fmt.Sprintf("field %q: %s", d.Field, msg)
	}
	if p := d.Position; p.File != "" {
		p.File = o.tilde(p.File)
		msg = p.String() + ": " + msg
	}
	return msg
}

// profileChecks reports the settings' profiles (docs/configuration.md,
// Profiles): each that cannot be used, and each server entry that looks
// like a typo of a configured server's name, fails with a suggestion; a
// warning (a field ignored, a definition the managed one wins over, a
// server this workspace does not configure) warns.
func profileChecks(lt *launchTrust, names []string, o *runtimeOptions) []doctorCheck {
	if lt == nil || lt.settings == nil {
		return nil
	}
	ps, diags := lt.settings.Profiles()
	if len(ps) == 0 && len(diags) == 0 {
		return nil
	}
	var out []doctorCheck
	failed, warned := false, false
	for _, d := range append(diags, ps.Check(names)...) {
		level := doctorFail
		if d.Severity == config.SeverityWarning {
			level, warned = doctorWarn, true
		} else {
			failed = true
		}
		out = append(out, check("profiles", "", level, termsafe.Line(diagnosticText(d, o)), d.Fix))
	}
	switch {
	case failed:
	case warned:
		out = append(out, check("profiles", "", doctorPass, fmt.Sprintf("%d profiles, each usable (the warnings above aside)", len(ps)), ""))
	default:
		out = append(out, check("profiles", "", doctorPass, fmt.Sprintf("%d profiles, each naming configured servers", len(ps)), ""))
	}
	return out
}

// unknownToolRules finds rules naming one tool of a connected server that
// offers no tool of that name (a typo, or a tool since renamed).
func unknownToolRules(pol *policy.Policy, status map[string]host.ServerStatus, tools map[string][]host.Tool) []policy.Problem {
	var out []policy.Problem
	for _, r := range pol.Rules() {
		pat := r.Pattern()
		if r.Problem() != "" || pat.AllTools() {
			continue
		}
		for _, srv := range slices.Sorted(maps.Keys(tools)) {
			list := tools[srv]
			if status[srv].State != host.StateConnected || !pat.NamesServer(srv) || pat.WholeServer(srv) {
				continue
			}
			if len(matching(pat, srv, list)) > 0 {
				continue
			}
			rule := r
			out = append(out, policy.Problem{Rule: &rule, Source: r.Source, Message: noSuchTool(srv, list),
				Fix: fmt.Sprintf("write the name as `switchboard tools --server %s` shows it", srv)})
		}
	}
	return out
}

// ruleServer names the one configured server a rule is about, if any.
func ruleServer(p policy.Problem, names []string) string {
	if p.Rule == nil || p.Rule.Pattern().AllTools() {
		return ""
	}
	for _, n := range names {
		if p.Rule.Pattern().NamesServer(n) {
			return n
		}
	}
	return ""
}

// secretCheck says which secrets a server names and whether the store has
// them. Those of a server that may not start (a project server not
// approved) are not looked up: naming them is all a repository can do.
func secretCheck(ctx context.Context, rs *config.ResolvedServer, allowed bool, o *runtimeOptions) doctorCheck {
	names := strings.Join(rs.Secrets, ", ")
	if !allowed || rs.Availability != config.Available {
		return check("secrets", rs.Name, doctorNote, fmt.Sprintf("names %s; not looked up, since it may not start now", names), "")
	}
	if o.SecretStore == nil {
		return check("secrets", rs.Name, doctorNote, "names "+names, "")
	}
	store := o.SecretStore()
	var missing, failed []string
	fix := ""
	for _, n := range rs.Secrets {
		_, err := store.Get(ctx, n)
		switch {
		case errors.Is(err, secretstore.ErrNotFound):
			missing = append(missing, n)
			if fix == "" {
				fix = "switchboard secret set " + n
			}
		case err != nil:
			failed = append(failed, n+": "+err.Error())
			if fix == "" {
				fix = storeHint(err)
			}
		}
	}
	switch {
	case len(missing) > 0:
		return check("secrets", rs.Name, doctorFail, fmt.Sprintf("names %s; not in your store: %s", names, strings.Join(missing, ", ")), fix)
	case len(failed) > 0:
		return check("secrets", rs.Name, doctorFail, fmt.Sprintf("names %s; cannot be read: %s", names, strings.Join(failed, "; ")), fix)
	}
	return check("secrets", rs.Name, doctorPass, fmt.Sprintf("names %s; each is in your store", names), "")
}

// serverCheck says whether a server is in use, and if not why and what to do.
func serverCheck(rs config.ResolvedServer, st host.ServerStatus, workspace string, o *runtimeOptions) doctorCheck {
	name := rs.Name
	reason := st.Reason
	switch st.State {
	case host.StateConnected:
		if len(st.ListErrors) > 0 {
			return check("server", name, doctorFail, "connected, but "+dashEmpty(reason),
				"the server answers, but not every list it offers: check its logs or run its command by hand; `switchboard status` shows its stderr")
		}
		return check("server", name, doctorPass, fmt.Sprintf("connected: %d tools, about %d tokens", st.Tools, st.Tokens), "")
	case host.StateConnecting:
		if len(st.StderrTail) > 0 && sandboxRefused(rs, st, workspace, o) {
			// Not slow: refused by its sandbox, which its sandbox check says.
			return check("server", name, doctorFail, "still connecting after "+formatElapsed(o.now().Sub(st.Since))+", refused by its sandbox",
				"see its sandbox check: waiting longer will not help")
		}
		if runner := packageRunner(&rs); runner != "" {
			return check("server", name, doctorFail, "still connecting after "+formatElapsed(o.now().Sub(st.Since)),
				runner+" may still be downloading it (a first run): wait longer with --wait 120s")
		}
		return check("server", name, doctorFail, "still connecting after "+formatElapsed(o.now().Sub(st.Since)),
			"it is slow to start: wait longer with --wait 30s, or raise its \"startup_timeout\" (ms)")
	case host.StateDisabled:
		fix := fmt.Sprintf("switchboard mcp enable %s", name)
		if strings.Contains(reason, "managed") {
			fix = "your administrator's managed settings disable it"
		}
		return check("server", name, doctorNote, "disabled: "+dashEmpty(reason), fix)
	case host.StatePaused:
		return check("server", name, doctorNote, "paused for this session", "resume it")
	case host.StateMissing:
		return check("server", name, doctorFail, "missing: "+dashEmpty(reason),
			fmt.Sprintf("define it with `switchboard mcp add %s …`, or take it out of enabledMcpServers", name))
	case host.StateNeedsApproval, host.StateApprovalStale:
		return check("server", name, doctorFail, string(st.State)+": "+dashEmpty(reason),
			fmt.Sprintf("review what it runs, then `switchboard mcp approve %s`", name))
	}
	c := check("server", name, doctorFail, string(st.State)+": "+dashEmpty(reason), "")
	switch {
	case rs.Availability == config.Invalid:
		c.Fix = "fix the definition (see the config check)"
	case st.State == host.StateCircuitOpen:
		c.Fix = "it failed repeatedly; fix the cause, then check again with `switchboard doctor`"
	case secretHint(st.Err) != "":
		c.Fix = secretHint(st.Err)
	case errors.Is(st.Err, exec.ErrNotFound) && rs.Effective.Type == config.TypeStdio:
		c.Fix = notFoundHint(rs.Effective.Command)
	case commandText(st) != "" && rs.Effective.Type == config.TypeStdio:
		c.Fix = "run its command by hand to see why: " + commandText(st)
	case headerHint(st) != "":
		c.Fix = headerHint(st)
	default:
		c.Fix = "check that " + dashEmpty(commandText(st)) + " is reachable, and its headers or login"
	}
	for _, l := range lastNonEmptyLines(st.StderrTail, statusStderrLines) {
		c.Details = append(c.Details, "stderr: "+truncRunes(l, 200))
	}
	return c
}

// sharedFileCheck notes a workspace's .mcp.json that only a JSONC reader
// can read: Switchboard accepts comments and trailing commas, but the file
// is shared with Claude Code and other clients, which read it as strict
// JSON and reject it. Switchboard's own edits add neither; these are the
// user's, so doctor says so instead of rewriting them.
func sharedFileCheck(root string, o *runtimeOptions) (doctorCheck, bool) {
	if root == "" {
		return doctorCheck{}, false
	}
	path := filepath.Join(root, ".mcp.json")
	data, err := safefile.ReadFile(path)
	if err != nil {
		return doctorCheck{}, false
	}
	text, _ := config.StripBOM(data)
	if len(bytes.TrimSpace(text)) == 0 || json.Valid(text) {
		return doctorCheck{}, false
	}
	if config.CheckNesting(path, text) != nil {
		return doctorCheck{}, false // the config check reports it
	}
	if _, err := hujson.Parse(text); err != nil {
		return doctorCheck{}, false // the config check reports it
	}
	return check("config", "", doctorNote,
		o.tilde(path)+" has comments or trailing commas: Switchboard reads it, but Claude Code and other clients that share this file read strict JSON and reject it",
		"remove the comments and trailing commas from "+o.tilde(path)+"; notes on your own servers can live in ~/.switchboard/mcp.json, which only Switchboard reads"), true
}

// trustCheck reports a server's launch-trust verdict. held says that the
// verdict is what keeps the server from starting: its message is then the
// one status shows (st.Reason).
func trustCheck(rs config.ResolvedServer, st host.ServerStatus, a approvalJSON, held bool, o *runtimeOptions) doctorCheck {
	level := doctorPass
	msg := approvalSummary(&rs, a, o.tilde)
	fix := a.Fix
	switch {
	case held && a.Verdict == trust.Rejected.String():
		level = doctorNote
	case held:
		level = doctorFail
		msg = string(st.State) + ": " + dashEmpty(st.Reason)
		fix = fmt.Sprintf("review what it runs, then `%s`", approveCommand(rs.Name))
	case !a.Allowed:
		// It does not start for another reason too (disabled, invalid):
		// worth knowing before enabling it, not a failure.
		level = doctorNote
	}
	c := check("trust", rs.Name, level, msg, fix)
	for _, l := range approvalDetails(a) {
		c.Details = append(c.Details, l.label+": "+l.value)
	}
	c.Approval = &a
	return c
}

// printDoctor prints the checks: a table on a terminal with each fix and
// detail under its row and a summary; tab-separated rows when piped.
func printDoctor(ios *IOStreams, checks []doctorCheck, cfg *config.Resolved, o *runtimeOptions) error {
	if !ios.IsTTY {
		t := newTablePrinter(ios, "level", "check", "server", "message", "fix")
		for _, c := range checks {
			t.AddRow(string(c.Level), c.Check, dashEmpty(c.Server), c.Message, c.Fix)
		}
		return t.Render()
	}
	w := ios.Out
	if cfg.Workspace != "" {
		fmt.Fprintf(w, "Workspace %s\n\n", termsafe.Line(o.tilde(cfg.Workspace)))
	}
	width := 0
	// Messages, details and fixes quote servers' errors and stderr,
	// rules and paths written by others: each line is made safe to print.
	label := func(c doctorCheck) string {
		if c.Server == "" {
			return termsafe.Line(c.Check)
		}
		return termsafe.Line(c.Check + " " + c.Server)
	}
	for _, c := range checks {
		width = max(width, len([]rune(label(c))))
	}
	failed, warned := 0, 0
	for _, c := range checks {
		// The level's own word, as piped rows and --json spell it: what
		// a person reads is what a script greps.
		mark := string(c.Level)
		if !c.OK {
			failed++
		}
		if c.Level == doctorWarn {
			warned++
		}
		fmt.Fprintf(w, "%s  %-*s  %s\n", mark, width, label(c), termsafe.Line(c.Message))
		indent := strings.Repeat(" ", 6+width+2)
		for _, d := range c.Details {
			fmt.Fprintf(w, "%s%s\n", indent, termsafe.Line(d))
		}
		if c.Fix != "" {
			fmt.Fprintf(w, "%sfix: %s\n", indent, termsafe.Line(c.Fix))
		}
	}
	fmt.Fprintln(w)
	summary(w, failed, warned, len(checks))
	return nil
}

// summary is doctor's last line; the checks that passed with a warning
// are counted apart, so that "passed" does not hide them.
func summary(w io.Writer, failed, warned, total int) {
	line := fmt.Sprintf("%d of %d checks failed", failed, total)
	if failed == 0 {
		line = fmt.Sprintf("All %d checks passed", total)
	}
	if warned > 0 {
		line += fmt.Sprintf(", %d with a warning", warned)
	}
	fmt.Fprintln(w, line+".")
}

// userSettings is the user settings file's top level (without
// "projects"), or nil when it is absent or unusable (the trust warnings
// report that).
func userSettings(st *config.SettingsStack) config.Settings {
	if st == nil {
		return nil
	}
	for _, l := range st.Layers {
		if l.Scope == config.SettingsUser {
			return l.Settings
		}
	}
	return nil
}

// programHomes names what installs the commands MCP servers are most
// often started with.
var programHomes = map[string]string{
	"npx": "Node.js", "npm": "Node.js", "node": "Node.js",
	"uvx": "uv", "uv": "uv",
	"bunx": "Bun", "bun": "Bun",
	"pipx": "pipx", "deno": "Deno", "docker": "Docker",
	"python": "Python", "python3": "Python",
}

// notFoundHint is the fix for a stdio server whose program is not on PATH.
func notFoundHint(command string) string {
	if home, ok := programHomes[config.ProgramName(command)]; ok {
		return fmt.Sprintf("install %s, which provides %q, or give \"command\" its full path", home, command)
	}
	return fmt.Sprintf("install %q so that it is on PATH, or give \"command\" its full path", command)
}
