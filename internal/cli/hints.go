package cli

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// The library packages state facts and fixes in terms of files and
// settings; the commands a person runs to act on them are the CLI's to
// name, and are added here, where the CLI prints them.

// approveCommand is the command that approves a project server.
func approveCommand(name string) string { return "switchboard mcp approve " + name }

// approvalHint adds to the reason of a server held by launch trust (the
// trust package states only the fact) the command that approves it.
func approvalHint(state host.State, name, reason string) string {
	switch state {
	case host.StateNeedsApproval:
		return reason + "; run `" + approveCommand(name) + "`"
	case host.StateApprovalStale:
		return reason + "; run `" + approveCommand(name) + "` to review it again"
	}
	return reason
}

// statuses is the host's status of every server, as the CLI shows it: a
// server held by launch trust says how to approve it. Under --profile,
// the servers the profile leaves out are listed too (as disabled, not in
// the profile) when the command lists them (s.outside).
func (s *session) statuses() []host.ServerStatus {
	list := s.h.Status()
	if s.outside {
		list = s.sb.Status()
	}
	for i := range list {
		list[i].Reason = approvalHint(list[i].State, list[i].Name, list[i].Reason)
	}
	return list
}

// cliDiagnostic is a configuration diagnostic as the CLI prints it: an
// enabled name that nothing defines can be added with `mcp add`.
func cliDiagnostic(d config.Diagnostic) config.Diagnostic {
	if d.Undefined && d.Server != "" {
		d.Fix = fmt.Sprintf("add it with `switchboard mcp add %s …`, or remove it from enabledMcpServers", d.Server)
	}
	return d
}

// cliDiagnostics is cliDiagnostic of each of ds, in a new slice (nil for
// none).
func cliDiagnostics(ds []config.Diagnostic) []config.Diagnostic {
	if ds == nil {
		return nil
	}
	out := make([]config.Diagnostic, len(ds))
	for i, d := range ds {
		out[i] = cliDiagnostic(d)
	}
	return out
}

// problemFix is the fix doctor prints for a permission-rule problem.
func problemFix(p policy.Problem) string {
	if p.NoSuchServer {
		return "check the server's name with `switchboard mcp list`, or remove the rule"
	}
	return p.Fix
}

// deniedHint is the hint printed under a refused call: the policy's
// hint, pointing at doctor when a settings file that cannot be used is
// why (no rule decided, and none can be suggested).
func deniedHint(de *host.DeniedError) string {
	d := de.Decision
	if de.Hint == "" || d.Suggest != "" || d.Rule != nil {
		return de.Hint
	}
	switch d.Action {
	case policy.Deny:
		return de.Hint + " (`switchboard doctor` shows the error)"
	case policy.Ask:
		return "fix the settings file named above (`switchboard doctor` shows where), or run it where a person can answer"
	}
	return de.Hint
}
