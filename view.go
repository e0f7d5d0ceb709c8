package switchboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// ErrUnknownProfile is wrapped by an [*UnknownProfileError].
var ErrUnknownProfile = errors.New("unknown profile")

// UnknownProfileError is a profile name that no valid profile of the
// settings has. Valid are the names that do, in order.
type UnknownProfileError struct {
	Name  string
	Valid []string
	// Problem is why a profile the settings define under Name was
	// dropped (a config diagnostic naming file:line:col: a name defined
	// twice names both definitions), "" when no settings define Name.
	Problem string
}

func (e *UnknownProfileError) Error() string {
	if e.Problem != "" {
		return fmt.Sprintf("profile %q was dropped: %s", e.Name, e.Problem)
	}
	if len(e.Valid) == 0 {
		// No command: a front end adds how to find the problem (the
		// CLI's hint names `switchboard doctor`).
		return fmt.Sprintf("unknown profile %q: the settings define no usable profile (docs/configuration.md, Profiles)", e.Name)
	}
	return fmt.Sprintf("unknown profile %q; the profiles are: %s", e.Name, strings.Join(e.Valid, ", "))
}

func (e *UnknownProfileError) Unwrap() error { return ErrUnknownProfile }

// profileNamed is the profile of st named name, resolved. The error
// names why the settings dropped a profile of that name, if they did (all
// their problems are Diagnostics' and doctor's).
func profileNamed(st *config.SettingsStack, name string) (config.Profile, error) {
	ps, diags := st.Profiles()
	p, ok := ps[name]
	if !ok {
		e := &UnknownProfileError{Name: name, Valid: ps.Names()}
		if d := config.DroppedProfile(name, diags); d != nil {
			e.Problem = d.Error()
		}
		return config.Profile{}, e
	}
	return p, nil
}

// view is what a Switchboard made by View adds to the one it views.
type view struct {
	parent *Switchboard
	name   string // the profile; "" for a session view without one
	// owner: closing the view closes the servers too (Options.Profile).
	owner bool
	// own are the servers a session view added (OpenSession), which
	// closing it stops.
	own []string
	// shared are servers the session was handed that sb already ran:
	// shown whatever the profile.
	shared []string
	// ctx is cancelled by the view's Close: it, and every view made
	// from it, then refuses what a closed Switchboard refuses.
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	// st and global are the settings and global policy cur was made from.
	st     *config.SettingsStack
	global *policy.Policy
	cur    *viewState
}

// viewState is a view's profile and rules under the settings in force.
type viewState struct {
	// profile is nil when the settings no longer define it: the view
	// then shows no server (fail closed).
	profile *config.Profile
	policy  *policy.Policy
	permit  host.Permit
	// deferral is the profile's own defer and noDefer, parsed.
	deferral []toolsurface.Modifiers
}

// current is the view's state under the settings in force, made again
// after a reload changed them.
func (v *view) current() *viewState {
	sh := v.parent.shared
	st, global := sh.settings.Load(), sh.policy.Load()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cur != nil && v.st == st && v.global == global {
		return v.cur
	}
	c := &viewState{policy: v.parent.Policy()}
	if v.name != "" {
		if p, err := profileNamed(st, v.name); err == nil {
			c.profile = &p
			c.policy = c.policy.With(policy.ProfileRules(p)...)
			c.deferral = profileDeferral(p)
		}
	}
	c.permit = sh.permitFor(c.policy)
	v.st, v.global, v.cur = st, global, c
	return c
}

// profileDeferral is p's deferral layers (its own defer and noDefer,
// then those of the profiles it extends), each one layer of modifiers:
// the first that speaks for a tool decides it. The settings' parser
// checked the patterns (config.ParseProfiles), so they are only split
// here (toolsurface.ParsePattern would add 2 KB to every embedder).
func profileDeferral(p config.Profile) []toolsurface.Modifiers {
	if len(p.Deferral) == 0 {
		return nil
	}
	patterns := func(list []string) []toolsurface.Pattern {
		out := make([]toolsurface.Pattern, len(list))
		for i, s := range list {
			server, tool, _ := strings.Cut(s[len(toolsurface.Prefix):], toolsurface.Separator)
			out[i] = toolsurface.Pattern{Server: strings.TrimSuffix(server, "*"), Tool: strings.TrimSuffix(tool, "*")}
		}
		return out
	}
	out := make([]toolsurface.Modifiers, len(p.Deferral))
	for i, l := range p.Deferral {
		out[i] = toolsurface.Modifiers{Defer: patterns(l.Defer), NoDefer: patterns(l.NoDefer)}
	}
	return out
}

// includes reports whether the view shows the server named.
func (v *view) includes(name string) bool {
	if o := v.parent.sessionOwner(name); o != nil {
		// A session's servers are its own and its views', and those of
		// what it was opened from (as the Switchboard shows them): a
		// session opened from a view narrows that view's scope.
		return v.within(o) || o.within(v)
	}
	if v.name == "" || slices.Contains(v.shared, name) {
		return true
	}
	p := v.current().profile
	return p != nil && p.IncludesServer(name)
}

// outside are the statuses of the servers v leaves out, as its parent's
// host has them (Options.Profile's gate holds them disabled, "not in
// profile NAME"), but for a session's own servers, which stay its own.
func (v *view) outside() []host.ServerStatus {
	var out []host.ServerStatus
	for _, st := range v.parent.host.Status() {
		if !v.includes(st.Name) && v.parent.sessionOwner(st.Name) == nil {
			out = append(out, st)
		}
	}
	return out
}

// within reports whether v is o or a view of it.
func (v *view) within(o *view) bool {
	for w := v; w != nil; w = w.parent.view {
		if w == o {
			return true
		}
	}
	return false
}

// close closes the view and stops what it, and the sessions opened from
// it, started.
func (v *view) close() error {
	v.cancel()
	return v.parent.closeSession(v)
}

// ViewClosedReason is the Reason in a closed view's Status of a server
// that was running for it (state disabled): the server may run on for the
// Switchboard the view showed.
const ViewClosedReason = "stopped for this view: the view was closed"

// errViewClosed is the error of a view's methods after its Close (or that
// of a view it was made from). It wraps host.ErrClosed, as the errors
// after the Switchboard's Close do: an embedder tells closed from open
// one way.
var errViewClosed error = viewClosedError{}

type viewClosedError struct{}

func (viewClosedError) Error() string { return "view closed" }
func (viewClosedError) Unwrap() error { return host.ErrClosed }

// viewClosed is errViewClosed when sb is a view that was closed, or was
// made from one; else nil. It takes no lock of the Switchboard's: the
// calls of a view check it.
func (sb *Switchboard) viewClosed() error {
	for s := sb; s.view != nil; s = s.view.parent {
		if s.view.ctx.Err() != nil {
			return errViewClosed
		}
	}
	return nil
}

// closedErr is why sb can do nothing more: viewClosed's, or host.ErrClosed
// once the Switchboard it is or views was closed; nil while it is open.
func (sb *Switchboard) closedErr() error {
	if err := sb.viewClosed(); err != nil {
		return err
	}
	if sb.root.Closed() {
		return host.ErrClosed
	}
	return nil
}

// View returns a Switchboard that shows the profile named profile (see
// Options.Profile) over sb's running servers: Tools, Call, Status and
// Subscribe see only the servers the profile includes and the tools its
// filters leave, its deny and ask rules join sb's, and tool_search finds
// only its tools. It starts no process: a server runs once, however many
// views show it (a main agent's Switchboard and a sub-agent's view share
// it). A view follows sb's reloads (a profile removed from the settings
// leaves it showing no server). A view of a view narrows further. Close
// on a view leaves sb's servers running; the view, and every view made
// from it, then refuses as a closed Switchboard does. The error is an
// *UnknownProfileError naming the valid profiles; after Close (of sb, of
// a view it was made from, or of the Switchboard) it wraps
// host.ErrClosed.
func (sb *Switchboard) View(profile string) (*Switchboard, error) {
	if err := sb.closedErr(); err != nil {
		// Not a view whose every call fails.
		return nil, err
	}
	if profile == "" {
		return nil, &UnknownProfileError{Name: profile, Valid: sb.ProfileNames()}
	}
	if _, err := profileNamed(sb.Settings(), profile); err != nil {
		return nil, err
	}
	return sb.newView(profile), nil
}

// newView is View without the check of the name.
func (sb *Switchboard) newView(profile string) *Switchboard {
	v := &view{parent: sb, name: profile}
	v.ctx, v.cancel = context.WithCancel(context.Background())
	sc := host.Scope{
		Servers: v.includes,
		Permit:  func(ctx context.Context, req host.PermitRequest) error { return v.current().permit(ctx, req) },
	}
	if profile != "" {
		sc.Tools = func() config.ToolFilter {
			if p := v.current().profile; p != nil {
				return p.Tools
			}
			return nil
		}
		sc.Deferral = func() []toolsurface.Modifiers { return v.current().deferral }
	}
	return &Switchboard{shared: sb.shared, host: sb.host.View(sc), view: v}
}

// Profile is the name of the profile sb shows ("" for all servers).
func (sb *Switchboard) Profile() string {
	for s := sb; s.view != nil; s = s.view.parent {
		if s.view.name != "" {
			return s.view.name
		}
	}
	return ""
}

// ProfileNames are the names of the settings' valid profiles, in order.
func (sb *Switchboard) ProfileNames() []string {
	ps, _ := sb.Settings().Profiles()
	return ps.Names()
}
