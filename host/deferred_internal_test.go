package host

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// deferCandidates decides from the configuration alone which servers
// tool_search names: no server is started here (the gate holds them all).
func TestDeferCandidates(t *testing.T) {
	yes, no := true, false
	srv := func(name string, deferLoading *bool, tools map[string]config.ToolConfig) config.ResolvedServer {
		def := config.Server{Type: config.TypeStdio, Command: "unused", DeferLoading: deferLoading, Tools: tools}
		return config.ResolvedServer{Name: name, Written: def, Effective: def, Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available}
	}
	disabled := srv("off", &yes, nil)
	disabled.Availability = config.Disabled
	servers := []config.ResolvedServer{
		srv("zeta", &yes, nil), // listed out of order on purpose
		srv("auto", nil, nil),
		srv("kept", &no, nil),
		srv("onetool", &no, map[string]config.ToolConfig{"big": {DeferLoading: &yes}, "small": {DeferLoading: &no}}),
		srv("my-srv.x", &no, nil),
		disabled,
	}
	cases := []struct {
		name          string
		mods          string
		share         float64
		all, explicit []string
	}{
		{"auto on", "", 0,
			[]string{"auto", "onetool", "zeta"}, []string{"onetool", "zeta"}},
		{"auto off", "", -1,
			[]string{"onetool", "zeta"}, []string{"onetool", "zeta"}},
		{"Defer names a server, even one tool of it, in any spelling", "Defer(mcp__kept__x,mcp__MY_SRV_X)", -1,
			[]string{"kept", "my-srv.x", "onetool", "zeta"}, []string{"kept", "my-srv.x", "onetool", "zeta"}},
		{"Defer(mcp__*) names every server that can run", "Defer(mcp__*)", -1,
			[]string{"auto", "kept", "my-srv.x", "onetool", "zeta"}, []string{"auto", "kept", "my-srv.x", "onetool", "zeta"}},
		{"NoDefer of a whole server removes it; of one tool does not", "NoDefer(mcp__zeta,mcp__onetool__big,mcp__auto__*)", 0,
			[]string{"onetool"}, []string{"onetool"}},
		{"NoDefer(mcp__*) leaves nothing", "Defer(mcp__kept),NoDefer(mcp__*)", 0, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mods, err := toolsurface.ParseToolModifiers(c.mods)
			if err != nil {
				t.Fatal(err)
			}
			h := New(&config.Resolved{Servers: servers}, &Options{
				ToolModifiers: mods, AutoDeferShare: c.share,
				Gate:      func(*config.ResolvedServer) (State, string) { return StateNeedsApproval, "held for the test" },
				LookupEnv: func(string) (string, bool) { return "", false },
			})
			defer h.Close()
			got := h.deferCandidates(h.deferral())
			if d := cmp.Diff(deferCandidates{all: c.all, explicit: c.explicit}, got, cmp.AllowUnexported(deferCandidates{})); d != "" {
				t.Errorf("candidates (-want +got):\n%s", d)
			}
			// tool_search is listed, with every candidate, for servers that
			// defer by configuration even though none is connected.
			list, err := h.Tools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var desc string
			for _, tl := range list.Tools {
				if tl.Name == ToolSearchName {
					desc = tl.Tool.Description
				}
			}
			if listed := desc != ""; listed != (len(c.explicit) > 0) {
				t.Fatalf("tool_search listed %v with explicit candidates %v", listed, c.explicit)
			}
			if desc != "" && !strings.Contains(desc, "may be deferred: "+strings.Join(c.all, ", ")+")") {
				t.Errorf("description does not name %v in order: %q", c.all, desc)
			}
			if desc != "" {
				res, err := h.callToolSearch(t.Context(), map[string]any{"query": "anything"})
				if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "(needs-approval)") {
					t.Errorf("search with the deferring servers down: %v, %+v", err, res)
				}
			}
		})
	}
}

// A view's own modifiers (a profile's defer and noDefer) come after the
// session's: the first layer that speaks for a server decides, and the
// Host beneath keeps its own candidates.
func TestDeferCandidatesOfView(t *testing.T) {
	no := false
	def := config.Server{Type: config.TypeStdio, Command: "unused", DeferLoading: &no}
	var servers []config.ResolvedServer
	for _, n := range []string{"a", "b", "c"} {
		servers = append(servers, config.ResolvedServer{Name: n, Written: def, Effective: def, Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available})
	}
	parse := func(s string) toolsurface.Modifiers {
		m, err := toolsurface.ParseToolModifiers(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	h := New(&config.Resolved{Servers: servers}, &Options{
		ToolModifiers: parse("NoDefer(mcp__a),Defer(mcp__b__x)"), AutoDeferShare: -1,
		Gate:      func(*config.ResolvedServer) (State, string) { return StateNeedsApproval, "held for the test" },
		LookupEnv: func(string) (string, bool) { return "", false },
	})
	defer h.Close()
	v := h.View(Scope{Deferral: func() []toolsurface.Modifiers {
		return []toolsurface.Modifiers{parse("Defer(mcp__a,mcp__c),NoDefer(mcp__b)")}
	}})
	if got, want := v.deferCandidates(v.deferral()).explicit, []string{"b", "c"}; !cmp.Equal(got, want) {
		t.Errorf("view: %v, want %v (the session keeps a loaded and names b)", got, want)
	}
	if got, want := h.deferCandidates(h.deferral()).explicit, []string{"b"}; !cmp.Equal(got, want) {
		t.Errorf("host: %v, want %v", got, want)
	}
	inner := v.View(Scope{Deferral: func() []toolsurface.Modifiers { return []toolsurface.Modifiers{parse("NoDefer(mcp__c)")} }})
	if got, want := inner.deferCandidates(inner.deferral()).explicit, []string{"b"}; !cmp.Equal(got, want) {
		t.Errorf("view of the view: %v, want %v (its own NoDefer before the outer Defer)", got, want)
	}
}
