package host

import (
	"sync/atomic"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// routerSet replaces a server's names in the routing table.
func (h *Host) routerSet(server string, tools []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.router == nil {
		h.router = toolsurface.NewRouter()
	}
	h.router.RemoveServer(server)
	return h.router.AddServer(server, tools)
}

// ToolOf returns the server and the server's own name of the tool the
// Host calls name (mcp__<server>__<tool>, as Call takes it), once that
// server's tools are listed: the names a result's envelope shows, which
// the name itself may have lost (a server "my.srv" is "my_srv" in it, a
// long name is cut). ok is false for a name the Host does not route (its
// own tool_search, a name not listed yet).
func (h *Host) ToolOf(name string) (server, tool string, ok bool) { return h.routerResolve(name) }

func (h *Host) routerResolve(name string) (server, tool string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.router == nil {
		return "", "", false
	}
	return h.router.Resolve(name)
}

// routerName is the routed name of a server's tool, or "".
func (h *Host) routerName(server, tool string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.router == nil {
		return ""
	}
	name, _ := h.router.Name(server, tool)
	return name
}

// nameConflict says why server name must not run, or "": its name cannot
// be told apart from another server's in tool names and permission rules
// (policy.ServerConflicts). It is decided from the configuration in force
// alone — the set of configured names, whatever their state — so the
// outcome never depends on which server connected first: a server so
// refused is in error and never started, and no call can reach it. The
// set is computed once per configuration (a start per server each
// recomputing it made `status` quadratic in servers).
func (h *Host) nameConflict(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conflicts[name]
}

// nameConflictsWork counts the server names nameConflicts has gone
// through, so that a test sees the work grow with the servers, not with
// their square, without timing anything.
var nameConflictsWork atomic.Int64

// nameConflicts are the refused servers of cfg and why.
func nameConflicts(cfg *config.Resolved) map[string]string {
	if cfg == nil {
		return nil
	}
	nameConflictsWork.Add(int64(len(cfg.Servers)))
	names := make([]string, len(cfg.Servers))
	for i, rs := range cfg.Servers {
		names[i] = rs.Name
	}
	return policy.ServerConflicts(names)
}
