package switchboard

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/trust"
)

// LaunchTrust decides which servers may start. A server the user wrote
// (user, local, managed or --mcp-config scope) starts; one a repository
// wrote (project scope) starts only once the person approved that exact
// definition (stored in the Switchboard directory, fingerprinted) or the
// person's own settings approve it in advance. A repository's files never
// count: not its settings, not a file it names.
//
// A LaunchTrust is safe for concurrent use. [Switchboard] builds one; use
// [NewLaunchTrust] only to put the gate in front of a host of your own.
type LaunchTrust struct {
	store     *trust.Store
	workspace string
	now       func() time.Time
	sandbox   atomic.Pointer[config.SandboxDefaults]

	pre      atomic.Pointer[trust.PreApproval]
	warnings atomic.Pointer[[]config.Diagnostic]

	mu     sync.Mutex
	denied map[string]bool
}

// NewLaunchTrust returns the launch trust of a run in workspace: the
// approvals stored in home (the Switchboard directory) and the
// pre-approvals of the trusted layers of st (nil: no settings). now stamps
// new approvals; nil means time.Now.
func NewLaunchTrust(home, workspace string, st *config.SettingsStack, now func() time.Time) *LaunchTrust {
	if now == nil {
		now = time.Now
	}
	lt := &LaunchTrust{store: trust.Open(home), workspace: workspace, now: now, denied: map[string]bool{}}
	lt.SetSettings(st)
	return lt
}

// SetSettings takes the pre-approvals of st in place of the ones in force,
// and returns the problems of the layers that cannot be used (each
// approves nothing). A server already running is not stopped; the new
// settings decide its next start. A nil st is no settings.
func (lt *LaunchTrust) SetSettings(st *config.SettingsStack) []config.Diagnostic {
	if st == nil {
		st = &config.SettingsStack{}
	}
	pre, warnings := trust.PreApprovalFrom(st)
	if err := lt.store.Err(); err != nil {
		warnings = append(warnings, config.Diagnostic{Severity: config.SeverityWarning, Message: err.Error()})
	}
	sd := st.SandboxDefaults()
	lt.pre.Store(&pre)
	lt.warnings.Store(&warnings)
	lt.sandbox.Store(&sd)
	return warnings
}

// Warnings are the problems of the settings and approval store in force.
func (lt *LaunchTrust) Warnings() []config.Diagnostic {
	if w := lt.warnings.Load(); w != nil {
		return *w
	}
	return nil
}

// Store is where approvals are kept.
func (lt *LaunchTrust) Store() *trust.Store { return lt.store }

// Workspace is the workspace approvals are for.
func (lt *LaunchTrust) Workspace() string { return lt.workspace }

// SandboxDefaults are the per-scope sandbox defaults of the settings in
// force (what a review shows a server will be confined to).
func (lt *LaunchTrust) SandboxDefaults() config.SandboxDefaults {
	if sd := lt.sandbox.Load(); sd != nil {
		return *sd
	}
	return nil
}

// Verdict decides one server.
func (lt *LaunchTrust) Verdict(rs *config.ResolvedServer) trust.Verdict {
	var pre trust.PreApproval
	if p := lt.pre.Load(); p != nil {
		pre = *p
	}
	return trust.Decide(lt.store, pre, rs, lt.workspace)
}

// Gate is the [host.Gate] of the run: "" for a server that may start,
// else the state it is held in and why.
func (lt *LaunchTrust) Gate(rs *config.ResolvedServer) (host.State, string) {
	v := lt.Verdict(rs)
	if v.Allowed() {
		return "", ""
	}
	reason := v.Reason(rs)
	if lt.Denied(rs.Name) {
		reason = "you did not approve it for this run"
	}
	return host.State(v.State()), reason
}

// Pending returns the available servers of cfg (the zero Availability of
// a hand-built one included) that need a person's approval before they
// can start (a gateway's own entry, which never
// starts, is not one: host.IsGatewayServer).
func (lt *LaunchTrust) Pending(cfg *config.Resolved) []*config.ResolvedServer {
	var out []*config.ResolvedServer
	for i := range cfg.Servers {
		rs := &cfg.Servers[i]
		if a := rs.Availability; (a != config.Available && a != "") || host.IsGatewayServer(rs) {
			// It does not start ("" is available: config.Availability),
			// and a gateway's own entry never does: nothing to approve.
			continue
		}
		if st := lt.Verdict(rs).Status; st == trust.NeedsApproval || st == trust.Stale {
			out = append(out, rs)
		}
	}
	return out
}

// Approve stores the person's approval of rs as it is defined now.
func (lt *LaunchTrust) Approve(rs *config.ResolvedServer) error {
	_, err := lt.store.Approve(lt.workspace, rs, lt.now())
	if err == nil {
		lt.mu.Lock()
		delete(lt.denied, rs.Name)
		lt.mu.Unlock()
	}
	return err
}

// Deny holds the server for this run only: it was asked about and not
// approved. Nothing is stored.
func (lt *LaunchTrust) Deny(name string) {
	lt.mu.Lock()
	lt.denied[name] = true
	lt.mu.Unlock()
}

// Denied reports whether the server was denied for this run.
func (lt *LaunchTrust) Denied(name string) bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.denied[name]
}

// Review is what a person is shown before approving a project server: the
// server as resolved (its command, arguments, environment names, URL,
// file and scope), the verdict that asks (new, or changed since it was
// approved), and the sandbox it would run in.
type Review struct {
	Server  *config.ResolvedServer
	Verdict trust.Verdict
	// Sandbox is what the server would be confined to; nil when it would
	// run unconfined or is remote.
	Sandbox *config.SandboxPolicy
	// HelperSandbox is what a remote server's headersHelper would be
	// confined to (host.HelperSandboxOf); nil when it has none or it
	// would run unconfined.
	HelperSandbox *config.SandboxPolicy
	// Workspace is the workspace the approval is for.
	Workspace string
}

// Ask asks p about every server of cfg that needs approval, before
// anything starts, one at a time. A yes is stored; a no or an error holds
// the server for this run only; once ctx is done the rest are held without
// asking. A nil p asks nothing: pending servers keep needing approval. It returns the first error that is not a plain no
// (input closed, ctx cancelled).
func (lt *LaunchTrust) Ask(ctx context.Context, cfg *config.Resolved, p Prompter) error {
	if p == nil {
		return nil
	}
	var first error
	for _, rs := range lt.Pending(cfg) {
		if ctx.Err() != nil {
			lt.Deny(rs.Name)
			continue
		}
		r := Review{Server: rs, Verdict: lt.Verdict(rs), Workspace: lt.workspace}
		ws := lt.workspace
		if ws == "" && rs.File != "" {
			ws = filepath.Dir(rs.File) // a project server's own folder
		}
		if config.InferType(rs.Effective) == config.TypeStdio {
			r.Sandbox = host.SandboxOf(rs, ws, lt.SandboxDefaults())
		} else {
			r.HelperSandbox = host.HelperSandboxOf(rs, ws, lt.SandboxDefaults())
		}
		ok, err := p.ApproveServer(ctx, r)
		if errors.Is(err, errNobodyAsked) {
			continue // Headless's: held as in a headless run, not declined
		}
		if err != nil && !errors.Is(err, ErrNotApproved) {
			first = err
		}
		if err != nil || !ok {
			lt.Deny(rs.Name)
			continue
		}
		err = lt.Approve(rs)
		if err != nil {
			lt.Deny(rs.Name)
		}
		if ar, ok := p.(ApprovalReporter); ok {
			ar.Approved(rs, err)
		}
	}
	return first
}

// ApprovalReporter is implemented by a [Prompter] that tells the person
// what became of an approval they gave: err is nil once it is stored, else
// why it could not be (the server then does not start).
type ApprovalReporter interface {
	Approved(rs *config.ResolvedServer, err error)
}
