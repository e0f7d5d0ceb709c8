package host

import (
	"context"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// Scope narrows a view of a Host ([Host.View]): the servers it includes,
// a tool filter on top of each server's own, and the permission check of
// its calls. A scope can only narrow what the Host shows.
type Scope struct {
	// Servers reports whether the view includes the server named. If nil,
	// every server of the Host is included.
	Servers func(name string) bool
	// Tools returns the filter that hides more tools of the included
	// servers (layers applied after the server's own enabledTools and
	// disabledTools); it is asked on every listing and call, so that it
	// can follow a reload. If nil, none.
	Tools func() config.ToolFilter
	// Permit, if set, decides the view's calls in place of the Host's
	// Options.Permit: give it the Host's rules and more, never fewer (a
	// profile's deny and ask rules on top of the global ones).
	Permit Permit
	// Deferral returns the view's own deferral modifiers (a profile's
	// "defer" and "noDefer"), asked on every listing so that it can follow
	// a reload: layers applied after Options.ToolModifiers (the session's
	// --tools) and before defer_loading, the first that speaks deciding a
	// tool. A view of a view asks its own before the outer one's. If nil,
	// none.
	Deferral func() []toolsurface.Modifiers
}

// deferral is the modifiers that decide h's tools, in order: the
// session's, then the view's.
func (h *Host) deferral() []toolsurface.Modifiers {
	out := []toolsurface.Modifiers{h.opts.ToolModifiers}
	if h.scope != nil && h.scope.Deferral != nil {
		out = append(out, h.scope.Deferral()...)
	}
	return out
}

// includes reports whether the scope (nil: none, every server) includes
// the server named.
func (sc *Scope) includes(name string) bool {
	return sc == nil || sc.Servers == nil || sc.Servers(name)
}

// hidden reports whether the scope's own filter hides server's tool.
func (sc *Scope) hidden(tool string) (bool, string) {
	if sc == nil || sc.Tools == nil {
		return false, ""
	}
	return sc.Tools().Hidden(tool)
}

// View returns a Host that shows only the servers and tools sc includes,
// over h's running servers: it starts no process of its own, and its
// calls, lists, status and events are those of h's servers, narrowed. A
// server it leaves out is an unknown server to it; a tool it hides is a
// FilteredError. Each view keeps its own tool_search activations. A view
// of a view narrows both ways; its Permit, if set, replaces the outer
// view's (build it from that one's rules and more).
//
// Closing a view does nothing: the servers stop when h is closed. Apply,
// Pause, Resume and Retry on a view act on h's servers (those the view
// includes, for the last three).
func (h *Host) View(sc Scope) *Host {
	if outer := h.scope; outer != nil {
		inner := sc.Servers
		sc.Servers = func(name string) bool {
			return outer.includes(name) && (inner == nil || inner(name))
		}
		if innerTools := sc.Tools; innerTools != nil || outer.Tools != nil {
			sc.Tools = func() config.ToolFilter {
				var f config.ToolFilter
				if outer.Tools != nil {
					f = append(f, outer.Tools()...)
				}
				if innerTools != nil {
					f = append(f, innerTools()...)
				}
				return f
			}
		}
		if sc.Permit == nil {
			sc.Permit = outer.Permit
		}
		if inner := sc.Deferral; outer.Deferral != nil {
			sc.Deferral = func() []toolsurface.Modifiers {
				var m []toolsurface.Modifiers
				if inner != nil {
					m = inner()
				}
				return append(m, outer.Deferral()...)
			}
		}
	}
	return &Host{hostCore: h.hostCore, scope: &sc}
}

// IsView reports whether h is a view made by View.
func (h *Host) IsView() bool { return h.scope != nil }

// Includes reports whether h shows the server named (a Host that is not a
// view shows every server it has).
func (h *Host) Includes(server string) bool { return h.scope.includes(server) }

// permitFunc is the check of h's calls: its scope's, else Options.Permit.
func (h *Host) permitFunc() Permit {
	if h.scope != nil && h.scope.Permit != nil {
		return h.scope.Permit
	}
	return h.opts.Permit
}

// subscribeView is Subscribe on a view: only the events of the servers it
// includes, and those of no server.
func (h *Host) subscribeView(ctx context.Context, fn func(Event)) {
	sc := h.scope
	(&Host{hostCore: h.hostCore}).Subscribe(ctx, func(ev Event) {
		if ev.Server == "" || sc.includes(ev.Server) {
			fn(ev)
		}
	})
}
