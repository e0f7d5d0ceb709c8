package host

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// stillRouted may skip re-registering a server's names only for the very
// list it registered, and only while the router still holds those names.
func TestStillRouted(t *testing.T) {
	h := New(&config.Resolved{}, &Options{LookupEnv: func(string) (string, bool) { return "", false }})
	defer h.Close()
	s := newServer(h, config.ResolvedServer{Name: "srv"})
	list := []*mcp.Tool{{Name: "alpha"}, {Name: "beta"}}
	register := func(tools []*mcp.Tool) {
		t.Helper()
		names := make([]string, len(tools))
		for i, tl := range tools {
			names[i] = tl.Name
		}
		if err := h.routerSet(s.name, names); err != nil {
			t.Fatal(err)
		}
		s.routes.tools, s.routes.first = tools, h.routerName(s.name, tools[0].Name)
	}

	if h.stillRouted(s, list) {
		t.Error("nothing registered yet, but stillRouted says yes")
	}
	register(list)
	if !h.stillRouted(s, list) {
		t.Error("the registered list itself is not recognized")
	}
	same := append([]*mcp.Tool(nil), list...)
	if h.stillRouted(s, same) {
		t.Error("a new list (a refetch) of the same length is taken for the registered one")
	}
	if h.stillRouted(s, list[:1]) {
		t.Error("a shorter list sharing the registered one's array is taken for it")
	}
	h.mu.Lock()
	h.router.RemoveServer(s.name) // what a config reload does to a stopped server's names
	h.mu.Unlock()
	if h.stillRouted(s, list) {
		t.Error("the router lost the names, but stillRouted says they are still there")
	}
}
