package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
)

func init() {
	registerCommand(newPermissionsCmd)
}

// grantTarget is a settings object that permission commands and "always"
// answers write rules to: the user settings (~/.switchboard/settings.json)
// or a workspace's local entry in that file ("projects" → <workspace>).
// Project settings are never a target: the repository's file may only
// tighten, and it is the repository's.
type grantTarget struct {
	Scope     policy.Scope // ScopeLocal or ScopeUser
	File      string
	Workspace string // the workspace of a local target
	// keys are the "projects" entries of the workspace, best first (a new
	// entry goes under the first); nil for the user target.
	keys []string
}

// grantTargets returns where rules can be written from home for
// workspace: local first (when there is a workspace), then user.
func grantTargets(home, workspace string) []grantTarget {
	file := policy.UserSettingsPath(home)
	var out []grantTarget
	if workspace != "" {
		out = append(out, grantTarget{Scope: policy.ScopeLocal, File: file, Workspace: workspace, keys: localKeys(file, workspace)})
	}
	return append(out, grantTarget{Scope: policy.ScopeUser, File: file})
}

// obj is the object of File the rules go in (nil: the top level).
func (t grantTarget) obj() []string {
	if t.Scope == policy.ScopeLocal {
		return config.SettingsLocalPath(t.keys[0])
	}
	return nil
}

// describe names the target for people: `local settings
// ~/.switchboard/settings.json (workspace ~/proj)`.
func (t grantTarget) describe(tilde func(string) string) string {
	s := fmt.Sprintf("%s settings %s", t.Scope, tilde(t.File))
	if t.Scope == policy.ScopeLocal {
		s += " (workspace " + tilde(t.Workspace) + ")"
	}
	return termsafe.Line(s)
}

// set puts rule in list, taking it out of the target's other lists.
func (t grantTarget) set(list policy.Action, rule string) (moved []string, changed bool, err error) {
	return config.SetPermissionRule(t.File, t.obj(), string(list), rule)
}

// remove takes rule out of the target's lists (of every local entry of the
// workspace, since the rules of each apply).
func (t grantTarget) remove(rule string) ([]string, error) {
	if t.Scope != policy.ScopeLocal {
		return config.RemovePermissionRule(t.File, nil, "", rule)
	}
	var all []string
	for _, k := range t.keys {
		r, err := config.RemovePermissionRule(t.File, config.SettingsLocalPath(k), "", rule)
		if err != nil {
			return all, err
		}
		all = append(all, r...)
	}
	return all, nil
}

// PermissionsOptions are the inputs of `switchboard permissions …`.
type PermissionsOptions struct {
	IO      *IOStreams
	Factory *Factory
	// List is the list to put Rule in (allow, ask, deny); "" for remove.
	List policy.Action
	Rule string
	// Scope is --scope: "user" or "local"; "" picks local inside a
	// workspace, else user.
	Scope string
	JSON  bool
	// Force writes Rule even when it names no configured server or a tool
	// its server does not offer (allow, ask, deny).
	Force bool
}

func newPermissionsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "permissions",
		Short: "List, add and remove per-call permission rules",
		Long: `Every MCP tool call is decided by the rules in "permissions" {"allow", "ask",
"deny"} of the settings files: deny beats ask beats allow, and no matching rule
means ask (a question on a terminal or to the gateway's client; a refusal,
exit 3, where nobody can answer).

Rules: mcp__server (all of a server's tools; a tool that declares
destructiveHint is still asked for), mcp__server__tool (one tool, also a
destructive one), mcp__* (every tool, deny and ask only), and argument
conditions such as mcp__fs__write_file(path:"/tmp/**").

allow, ask and deny write to your local settings for this workspace
(~/.switchboard/settings.json under "projects" → the workspace), or with
--scope user to your user settings (the same file's top level); outside a
workspace the user settings are the default. The repository's own
.switchboard/settings.json is never written: it may only tighten, and it is
the repository's. A rule that would have no effect is refused with the
reason, and nothing is written. Edits keep the file's comments.`,
		Example: `  switchboard permissions allow mcp__github__get_me
  switchboard permissions deny mcp__github__delete_repository --scope user
  switchboard permissions allow 'mcp__fs__write_file(path:"/tmp/**")'
  switchboard permissions remove mcp__github__get_me
  switchboard permissions list --json`,
	}
	cmd.AddCommand(newPermissionsListCmd(f))
	for _, l := range []policy.Action{policy.Allow, policy.Ask, policy.Deny} {
		cmd.AddCommand(newPermissionsSetCmd(f, l, nil))
	}
	cmd.AddCommand(newPermissionsSetCmd(f, "", nil))
	return cmd
}

// newPermissionsSetCmd returns `permissions allow|ask|deny RULE`, or
// `permissions remove RULE` for list "". runF, if not nil, replaces the
// run function.
func newPermissionsSetCmd(f *Factory, list policy.Action, runF func(context.Context, *PermissionsOptions) error) *cobra.Command {
	opts := &PermissionsOptions{IO: f.IO, Factory: f, List: list}
	verb, short := string(list), ""
	switch list {
	case policy.Allow:
		short = "Let calls the rule matches run without asking"
	case policy.Ask:
		short = "Ask before calls the rule matches"
	case policy.Deny:
		short = "Refuse calls the rule matches"
	default:
		verb, short = "remove", "Remove a rule from your local or user settings"
	}
	cmd := &cobra.Command{
		Use:   verb + " RULE",
		Short: short,
		Args:  exactArgs(1, "a rule such as mcp__server__tool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Rule = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.List == "" {
				return permissionsRemoveRun(cmd.Context(), opts)
			}
			return permissionsSetRun(cmd.Context(), opts)
		},
	}
	scopeHelp := "write to `SCOPE`: local (this workspace, the default inside one) or user"
	if list == "" {
		scopeHelp = "remove only from `SCOPE` (local or user); default: both"
	}
	cmd.Flags().StringVar(&opts.Scope, "scope", "", scopeHelp)
	if list != "" {
		cmd.Flags().BoolVar(&opts.Force, "force", false, "write the rule even if it names no configured server, or a tool its server does not offer")
	}
	return cmd
}

// pickTarget returns the target --scope names, or the default: local in a
// workspace, else user.
func (o *PermissionsOptions) pickTarget() (grantTarget, error) {
	f := o.Factory
	root, inWorkspace := f.WorkspaceRoot()
	if !inWorkspace {
		root = ""
	}
	targets := grantTargets(f.Home(), root)
	switch strings.ToLower(o.Scope) {
	case "":
		return targets[0], nil
	case "user":
		return targets[len(targets)-1], nil
	case "local":
		if !inWorkspace {
			return grantTarget{}, Usagef("run it inside a project, pass --workspace DIR, or use --scope user",
				"--scope local works per workspace, and none was found from %s (no .mcp.json, .switchboard/ or .git above it)", f.Cwd)
		}
		return targets[0], nil
	case "project":
		return grantTarget{}, Usagef("use --scope local (yours, for this workspace) or edit .switchboard/settings.json yourself",
			"switchboard does not write project settings: the repository's file may only tighten (deny, ask), and it is the repository's")
	case "managed":
		return grantTarget{}, Usagef("ask your administrator", "managed settings are the administrator's")
	}
	return grantTarget{}, Usagef("use --scope local or --scope user", "unknown scope %q", o.Scope)
}

func permissionsSetRun(ctx context.Context, opts *PermissionsOptions) error {
	if problem, fix := policy.CheckRule(opts.List, opts.Rule); problem != "" {
		if r := strings.TrimSpace(opts.Rule); servedToolName(r) {
			// A gateway client's name for a tool (<server>__<tool>).
			fix = fmt.Sprintf("did you mean mcp__%s? (a gateway's clients see <server>__<tool>; rules name mcp__<server>__<tool>)", r)
		}
		return UsageErr(fmt.Errorf("rule %q not written: %s", opts.Rule, problem), fix)
	}
	t, err := opts.pickTarget()
	if err != nil {
		return err
	}
	if opts.Rule, err = opts.checkRuleNames(ctx); err != nil {
		return err
	}
	moved, changed, err := t.set(opts.List, opts.Rule)
	if err != nil {
		return configFileErr(err)
	}
	where := t.describe(opts.Factory.tilde)
	rule := termsafe.Line(fmt.Sprintf("%q", opts.Rule))
	switch {
	case !changed:
		fmt.Fprintf(opts.IO.Out, "%s is already in permissions.%s of %s\n", rule, opts.List, where)
	case len(moved) > 0:
		fmt.Fprintf(opts.IO.Out, "Moved %s from permissions.%s to permissions.%s of %s\n", rule, strings.Join(moved, ", "), opts.List, where)
	default:
		fmt.Fprintf(opts.IO.Out, "Added %s to permissions.%s of %s\n", rule, opts.List, where)
	}
	return nil
}

func permissionsRemoveRun(ctx context.Context, opts *PermissionsOptions) error {
	f := opts.Factory
	var targets []grantTarget
	if opts.Scope != "" {
		t, err := opts.pickTarget()
		if err != nil {
			return err
		}
		targets = []grantTarget{t}
	} else {
		root, ok := f.WorkspaceRoot()
		if !ok {
			root = ""
		}
		targets = grantTargets(f.Home(), root)
	}
	removedAny := false
	for _, t := range targets {
		removed, err := t.remove(opts.Rule)
		if err != nil {
			return configFileErr(err)
		}
		if len(removed) > 0 {
			removedAny = true
			fmt.Fprintf(opts.IO.Out, "Removed %s from permissions.%s of %s\n", termsafe.Line(fmt.Sprintf("%q", opts.Rule)),
				strings.Join(dedupe(removed), ", "), t.describe(f.tilde))
		}
	}
	if removedAny {
		return nil
	}
	// Say where it is when it is somewhere switchboard does not edit.
	cfg, _ := f.LoadConfig()
	for _, r := range f.permissionPolicy(cfg).Rules() {
		if r.Text == opts.Rule && r.Source.Scope != policy.ScopeLocal && r.Source.Scope != policy.ScopeUser {
			return Failuref("edit that file yourself if it is yours", "%q is not in your local or user settings; it is in permissions.%s of %s",
				opts.Rule, r.List, r.Source)
		}
	}
	where := "your local or user settings"
	if len(targets) == 1 {
		where = targets[0].describe(f.tilde)
	}
	return Failuref("see `switchboard permissions list` for the rules in force", "no rule %q in %s", opts.Rule, where)
}

// permissionJSON is one element of `permissions list --json`.
type permissionJSON struct {
	Rule  string        `json:"rule"`
	List  policy.Action `json:"list"`
	Scope policy.Scope  `json:"scope"`
	// File is the settings file ("" for inline --settings).
	File string `json:"file"`
	// Profile is the profile (--profile) whose "permissions" hold the
	// rule; "" for a rule of the settings' own "permissions".
	Profile string `json:"profile,omitempty"`
	// Matches are the configured servers' tools the rule matches now:
	// {server, tool}, tool "*" for all of a server's tools.
	Matches []permissionMatch `json:"matches"`
	// Conditions says the rule constrains arguments, so it matches only
	// some calls of those tools.
	Conditions bool `json:"conditions,omitempty"`
	// Problem says why the rule takes no effect ("" when it does).
	Problem string `json:"problem,omitempty"`
}

type permissionMatch struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Unchecked says why the server's tools could not be listed (it needs
	// approval, did not connect within --wait…): Tool is then the rule's
	// own spelling, not a tool the server was seen to offer.
	Unchecked string `json:"unchecked,omitempty"`
}

func newPermissionsListCmd(f *Factory) *cobra.Command {
	opts := &PermissionsOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every permission rule in force, where it is written and what it matches",
		Long: `List every permission rule of every settings file in force (managed, --settings,
local, user, project), in the order they are weighed, with the file it is in and
what it matches among the configured servers. A rule that takes no effect says
why (an allow rule of the repository's own settings, mcp__git*, a tool its
server does not offer, …). To tell, the servers that rules name single tools of
are started (at most --wait; a server that needs approval is not) and their
tools listed; a tool that could not be checked says why.
` + "`switchboard tools`" + ` shows which rule decides each tool.

Piped, the first line is the header (LIST RULE SCOPE MATCHES FILE,
tab-separated), then one tab-separated row per rule with those five columns.
Skip the header with tail -n +2, or use --json.

With --json, print an array of {rule, list, scope, file, profile, matches:
[{server, tool, unchecked}], conditions, problem}; tool "*" stands for all of a
server's tools. With --profile NAME the profile's deny and ask rules are listed
too (profile NAME, SCOPE "user (profile NAME)"): they join the others for that
profile's calls.

A settings or configuration file with an error is reported on stderr after the
list, and the exit code is then 2.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.global().JSON
			return permissionsListRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func permissionsListRun(ctx context.Context, opts *PermissionsOptions) error {
	f := opts.Factory
	cfg, err := f.LoadConfig()
	if err != nil {
		return err
	}
	var servers []string
	for _, s := range cfg.Servers {
		servers = append(servers, s.Name)
	}
	pol := f.permissionPolicy(cfg)
	if name := f.global().Profile; name != "" {
		// --profile: its deny and ask rules join the global ones, as they
		// do for every call of the run (checkProfile vetted the name).
		if st, err := f.settingsStack(cfg); err == nil {
			if ps, _ := st.Profiles(); ps != nil {
				if p, ok := ps[name]; ok {
					pol = pol.With(policy.ProfileRules(p)...)
				}
			}
		}
	}
	rules := orderedRules(pol.Rules())
	// A rule is never shown matching a tool that does not exist: the
	// servers whose single tools rules name are asked for their tools.
	var check []string
	for _, r := range rules {
		if p := r.Pattern(); r.Problem() == "" && p.NamesTool() {
			for _, s := range servers {
				if p.NamesServer(s) && !slices.Contains(check, s) {
					check = append(check, s)
				}
			}
		}
	}
	st := listServerTools(ctx, f, cfg, check)
	out := []permissionJSON{}
	for _, r := range rules {
		e := permissionJSON{Rule: r.Text, List: r.List, Scope: r.Source.Scope, File: r.Source.File, Profile: r.Source.Profile,
			Matches: []permissionMatch{}, Problem: r.Problem(), Conditions: r.Pattern().HasArgs()}
		if e.Problem == "" {
			e.Matches, e.Problem = ruleMatches(r.Pattern(), servers, st)
		}
		out = append(out, e)
	}
	if opts.JSON {
		if err := printJSON(opts.IO.Out, out); err != nil {
			return err
		}
		return reportSettingsProblems(opts.IO.ErrOut, cfg, pol, f.tilde)
	}
	if len(out) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "No permission rules: every MCP call is asked for. Add one with `switchboard permissions allow mcp__server__tool`.")
		return reportSettingsProblems(opts.IO.ErrOut, cfg, pol, f.tilde)
	}
	t := newTablePrinter(opts.IO, "list", "rule", "scope", "matches", "file")
	for _, e := range out {
		file := e.File
		if file == "" {
			file = "(inline)"
		} else {
			file = f.tilde(file)
		}
		scope := string(e.Scope)
		if e.Profile != "" {
			scope += " (profile " + e.Profile + ")"
		}
		t.AddRow(string(e.List), e.Rule, scope, matchesText(e), file)
	}
	if err := t.Render(); err != nil {
		return err
	}
	return reportSettingsProblems(opts.IO.ErrOut, cfg, pol, f.tilde)
}

// ruleMatches is what an effective rule matches among servers: all tools
// of a server, the tools a server was seen to offer, or — for a server
// whose tools are not known — the rule's tool, unchecked. problem says
// why it matches nothing when the servers it names offer no such tool.
func ruleMatches(p policy.Pattern, servers []string, st *serverTools) (matches []permissionMatch, problem string) {
	matches = []permissionMatch{}
	var missing []string
	for _, s := range servers {
		switch {
		case !p.NamesServer(s):
		case p.Tool() == "":
			matches = append(matches, permissionMatch{Server: s, Tool: "*"})
		case !st.listed(s):
			matches = append(matches, permissionMatch{Server: s, Tool: p.Tool(), Unchecked: st.whyUnlisted(s)})
		default:
			found := matching(p, s, st.tools[s])
			for _, t := range found {
				matches = append(matches, permissionMatch{Server: s, Tool: t.Tool.Name})
			}
			if len(found) == 0 {
				missing = append(missing, noSuchTool(s, st.tools[s]))
			}
		}
	}
	if len(matches) == 0 && len(missing) > 0 {
		problem = strings.Join(missing, "; ")
	}
	return matches, problem
}

// reportSettingsProblems prints, after a listing of rules, what keeps the
// files from being read — a settings file that does not parse or holds a
// malformed list, a configuration file with an error — one line each, and
// returns the config error (exit 2) when there is any.
func reportSettingsProblems(w io.Writer, cfg *config.Resolved, pol *policy.Policy, tilde func(string) string) error {
	n := 0
	for _, p := range pol.Problems(nil) {
		if p.Rule != nil {
			continue // shown in the list, with the rule
		}
		src := p.Source
		if src.File != "" {
			src.File = tilde(src.File)
		}
		line := fmt.Sprintf("%s: %s", src, oneLineText(p.Message))
		if p.Fix != "" {
			line += " (fix: " + p.Fix + ")"
		}
		fmt.Fprintf(w, "error: %s\n", termsafe.Line(line))
		n++
	}
	var errs []config.Diagnostic
	for _, d := range cfg.Diagnostics {
		if d.Severity == config.SeverityError {
			errs = append(errs, d)
		}
	}
	if err := reportDiagnostics(w, errs, nil); err != nil || n > 0 {
		return Configf("fix the files named above; until then their rules do not apply", "the settings or configuration have errors")
	}
	return nil
}

// orderedRules orders rules as they are weighed: deny, ask, allow, and
// within a list the administrator's first, the repository's last.
func orderedRules(rules []policy.Rule) []policy.Rule {
	listOrder := map[policy.Action]int{policy.Deny: 0, policy.Ask: 1, policy.Allow: 2}
	scopeOrder := map[policy.Scope]int{policy.ScopeManaged: 0, policy.ScopeFlag: 1, policy.ScopeSession: 2,
		policy.ScopeLocal: 3, policy.ScopeUser: 4, policy.ScopeProject: 5}
	out := append([]policy.Rule(nil), rules...)
	// A stable sort keeps each file's own order.
	slices.SortStableFunc(out, func(a, b policy.Rule) int {
		return cmp.Or(cmp.Compare(listOrder[a.List], listOrder[b.List]),
			cmp.Compare(scopeOrder[a.Source.Scope], scopeOrder[b.Source.Scope]))
	})
	return out
}

// matchesText is the MATCHES cell: what the rule matches now, or why it
// matches nothing.
func matchesText(e permissionJSON) string {
	if e.Problem != "" {
		return "nothing: " + e.Problem
	}
	if len(e.Matches) == 0 {
		return "no configured server"
	}
	var parts []string
	for _, m := range e.Matches {
		switch {
		case m.Tool == "*":
			parts = append(parts, m.Server+" (all tools)")
		case m.Unchecked != "":
			parts = append(parts, m.Server+": "+m.Tool+" (not checked: "+m.Unchecked+")")
		default:
			parts = append(parts, m.Server+": "+m.Tool)
		}
	}
	s := strings.Join(parts, ", ")
	if e.Conditions {
		s += " (when the arguments match)"
	}
	return s
}
