package trust

import (
	"fmt"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

// Status is the launch-trust answer for one server.
type Status int

const (
	// Trusted: the user (or an administrator or embedder) wrote the
	// definition; it starts without asking.
	Trusted Status = iota
	// Approved: a project server whose current definition the user approved
	// in this workspace.
	Approved
	// PreApproved: a project server approved in advance by settings the
	// user controls (enableAllProjectMcpServers, enabledMcpjsonServers).
	PreApproved
	// Rejected: a project server the user's settings list in
	// disabledMcpjsonServers; it never starts and is not asked about.
	Rejected
	// NeedsApproval: a project server never approved in this workspace.
	NeedsApproval
	// Stale: a project server approved once whose definition has changed
	// since; Verdict.Changed says which fields.
	Stale
)

// String is the server state name (host.State) where there is one.
func (s Status) String() string {
	switch s {
	case Trusted:
		return "trusted"
	case Approved:
		return "approved"
	case PreApproved:
		return "pre-approved"
	case Rejected:
		return "rejected"
	case NeedsApproval:
		return "needs-approval"
	case Stale:
		return "approval-stale"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Verdict is the launch-trust decision for one server.
type Verdict struct {
	Status Status
	// Fingerprint of the definition as written now.
	Fingerprint string
	// Changed names the fields (of [Fields]) that differ from the approved
	// definition, for Stale.
	Changed []string
	// Previous is the approval that is now stale (Stale) or current
	// (Approved).
	Previous *Approval
	// Source names the settings that pre-approved (PreApproved) or rejected
	// (Rejected) the server, e.g. "--settings" or a file path.
	Source string
}

// Allowed reports whether the server may start.
func (v Verdict) Allowed() bool {
	return v.Status == Trusted || v.Status == Approved || v.Status == PreApproved
}

// Check decides whether rs may start in workspace (its absolute root,
// looked up by [WorkspaceKey]) from the store alone: Trusted for anything not repo-authored, else
// Approved, Stale (with the changed fields) or NeedsApproval. A store that
// failed to load approves nothing. Pre-approval by settings is
// [PreApproval.Check]'s.
func (s *Store) Check(rs *config.ResolvedServer, workspace string) Verdict {
	fp := Fingerprint(rs.Written)
	if rs.Trust != config.TrustRepo {
		return Verdict{Status: Trusted, Fingerprint: fp}
	}
	found := s.lookupAll(workspace, rs.Name)
	if len(found) == 0 || workspace == "" {
		return Verdict{Status: NeedsApproval, Fingerprint: fp}
	}
	for _, a := range found {
		if a.Fingerprint == fp {
			return Verdict{Status: Approved, Fingerprint: fp, Previous: &a}
		}
	}
	a := found[0]
	return Verdict{Status: Stale, Fingerprint: fp, Previous: &a, Changed: changedFields(a, rs.Written)}
}

// changedFields compares the stored field digests with def's.
func changedFields(a Approval, def config.Server) []string {
	now := fieldDigests(def)
	var out []string
	for _, f := range fields {
		if a.Fields[f] != now[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		// The fields agree but the fingerprint does not: an approval
		// from an older encoding. Say so rather than name nothing.
		out = []string{"definition"}
	}
	return out
}

// Describe says in a few words what changed, for one-line reasons:
// "command", "args", "env (added NODE_OPTIONS)", … joined with ", ".
func (v Verdict) Describe(def config.Server) string {
	parts := make([]string, 0, len(v.Changed))
	for _, f := range v.Changed {
		p := f
		if f == "env" && v.Previous != nil {
			if d := keyDiff(v.Previous.Definition.EnvKeys, keys(def.Env)); d != "" {
				p += " (" + d + ")"
			}
		}
		if f == "headers" && v.Previous != nil {
			if d := keyDiff(v.Previous.Definition.HeaderKeys, keys(def.Headers)); d != "" {
				p += " (" + d + ")"
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// keyDiff says which keys were added and removed, or "" when the same
// keys are there (their values changed).
func keyDiff(before, after []string) string {
	was := map[string]bool{}
	for _, k := range before {
		was[k] = true
	}
	is := map[string]bool{}
	var added, removed []string
	for _, k := range after {
		is[k] = true
		if !was[k] {
			added = append(added, k)
		}
	}
	for _, k := range before {
		if !is[k] {
			removed = append(removed, k)
		}
	}
	var out []string
	if len(added) > 0 {
		out = append(out, "added "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		out = append(out, "removed "+strings.Join(removed, ", "))
	}
	if len(out) == 0 {
		return "values changed"
	}
	return strings.Join(out, "; ")
}

// SettingsSource is one settings document that may pre-approve project
// servers, and how to name it to a person ("--settings", a file path,
// "local settings in ~/.switchboard/settings.json").
type SettingsSource struct {
	Label    string
	Settings config.Settings
}

// PreApproval is what the user's own settings say about project servers
// in advance: enableAllProjectMcpServers, enabledMcpjsonServers and
// disabledMcpjsonServers. Build it only from settings the repository
// cannot write: --settings, user settings, local settings (the user file's
// "projects" entry for the workspace) and managed settings; never from
// <root>/.switchboard/settings*.json, .mcp.json or anything else a
// repository can commit. The zero value approves nothing.
type PreApproval struct {
	all      string            // source of enableAllProjectMcpServers: true, or ""
	enabled  map[string]string // name → source
	disabled map[string]string // name → source
}

// NewPreApproval combines settings documents. A rejection
// (disabledMcpjsonServers) in any of them wins over every approval.
func NewPreApproval(sources ...SettingsSource) PreApproval {
	p := PreApproval{enabled: map[string]string{}, disabled: map[string]string{}}
	for _, src := range sources {
		if src.Settings == nil {
			continue
		}
		if src.Settings.EnableAllProjectMcpServers() && p.all == "" {
			p.all = src.Label
		}
		for _, n := range src.Settings.EnabledMcpjsonServers() {
			if _, ok := p.enabled[n]; !ok {
				p.enabled[n] = src.Label
			}
		}
		if l, ok := src.Settings["disabledMcpjsonServers"].([]any); ok {
			for _, v := range l {
				if n, ok := v.(string); ok {
					if _, seen := p.disabled[n]; !seen {
						p.disabled[n] = src.Label
					}
				}
			}
		}
	}
	return p
}

// Check returns the settings' verdict on a project server: PreApproved or
// Rejected with the source, and ok false when the settings say nothing
// about it (or it is not repo-authored: settings never restrict the
// user's own servers here).
func (p PreApproval) Check(rs *config.ResolvedServer) (v Verdict, ok bool) {
	if rs.Trust != config.TrustRepo {
		return Verdict{}, false
	}
	fp := Fingerprint(rs.Written)
	if src, ok := p.disabled[rs.Name]; ok {
		return Verdict{Status: Rejected, Fingerprint: fp, Source: src}, true
	}
	if src, ok := p.enabled[rs.Name]; ok {
		return Verdict{Status: PreApproved, Fingerprint: fp, Source: src}, true
	}
	if p.all != "" {
		return Verdict{Status: PreApproved, Fingerprint: fp, Source: p.all}, true
	}
	return Verdict{}, false
}

// Names lists the servers named in enabledMcpjsonServers, sorted (for
// doctor and tests).
func (p PreApproval) Names() []string {
	out := make([]string, 0, len(p.enabled))
	for n := range p.enabled {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Decide is the whole launch-trust decision for rs in workspace: the
// settings' pre-approval or rejection first, then the store.
func Decide(s *Store, p PreApproval, rs *config.ResolvedServer, workspace string) Verdict {
	if v, ok := p.Check(rs); ok {
		return v
	}
	return s.Check(rs, workspace)
}

// Reason is the one-line reason a server that may not start shows in
// status: what is wrong and, for Stale, what changed. It states the fact
// only; how to approve is the front end's to say (the CLI adds its
// `switchboard mcp approve` command). It is "" for a verdict that allows
// the server.
func (v Verdict) Reason(rs *config.ResolvedServer) string {
	from := "a project file"
	if rs.File != "" {
		from = rs.File
	}
	switch v.Status {
	case NeedsApproval:
		return fmt.Sprintf("project server from %s has not been approved in this workspace", from)
	case Stale:
		return fmt.Sprintf("definition in %s changed since it was approved (%s)", from, v.Describe(rs.Written))
	case Rejected:
		return fmt.Sprintf("rejected by disabledMcpjsonServers in %s", v.Source)
	}
	return ""
}

// State is the runtime server state (host.State) a verdict holds a server in:
// "needs-approval", "approval-stale" or "disabled" (Rejected), and ""
// when the server may start. The names are host.State's.
func (v Verdict) State() string {
	switch v.Status {
	case NeedsApproval:
		return "needs-approval"
	case Stale:
		return "approval-stale"
	case Rejected:
		return "disabled"
	}
	return ""
}

// PreApprovalFrom builds the pre-approval of the layers of st a repository
// cannot write (managed, the run's own settings, local, user; never
// project settings), and returns as warnings the layers that cannot be
// used: each contributes nothing (fail closed).
func PreApprovalFrom(st *config.SettingsStack) (PreApproval, []config.Diagnostic) {
	var sources []SettingsSource
	var warnings []config.Diagnostic
	var locals []string
	localFile := ""
	for _, l := range st.Trusted() {
		if l.Scope == config.SettingsLocal && l.Key != "" {
			locals = append(locals, l.Key)
			localFile = l.File
		}
	}
	for _, l := range st.Trusted() {
		if l.Err != nil {
			warnings = append(warnings, config.Diagnostic{Severity: config.SeverityWarning, Position: config.Position{File: l.File},
				Message: fmt.Sprintf("%v; its project server approvals are ignored", l.Err)})
			continue
		}
		label := l.Label()
		switch {
		case l.Scope == config.SettingsFlag:
			label = "--settings"
		case l.Scope == config.SettingsLocal && len(locals) == 1:
			label = "local settings in " + l.File
		}
		sources = append(sources, SettingsSource{Label: label, Settings: l.Settings})
	}
	if len(locals) > 1 {
		warnings = append(warnings, config.Diagnostic{Severity: config.SeverityWarning, Position: config.Position{File: localFile},
			Message: fmt.Sprintf("projects[%q] and projects[%q] are two entries for the same workspace; the project server approvals of both are used",
				locals[0], locals[1]),
			Fix: fmt.Sprintf("merge them into projects[%q]", locals[0])})
	}
	return NewPreApproval(sources...), warnings
}
