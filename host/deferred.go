package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/toolsurface/search"
)

// Defaults of automatic deferral (docs/configuration.md, Flags: --tools): a server whose
// tool block would take more than a tenth of a 200k-token context is
// deferred behind tool_search.
const (
	DefaultContextBudget  = 200_000
	DefaultAutoDeferShare = 0.10
)

// ToolSearchName is the name of the built-in tool that finds and loads
// deferred tools.
const ToolSearchName = toolsurface.ToolSearchName

// deferState is the Host's deferred-loading state: the tools activated by
// tool_search for the rest of the session, and caches. Its zero value is
// ready to use.
type deferState struct {
	mu     sync.Mutex
	active map[string]bool // namespaced names tool_search (or Activate) loaded
	// index is the search index over the deferrable tools last seen, and
	// indexed the tool definitions it was built from (by identity).
	index   *search.Index
	indexed []*mcp.Tool
	// cost caches each server's tool-block estimate by list identity.
	cost map[string]blockCost
	// search is the tool_search definition last built, for the servers
	// (joined by ",") in searchFor: reused while they stay the same.
	search    *mcp.Tool
	searchFor string
}

type blockCost struct {
	first  *mcp.Tool
	n      int
	tokens int
}

// Activate loads deferred tools by their namespaced names for the rest of
// the session, as a tool_search hit does: Tools lists them from then on.
// Names of tools that do not exist (yet) are kept and apply when they do.
func (h *Host) Activate(names ...string) {
	d := &h.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.active == nil {
		d.active = map[string]bool{}
	}
	for _, n := range names {
		d.active[n] = true
	}
}

func (h *Host) isActive(name string) bool {
	d := &h.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.active[name]
}

// autoDeferThreshold is the tool-block size, in tokens, above which a
// server's tools are deferred automatically; 0 means never.
func (h *Host) autoDeferThreshold() int {
	share := h.opts.AutoDeferShare
	switch {
	case share < 0:
		return 0
	case share == 0:
		share = DefaultAutoDeferShare
	}
	budget := h.opts.ContextBudget
	if budget <= 0 {
		budget = DefaultContextBudget
	}
	return max(int(share*float64(budget)), 1)
}

// blockTokens estimates one server's tool block, cached while its list is
// the same.
func (h *Host) blockTokens(server string, tools []*mcp.Tool) int {
	if len(tools) == 0 {
		return 0
	}
	d := &h.deferred
	d.mu.Lock()
	c, ok := d.cost[server]
	d.mu.Unlock()
	if ok && c.first == tools[0] && c.n == len(tools) {
		return c.tokens
	}
	n := toolsurface.ToolBlockTokens(tools)
	d.mu.Lock()
	if d.cost == nil {
		d.cost = map[string]blockCost{}
	}
	d.cost[server] = blockCost{first: tools[0], n: len(tools), tokens: n}
	d.mu.Unlock()
	return n
}

// deferDecision says whether tool of server starts deferred. In order:
// the modifiers mods (h.deferral: the session's, then a view's; in each,
// NoDefer beats Defer), the tool's own defer_loading, the server's
// defer_loading, then automatic deferral of a server whose tool block is
// too big (big).
func deferDecision(mods []toolsurface.Modifiers, s *server, tool string, big bool) bool {
	for _, m := range mods {
		if d, set := m.Decide(s.name, tool); set {
			return d
		}
	}
	def := s.cfg.Effective
	if tc, ok := def.Tools[tool]; ok && tc.DeferLoading != nil {
		return *tc.DeferLoading
	}
	if def.DeferLoading != nil {
		return *def.DeferLoading
	}
	return big
}

// applyDeferral moves the deferred, not yet activated tools of out into
// out.Deferred and adds the built-in tool_search to out.Tools when any tool
// is deferrable, when the configuration defers tools explicitly, or when a
// server not listed now had deferred tools when last up — connected or
// not, so a deferring server's start-up, crash or reconnect leaves the
// tool block as it was. out.Tools must be sorted by name; it stays so.
func (h *Host) applyDeferral(out *ToolList) {
	byServer := map[string][]*mcp.Tool{}
	for _, t := range out.Tools {
		byServer[t.Server] = append(byServer[t.Server], t.Tool)
	}
	threshold := h.autoDeferThreshold()
	big := map[string]bool{}
	for name, tools := range byServer {
		big[name] = threshold > 0 && h.blockTokens(name, tools) > threshold
	}
	servers := map[string]*server{}
	for _, s := range h.all() {
		servers[s.name] = s
	}
	mods := h.deferral()
	kept := out.Tools[:0:0]
	for _, t := range out.Tools {
		s := servers[t.Server]
		if s == nil || !deferDecision(mods, s, t.Tool.Name, big[t.Server]) {
			kept = append(kept, t)
			continue
		}
		out.deferrable = append(out.deferrable, t)
		if h.isActive(t.Name) {
			kept = append(kept, t)
		} else {
			out.Deferred = append(out.Deferred, t)
		}
	}
	held := map[string]int{}
	for _, t := range out.Deferred {
		held[t.Server]++
	}
	for name := range byServer {
		if s := servers[name]; s != nil && h.scope == nil { // a view's count is not the server's
			s.mu.Lock()
			s.deferred = held[name]
			s.mu.Unlock()
		}
	}
	cand := h.deferCandidates(mods)
	if len(out.deferrable) > 0 || len(cand.explicit) > 0 || h.deferredWhenLastUp(mods, byServer, threshold) {
		ts := Tool{Name: ToolSearchName, Tool: h.toolSearchTool(cand.all)}
		i := sort.Search(len(kept), func(i int) bool { return kept[i].Name >= ToolSearchName })
		kept = append(kept, Tool{}) // not slices.Insert: its generic copy for Tool is 1 KB in every embedder
		copy(kept[i+1:], kept[i:])
		kept[i] = ts
	}
	out.Tools = kept
}

// deferredWhenLastUp reports whether a server missing from this listing
// (crashed and reconnecting, paused, in error) had tools that are deferred
// when it was last listed: tool_search stays listed for it, as it does for
// a server that defers by configuration, so its outage and return leave
// the tool block as it was.
func (h *Host) deferredWhenLastUp(mods []toolsurface.Modifiers, listed map[string][]*mcp.Tool, threshold int) bool {
	for _, s := range h.all() {
		if _, up := listed[s.name]; up {
			continue
		}
		s.mu.Lock()
		known := s.known
		s.mu.Unlock()
		if len(known) == 0 {
			continue
		}
		big := threshold > 0 && h.blockTokens(s.name, known) > threshold
		for _, t := range known {
			if hid, _ := h.hidden(s.name, t.Name); hid {
				continue // a tool no one here sees keeps no tool_search listed
			}
			if deferDecision(mods, s, t.Name, big) {
				return true
			}
		}
	}
	return false
}

// deferCandidates are the servers whose tools the configuration in force
// could defer, sorted by name: all of them, and those that defer by
// configuration (defer_loading or a Defer modifier) rather than by size.
type deferCandidates struct {
	all, explicit []string
}

// deferCandidates works out, from the configuration alone, which servers
// could have deferred tools: a server that cannot run (disabled, missing,
// invalid) or whose every tool a NoDefer modifier keeps loaded (one of
// mods before any whose Defer may name it) has none; one with
// defer_loading set (on itself or any tool) or named by a Defer modifier
// may have some; so may any server without defer_loading: false
// while automatic deferral is on. Which servers are connected, and in what
// order they connected, never matters: tool_search's definition is built
// from this, and it must not change while servers connect, crash and
// reconnect, or every such moment would void a model provider's prompt
// cache (the tool block comes first in the prompt). It is a superset of
// the servers deferDecision defers tools of.
//
// A view with a tool filter of its own (a profile's enabledTools and
// disabledTools) is the exception: tool_search must not name, to its
// model, a server whose every tool the view hides, and only the tools
// tell. There a server counts once its last listing (kept across crashes
// and reconnects) holds a tool the view shows, so the definition changes
// at most when a server is first listed or its tools change.
func (h *Host) deferCandidates(mods []toolsurface.Modifiers) deferCandidates {
	var c deferCandidates
	auto := h.autoDeferThreshold() > 0
	viewFilter := h.scope != nil && h.scope.Tools != nil && !h.scope.Tools().IsZero()
servers:
	for _, s := range h.all() { // sorted by name
		if a := s.cfg.Availability; a != config.Available && a != "" {
			continue // it does not start (server.start)
		}
		if viewFilter && !h.showsAKnownTool(s) {
			continue
		}
		named := false // by a Defer modifier, before any NoDefer keeps it all
		for _, m := range mods {
			if slices.ContainsFunc(m.NoDefer, func(p toolsurface.Pattern) bool { return coversServer(p, s.name) }) {
				continue servers
			}
			if slices.ContainsFunc(m.Defer, func(p toolsurface.Pattern) bool { return mayCover(p, s.name) }) {
				named = true
				break
			}
		}
		def := s.cfg.Effective
		explicit := (def.DeferLoading != nil && *def.DeferLoading) || named
		for _, tc := range def.Tools {
			explicit = explicit || (tc.DeferLoading != nil && *tc.DeferLoading)
		}
		switch {
		case explicit:
			c.explicit = append(c.explicit, s.name)
		case !auto || def.DeferLoading != nil: // defer_loading: false, or nothing is auto-deferred
			continue
		}
		c.all = append(c.all, s.name)
	}
	return c
}

// showsAKnownTool reports whether s's last tool listing holds a tool no
// filter (the server's, the view's) hides.
func (h *Host) showsAKnownTool(s *server) bool {
	s.mu.Lock()
	known := s.known
	s.mu.Unlock()
	for _, t := range known {
		if hid, _ := h.hidden(s.name, t.Name); !hid {
			return true
		}
	}
	return false
}

// coversServer reports whether p matches every tool of server.
func coversServer(p toolsurface.Pattern, server string) bool {
	return p.Server == "" || p.Tool == "" && p.Match(server, "x")
}

// mayCover reports whether p matches some tool of server.
func mayCover(p toolsurface.Pattern, server string) bool {
	if p.Tool == "" {
		return coversServer(p, server)
	}
	return p.Match(server, p.Tool)
}

// toolSearchTool is the definition of tool_search for the candidate
// servers (sorted): the same *mcp.Tool, byte for byte, while they stay
// the same.
func (h *Host) toolSearchTool(servers []string) *mcp.Tool {
	key := strings.Join(servers, ",")
	d := &h.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.search == nil || d.searchFor != key {
		d.search, d.searchFor = toolSearchDefinition(servers), key
	}
	return d.search
}

// toolSearchDefinition is tool_search as the model sees it. It names the
// servers whose tools may be deferred (so the model knows what it can find
// there, and what +server to write), never how many tools are deferred
// now or which servers are connected: see deferCandidates.
func toolSearchDefinition(servers []string) *mcp.Tool {
	from := ""
	if len(servers) > 0 {
		from = " (the MCP servers whose tools may be deferred: " + strings.Join(servers, ", ") + ")"
	}
	return &mcp.Tool{
		Name: ToolSearchName,
		Description: "Finds and loads tools that are available but not loaded yet" + from + ". " +
			"Their names and schemas are not in your tool list until a search returns them, " +
			"so call this whenever you need a capability you do not see among your tools. " +
			"Query with keywords for what you want to do, e.g. \"create github issue\" or \"read file\"; " +
			"write +word to require a word in the tool's or server's name (\"+slack send message\"); " +
			"or load tools by exact name with \"select:mcp__server__tool[,mcp__server__tool2]\". " +
			"Each matching tool is returned with its description and input schema and stays loaded for the rest of the session: call it directly by name.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"Keywords describing the tool you need, or select:NAME[,NAME] for exact names."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"How many tools to return (default 5)."}},` +
			`"required":["query"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}
}

// searchIndex returns the index over deferrable, rebuilt when the tool
// definitions changed.
func (h *Host) searchIndex(deferrable []Tool) *search.Index {
	d := &h.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	same := d.index != nil && len(d.indexed) == len(deferrable)
	for i := 0; same && i < len(deferrable); i++ {
		same = d.indexed[i] == deferrable[i].Tool
	}
	if same {
		return d.index
	}
	docs := make([]search.Doc, len(deferrable))
	d.indexed = make([]*mcp.Tool, len(deferrable))
	for i, t := range deferrable {
		docs[i] = search.DocFor(t.Name, t.Server, t.Tool)
		d.indexed[i] = t.Tool
	}
	d.index = search.NewIndex(docs)
	return d.index
}

// foundTool is one tool_search hit as the model gets it.
type foundTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// callToolSearch runs the built-in tool_search: it ranks the deferrable
// tools for the query, activates the hits and returns them. Bad arguments
// are an IsError result the model can read, not an error.
func (h *Host) callToolSearch(ctx context.Context, args any) (*mcp.CallToolResult, error) {
	var in struct {
		Query string  `json:"query"`
		Limit float64 `json:"limit"`
	}
	if err := json.Unmarshal(rawArgs(args), &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return toolError(`tool_search needs {"query": "keywords"} (and optionally "limit": a number of tools); ` +
			`e.g. {"query": "create github issue"} or {"query": "select:mcp__server__tool"}`), nil
	}
	list, err := h.Tools(ctx)
	if err != nil {
		return nil, err
	}
	if len(list.deferrable) == 0 {
		return toolError(h.nothingDeferred()), nil
	}
	limit := int(in.Limit)
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	hits := h.searchIndex(list.deferrable).Search(in.Query, limit)
	if len(hits) == 0 {
		count := map[string]int{}
		for _, t := range list.deferrable {
			count[t.Server]++
		}
		var parts []string
		for s, n := range count {
			parts = append(parts, fmt.Sprintf("%s (%d)", s, n))
		}
		sort.Strings(parts)
		return textResult(fmt.Sprintf("No deferred tool matches %q. Deferred tools come from: %s. "+
			"Try other keywords, or select:<name> for a tool whose name you know.", in.Query, strings.Join(parts, ", "))), nil
	}
	byName := map[string]Tool{}
	for _, t := range list.deferrable {
		byName[t.Name] = t
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d tool%s for %q. They are loaded now: call them directly by name.\n", len(hits), plural(len(hits)), in.Query)
	found := make([]foundTool, 0, len(hits))
	names := make([]string, 0, len(hits))
	servers := map[string]bool{}
	for _, hit := range hits {
		t := byName[hit.Name]
		ft := foundTool{
			Name:        t.Name,
			Description: toolsurface.CapDescription(t.Tool.Description, toolsurface.DefaultDescriptionCap),
			InputSchema: toolsurface.NormalizeSchema(t.Tool.InputSchema),
		}
		line, err := marshalCompact(ft)
		if err != nil {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
		found = append(found, ft)
		names = append(names, t.Name)
		servers[t.Server] = true
	}
	h.Activate(names...)
	for s := range servers {
		h.emit(Event{Kind: EventToolsChanged, Server: s})
	}
	res := textResult(strings.TrimRight(b.String(), "\n"))
	res.StructuredContent = map[string]any{"tools": found}
	return res, nil
}

// nothingDeferred explains an empty search space: either nothing is
// deferred, or the servers that could defer tools are not connected
// (tool_search may be listed for them all the same, see applyDeferral).
func (h *Host) nothingDeferred() string {
	var down []string
	for _, name := range h.deferCandidates(h.deferral()).all {
		if s, err := h.server(name); err == nil {
			if st := s.publicState(); st != StateConnected {
				down = append(down, fmt.Sprintf("%s (%s)", name, st))
			}
		}
	}
	if len(down) == 0 {
		return "no tools are deferred: every available tool is already in your tool list"
	}
	return "no tools are deferred right now; servers whose tools may be deferred are not connected: " +
		strings.Join(down, ", ") + ". Try again later, or use the tools in your list."
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// marshalCompact renders v as one line of JSON without HTML escaping.
func marshalCompact(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimRight(buf.String(), "\n"), nil
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func toolError(s string) *mcp.CallToolResult {
	r := textResult(s)
	r.IsError = true
	return r
}
