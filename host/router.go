package host

import "github.com/switchboard-mcp/switchboard/toolsurface"

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
