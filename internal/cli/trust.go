package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/review"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/trust"
)

// UserSettingsFile and ManagedSettingsFile name the settings files that may
// pre-approve project servers, beside --settings. Local settings live in
// the user settings file under "projects"["<absolute workspace>"]. Nothing
// under the workspace is ever read for this: a repository must not
// approve its own servers.
const (
	UserSettingsFile    = config.SettingsFileName
	ManagedSettingsFile = config.ManagedSettingsFileName
)

// launchTrust is one run's launch trust (switchboard.LaunchTrust: the
// store, the pre-approvals of the settings, the servers denied for this
// run) with what the CLI shows of it.
type launchTrust struct {
	*switchboard.LaunchTrust
	// home is the Switchboard directory; settings the layers the
	// pre-approvals were read from.
	home     string
	settings *config.SettingsStack
	environ  func() []string
	now      func() time.Time
	// warnings are problems with the store or settings files, reported
	// with the configuration diagnostics when a project server depends on
	// them.
	warnings []config.Diagnostic
}

// launchTrust builds the launch trust of a run on cfg: the store in the
// Switchboard home and the pre-approvals of --settings, managed, user and
// local settings.
func (f *Factory) launchTrust(cfg *config.Resolved) (*launchTrust, error) {
	st, err := f.settingsStack(cfg)
	if err != nil {
		return nil, err
	}
	now := f.Now
	if now == nil {
		now = time.Now
	}
	lt := &launchTrust{
		LaunchTrust: switchboard.NewLaunchTrust(f.Home(), cfg.Workspace, st, now),
		home:        f.Home(),
		settings:    st,
		environ:     os.Environ,
		now:         now,
	}
	if hasRepoServers(cfg) {
		// Only worth saying when a project server depends on it.
		lt.warnings = lt.Warnings()
	}
	return lt, nil
}

func hasRepoServers(cfg *config.Resolved) bool {
	for _, rs := range cfg.Servers {
		if rs.Trust == config.TrustRepo {
			return true
		}
	}
	return false
}

// reviewPrompter asks about a project server at the terminal: the review
// (what exactly it runs), then a yes or no.
type reviewPrompter struct {
	switchboard.Headless
	environ func() []string
	in      *lineReader
	w       io.Writer
}

func (p *reviewPrompter) ApproveServer(ctx context.Context, r switchboard.Review) (bool, error) {
	writeReview(p.w, r.Server, r.Verdict, p.environ(), r.Sandbox, r.HelperSandbox)
	ok, err := askApproval(ctx, p.in, p.w, "Approve and start it? [y]es (remembered for this workspace), [N]o (not this run): ")
	if err != nil || !ok {
		fmt.Fprintf(p.w, "  Not approved: %s will not start in this run.\n\n", r.Server.Name)
	}
	return ok, err
}

func (p *reviewPrompter) Approved(rs *config.ResolvedServer, err error) {
	if err != nil {
		fmt.Fprintf(p.w, "  Could not save the approval (%s); it is not started.\n", termsafe.Line(err.Error()))
		return
	}
	fmt.Fprintf(p.w, "  Approved %s.\n\n", rs.Name)
}

// askApproval asks a yes/no question; only an explicit yes approves.
func askApproval(ctx context.Context, in *lineReader, w io.Writer, question string) (bool, error) {
	v, err := askLoop(ctx, in, w, question, func(s string) (any, error) {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "y", "yes":
			return true, nil
		case "", "n", "no":
			return false, nil
		}
		return nil, errors.New("type y or n")
	})
	if err != nil {
		fmt.Fprintln(w)
		return false, err
	}
	return v.(bool), nil
}

// writeDefinition prints what a definition would run, literally, for a
// person deciding whether to let it (review.Definition: the words the
// console shows too).
func writeDefinition(w io.Writer, def config.Server) {
	review.WriteFields(w, review.Definition(def))
}

// writeReview shows what approving rs would let run: the literal
// command line, every env pair (values of secret-looking keys redacted),
// dangerous loader keys in plain words, cwd, url, header keys (values
// redacted), headersHelper, which of the user's variables pass, and for
// a stale approval what changed. The words are package review's, shared
// with the console.
func writeReview(w io.Writer, rs *config.ResolvedServer, v trust.Verdict, parent []string, sandbox, helper *config.SandboxPolicy) {
	review.Build(rs, v, review.Options{Parent: parent, Sandbox: sandbox, HelperSandbox: helper}).WriteText(w)
}

// approvalJSON is a server's launch-trust verdict as `mcp get --json`
// ("approval") and `doctor --json` (the "trust" rows' "approval") show it.
// The keys are stable; scripts may rely on them.
type approvalJSON struct {
	// Verdict is trust.Status's name: trusted (needs no approval), approved,
	// pre-approved, rejected, needs-approval or approval-stale.
	Verdict string `json:"verdict"`
	// Required is whether the server needs approval at all (project scope).
	Required bool `json:"required"`
	// Allowed is whether launch trust lets it start.
	Allowed bool `json:"allowed"`
	// State is the host.State the verdict holds it in (needs-approval,
	// approval-stale, disabled), or "" when it may start.
	State string `json:"state,omitempty"`
	// Reason is the one line `status` shows for a held server.
	Reason string `json:"reason,omitempty"`
	// Workspace is the workspace the approval is for, and WorkspaceKey
	// the path approvals are filed under (symlinks resolved) when it
	// differs.
	Workspace    string `json:"workspace,omitempty"`
	WorkspaceKey string `json:"workspaceKey,omitempty"`
	// Fingerprint is the fingerprint of the definition as written now.
	Fingerprint string `json:"fingerprint,omitempty"`
	// ApprovedAt and ApprovedFingerprint are the stored approval's
	// (approved, approval-stale).
	ApprovedAt          string `json:"approvedAt,omitempty"`
	ApprovedFingerprint string `json:"approvedFingerprint,omitempty"`
	// Changed names the fields changed since the approval, and Changes
	// says it in words ("env (added NODE_OPTIONS)").
	Changed []string `json:"changed,omitempty"`
	Changes string   `json:"changes,omitempty"`
	// ApprovedCommand is the command line that was approved, when the
	// command or args changed since.
	ApprovedCommand string `json:"approvedCommand,omitempty"`
	// Source names the settings that pre-approved or rejected it.
	Source string `json:"source,omitempty"`
	// Command is the literal command line that would run (secret-looking
	// arguments redacted), URL what it would connect to, HeadersHelper the
	// command it would run for headers; only where approval is required.
	Command       string `json:"command,omitempty"`
	Cwd           string `json:"cwd,omitempty"`
	URL           string `json:"url,omitempty"`
	HeadersHelper string `json:"headersHelper,omitempty"`
	// Redacted is set when the command, approved command or URL above
	// hides something that looks secret: `mcp approve` shows them as they
	// are before it asks, and is the place to check them.
	Redacted bool `json:"redacted,omitempty"`
	// Fix is the command that approves it (needs-approval,
	// approval-stale), or what to change (rejected).
	Fix string `json:"fix,omitempty"`
}

// approval describes rs's launch-trust verdict in this run's workspace.
// Nothing secret is shown: arguments and URLs pass through the redaction
// `mcp get` uses, env and header values are not shown at all.
func (lt *launchTrust) approval(rs *config.ResolvedServer) approvalJSON {
	v := lt.Verdict(rs)
	a := approvalJSON{
		Verdict:  v.Status.String(),
		Required: rs.Trust == config.TrustRepo,
		Allowed:  v.Allowed(),
		State:    v.State(),
		Reason:   approvalHint(host.State(v.State()), rs.Name, v.Reason(rs)),
	}
	if !a.Required {
		return a
	}
	a.Fingerprint = v.Fingerprint
	if lt.Workspace() != "" {
		a.Workspace = lt.Workspace()
		if k := trust.WorkspaceKey(lt.Workspace()); k != lt.Workspace() {
			a.WorkspaceKey = k
		}
	}
	w := rs.Written
	if w.Command != "" || len(w.Args) > 0 {
		a.Command = trust.CommandLine(w.Command, shownArgs(w))
		a.Redacted = a.Command != trust.CommandLine(w.Command, w.Args)
	}
	a.Cwd = w.Cwd
	a.URL = shownURL(w)
	a.Redacted = a.Redacted || a.URL != w.URL
	if w.HeadersHelper != "" {
		a.HeadersHelper = redact.String(w.HeadersHelper, redact.Secrets(w.Env, w.Headers)...)
		a.Redacted = a.Redacted || a.HeadersHelper != w.HeadersHelper
	}
	if p := v.Previous; p != nil {
		a.ApprovedAt = p.ApprovedAt.UTC().Format(time.RFC3339)
		if v.Status == trust.Stale {
			a.ApprovedFingerprint = p.Fingerprint
		}
	}
	switch v.Status {
	case trust.NeedsApproval:
		a.Fix = approveCommand(rs.Name)
	case trust.Stale:
		a.Fix = approveCommand(rs.Name)
		a.Changed = v.Changed
		a.Changes = v.Describe(w)
		if p := v.Previous; p != nil && (slices.Contains(v.Changed, "command") || slices.Contains(v.Changed, "args")) {
			a.ApprovedCommand = trust.CommandLine(p.Definition.Command, redact.CommandArgs(p.Definition.Args, redact.Secrets(w.Env, w.Headers)...))
			a.Redacted = a.Redacted || a.ApprovedCommand != trust.CommandLine(p.Definition.Command, p.Definition.Args)
		}
	case trust.PreApproved:
		a.Source = v.Source
	case trust.Rejected:
		a.Source = v.Source
		a.Fix = fmt.Sprintf("take %s out of disabledMcpjsonServers in %s, then `%s`", rs.Name, v.Source, approveCommand(rs.Name))
	}
	return a
}

// approvalSummary is the verdict in one line for people: what `mcp get`
// shows after "Approval:" and doctor's trust check says. tilde shortens
// paths under the home directory.
func approvalSummary(rs *config.ResolvedServer, a approvalJSON, tilde func(string) string) string {
	ws := "this workspace"
	if a.Workspace != "" {
		ws = "workspace " + tilde(a.Workspace)
	}
	switch a.Verdict {
	case trust.Trusted.String():
		return fmt.Sprintf("not needed: %s; it starts without asking", trustedBecause(rs.Scope))
	case trust.Approved.String():
		return fmt.Sprintf("approved in %s on %s", ws, approvedOn(a.ApprovedAt))
	case trust.PreApproved.String():
		return "pre-approved by " + a.Source + " (enableAllProjectMcpServers or enabledMcpjsonServers)"
	case trust.Rejected.String():
		return "rejected by disabledMcpjsonServers in " + a.Source + ": it never starts and is not asked about"
	case trust.NeedsApproval.String():
		return fmt.Sprintf("pending: never approved in %s, so it does not start until you approve it", ws)
	case trust.Stale.String():
		return fmt.Sprintf("changed since it was approved in %s on %s: %s; it does not start until you approve it again", ws, approvedOn(a.ApprovedAt), a.Changes)
	}
	return a.Verdict
}

// trustedBecause says why a scope's servers need no approval.
func trustedBecause(sc config.Scope) string {
	switch sc {
	case config.ScopeUser, config.ScopeLocal:
		return string(sc) + " scope, written by you"
	case config.ScopeManaged:
		return "managed scope, set by your administrator"
	case config.ScopeFlag:
		return "given with --mcp-config"
	case config.ScopeSession:
		return "handed in by the program embedding Switchboard"
	}
	return string(sc) + " scope"
}

func approvedOn(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		return "an unknown date"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// approvalLine is one labelled line backing a verdict up.
type approvalLine struct{ label, value string }

// approvalDetails are the lines that back a held verdict up for people:
// exactly what would run (terminal-safe, see trust.Quote) and, for a
// stale approval whose command changed, what was approved before.
func approvalDetails(a approvalJSON) []approvalLine {
	if a.Allowed || a.Verdict == trust.Rejected.String() || !a.Required {
		return nil
	}
	var out []approvalLine
	add := func(label, value string) {
		if value != "" {
			out = append(out, approvalLine{label, value})
		}
	}
	add("approved command", a.ApprovedCommand)
	add("would run", a.Command)
	if a.Cwd != "" {
		add("in", trust.Quote(a.Cwd))
	}
	if a.URL != "" {
		add("would connect to", trust.Quote(a.URL))
	}
	if a.HeadersHelper != "" {
		add("headers helper", trust.Quote(a.HeadersHelper))
	}
	if a.Redacted {
		add("note", review.RedactedNote)
	}
	return out
}
