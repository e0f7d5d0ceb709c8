package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// serverTools is what the permission commands know of some servers' tools:
// each server's status and, for a connected one whose tools/list answered,
// its tools (deferred ones included).
type serverTools struct {
	status map[string]host.ServerStatus
	tools  map[string][]host.Tool
}

// listServerTools starts the servers named (none that would need a
// question: a project server awaiting approval stays held, and says so),
// waits at most --wait for them and lists their tools. The command's own
// output is not disturbed: no configuration diagnostics, no prompts.
func listServerTools(ctx context.Context, f *Factory, cfg *config.Resolved, names []string) *serverTools {
	out := &serverTools{status: map[string]host.ServerStatus{}, tools: map[string][]host.Tool{}}
	if len(names) == 0 {
		return out
	}
	o := newRuntimeOptions(f)
	quiet := *o.IO
	quiet.CanPrompt = false
	o.IO = &quiet
	s, err := startSessionWith(ctx, &o, cfg, func(rs config.ResolvedServer) bool { return slices.Contains(names, rs.Name) })
	if err != nil {
		return out
	}
	s.diags = nil // the command reports the configuration itself
	defer s.close(nil)
	s.wait(ctx, o.Wait)
	if list, _ := s.h.Tools(ctx); list != nil {
		for _, t := range append(append([]host.Tool(nil), list.Tools...), list.Deferred...) {
			if t.Server != "" && t.Tool != nil {
				out.tools[t.Server] = append(out.tools[t.Server], t)
			}
		}
	}
	for _, st := range s.statuses() {
		out.status[st.Name] = st
	}
	return out
}

// listed reports whether server's tools are known: it is connected and
// its tools/list answered.
func (st *serverTools) listed(server string) bool {
	s, ok := st.status[server]
	if !ok || s.State != host.StateConnected {
		return false
	}
	_, failed := s.ListErrors["tools/list"]
	return !failed
}

// whyUnlisted says why server's tools are not known.
func (st *serverTools) whyUnlisted(server string) string {
	s, ok := st.status[server]
	switch {
	case !ok:
		return server + " was not started"
	case s.State == host.StateConnected:
		return server + "'s tools/list failed: " + s.ListErrors["tools/list"]
	case s.State == host.StateConnecting:
		return server + " is still connecting"
	}
	return fmt.Sprintf("%s %s", server, s.State.Phrase())
}

// matching returns the tools of server that pat names (its argument
// conditions aside).
func matching(pat policy.Pattern, server string, tools []host.Tool) []host.Tool {
	var out []host.Tool
	for _, t := range tools {
		if pat.MatchName(policy.Request{Tool: t.Name, Server: server, ToolName: t.Tool.Name}) {
			out = append(out, t)
		}
	}
	return out
}

// noSuchTool is the message for a rule naming a tool that server does not
// offer, with the tools it does (the first eight).
func noSuchTool(server string, tools []host.Tool) string {
	var offered []string
	for _, t := range tools {
		offered = append(offered, t.Tool.Name)
	}
	if len(offered) > 8 {
		offered = append(offered[:8], "…")
	}
	if len(offered) == 0 {
		return fmt.Sprintf("server %s offers no tool of that name (it lists none)", server)
	}
	return fmt.Sprintf("server %s offers no tool of that name (it has %s)", server, strings.Join(offered, ", "))
}

// ruleParts splits a rule's text into its name ("mcp__server__tool") and
// its argument conditions ("(path:\"/tmp/**\")", or "").
func ruleParts(rule string) (name, args string) {
	rule = strings.TrimSpace(rule)
	if i := strings.IndexByte(rule, '('); i >= 0 {
		return strings.TrimSpace(rule[:i]), rule[i:]
	}
	return rule, ""
}

// nameKey compares tool names as rules do: case aside, "-" and "." as "_".
func nameKey(s string) string {
	return strings.ToLower(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}

// checkRuleNames is what `permissions allow|ask|deny` does before it writes
// a rule: a rule must name a configured server and, when it names one tool,
// a tool that server offers (a typo'd deny rule denies nothing). It returns
// the rule to write: the one given, or its correction when it was written
// under another name for the same tool — the name a client of the gateway
// sees (mcp__<entry>__<server>__<tool>) or a cut name — with a note saying
// so. A tool that cannot be checked (its server does not connect within
// --wait, or needs approval) is written with a note.
func (o *PermissionsOptions) checkRuleNames(ctx context.Context) (string, error) {
	f := o.Factory
	pat, _ := policy.ParseRule(o.Rule)
	if pat.AllTools() || o.Force {
		return o.Rule, nil
	}
	cfg, err := f.LoadConfig()
	if err != nil {
		return "", err
	}
	server := ""
	for _, s := range cfg.Servers {
		if pat.NamesServer(s.Name) {
			server = s.Name
			break
		}
	}
	force := fmt.Sprintf("or pass --force to write %s as it is", o.Rule)
	if server == "" {
		if fixed, how := o.correctedRule(ctx, cfg, pat); fixed != "" {
			fmt.Fprintf(o.IO.ErrOut, "note: %s is %s; rules name the tool as %s, so that is the rule written\n",
				termsafe.Line(o.Rule), how, termsafe.Line(fixed))
			o.Rule = fixed
			return o.checkRuleNames(ctx)
		}
		hint := "see `switchboard mcp list` for the configured servers, " + force
		if near := nearestNames(pat.Server(), cfg); len(near) > 0 {
			name, args := ruleParts(o.Rule)
			_, rest, _ := strings.Cut(strings.TrimPrefix(strings.ToLower(name), toolsurface.Prefix), toolsurface.Separator)
			guess := toolsurface.Prefix + near[0]
			if rest != "" {
				guess += toolsurface.Separator + name[len(name)-len(rest):]
			}
			hint = fmt.Sprintf("did you mean %s? (%s)", guess+args, force)
		}
		return "", Failuref(hint, "rule %q not written: no configured server is named %s", o.Rule, pat.Server())
	}
	if !pat.NamesTool() {
		return o.Rule, nil
	}
	st := listServerTools(ctx, f, cfg, []string{server})
	if !st.listed(server) {
		// The rule is written (a tool may be allowed before its server
		// connects); say how to find out later whether it names one.
		fmt.Fprintf(o.IO.ErrOut, "note: not checked that %s offers this tool: %s; once it connects, `switchboard permissions list` says whether the rule matches one of its tools\n",
			termsafe.Line(server), termsafe.Line(st.whyUnlisted(server)))
		return o.Rule, nil
	}
	tools := st.tools[server]
	if len(matching(pat, server, tools)) > 0 {
		return o.Rule, nil
	}
	hint := fmt.Sprintf("`switchboard tools --server %s` lists its tools; %s", server, force)
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	name, args := ruleParts(o.Rule)
	if near := nearestTool(name, names); near != "" {
		hint = fmt.Sprintf("did you mean %s? (%s)", near+args, force)
	}
	return "", Failuref(hint, "rule %q not written: %s", o.Rule, noSuchTool(server, tools))
}

// correctedRule finds the tool a rule names under another name than
// mcp__<server>__<tool>, for a rule whose server part names no configured
// server: the name a client of the gateway sees, mcp__<entry>__ before the
// gateway's <server>__<tool> (cut to the budget for that entry, or the
// default), or a cut model-facing name. It returns the rule to write
// instead (argument conditions kept) and how the given one was spelled, or
// "" when it finds none.
func (o *PermissionsOptions) correctedRule(ctx context.Context, cfg *config.Resolved, pat policy.Pattern) (fixed, how string) {
	name, args := ruleParts(o.Rule)
	lower := strings.ToLower(name)
	if !strings.HasPrefix(lower, toolsurface.Prefix) || pat.Tool() == "" {
		return "", ""
	}
	entry, served, ok := strings.Cut(name[len(toolsurface.Prefix):], toolsurface.Separator)
	const clientSide = "the name a client of the gateway sees"
	if ok {
		// mcp__<entry>__<server>__<tool>, uncut: the server is named.
		if srv, tool, ok := strings.Cut(served, toolsurface.Separator); ok && tool != "" {
			for _, s := range cfg.Servers {
				if nameKey(toolsurface.SanitizePart(s.Name)) == nameKey(srv) {
					return toolsurface.Prefix + s.Name + toolsurface.Separator + tool + args, clientSide
				}
			}
		}
	}
	if !cutName().MatchString(name) {
		return "", ""
	}
	// A cut name: only the tool lists can say whose it is.
	var all []string
	for _, s := range cfg.Servers {
		all = append(all, s.Name)
	}
	st := listServerTools(ctx, o.Factory, cfg, all)
	budgets := []int{toolsurface.NameBudget(entry), toolsurface.DefaultNameBudget}
	for _, s := range all {
		for _, t := range st.tools[s] {
			real := toolsurface.Prefix + s + toolsurface.Separator + t.Tool.Name
			if _, err := policy.ParseRule(real); err != nil {
				real = toolsurface.ToolName(s, t.Tool.Name) // a tool name no rule can spell
			}
			if nameKey(t.Name) == nameKey(name) {
				return real + args, "a cut name"
			}
			for _, b := range budgets {
				if nameKey(toolsurface.ServedName(s, t.Tool.Name, b)) == nameKey(served) {
					return real + args, clientSide
				}
			}
		}
	}
	return "", ""
}
