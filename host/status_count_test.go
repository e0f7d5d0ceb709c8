package host_test

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// status counts the tools the model is offered, and their tokens: a tool
// filter's hidden tools are not among them, nor a view's (a profile's).
func TestStatusCountsWhatTheModelSees(t *testing.T) {
	all := stdio("e", "echo")
	some := stdio("f", "echo")
	some.Tools = config.ToolFilter{{Where: "test", Disabled: []string{"echo"}}}
	h := newHost(t, cfgOf(all, some), nil)
	list, err := h.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, tl := range list.Tools {
		seen[tl.Server]++
	}
	count := func(h *host.Host, name string) (int, int) {
		for _, st := range h.Status() {
			if st.Name == name {
				return st.Tools, st.Tokens
			}
		}
		t.Fatalf("no status of %s", name)
		return 0, 0
	}
	eTools, eTokens := count(h, "e")
	fTools, fTokens := count(h, "f")
	if eTools != seen["e"] || fTools != seen["f"] || fTools != eTools-1 || fTokens >= eTokens {
		t.Errorf("status: e %d tools (%d tokens), f %d (%d); listed e %d, f %d: want the listed counts, f one fewer and cheaper",
			eTools, eTokens, fTools, fTokens, seen["e"], seen["f"])
	}

	// A view that hides echo too (a profile's filter).
	v := h.View(host.Scope{Tools: func() config.ToolFilter {
		return config.ToolFilter{{Where: "profile p", Disabled: []string{"echo"}}}
	}})
	vl, err := v.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	vseen := 0
	for _, tl := range vl.Tools {
		if tl.Server == "e" {
			vseen++
		}
	}
	if vTools, vTokens := count(v, "e"); vTools != vseen || vTools != eTools-1 || vTokens != fTokens {
		t.Errorf("view status: e %d tools (%d tokens), listed %d; want %d and f's %d tokens", vTools, vTokens, vseen, eTools-1, fTokens)
	}
	if again, _ := count(h, "e"); again != eTools {
		t.Errorf("the view's filter changed the Host's own count: %d, want %d", again, eTools)
	}
}
