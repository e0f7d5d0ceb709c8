package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// Defaults of automatic deferral (SPEC §5 deferred loading): a server whose
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
	index   *toolsurface.SearchIndex
	indexed []*mcp.Tool
	// cost caches each server's tool-block estimate by list identity.
	cost map[string]blockCost
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
// the session's modifiers (NoDefer beats Defer), the tool's own
// defer_loading, the server's defer_loading, then automatic deferral of a
// server whose tool block is too big (big).
func (h *Host) deferDecision(s *server, tool string, big bool) bool {
	if d, set := h.opts.ToolModifiers.Decide(s.name, tool); set {
		return d
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
// out.Deferred and, when any tool is deferrable, adds the built-in
// tool_search to out.Tools. out.Tools must be sorted by name; it stays so.
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
	kept := out.Tools[:0:0]
	for _, t := range out.Tools {
		s := servers[t.Server]
		if s == nil || !h.deferDecision(s, t.Tool.Name, big[t.Server]) {
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
		if s := servers[name]; s != nil {
			s.mu.Lock()
			s.deferred = held[name]
			s.mu.Unlock()
		}
	}
	if len(out.deferrable) > 0 {
		kept = append(kept, Tool{Name: ToolSearchName, Tool: toolSearchTool(out.deferrable)})
		sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	}
	out.Tools = kept
}

// toolSearchTool is the definition of tool_search, naming the servers
// whose tools it can load.
func toolSearchTool(deferrable []Tool) *mcp.Tool {
	count := map[string]int{}
	for _, t := range deferrable {
		count[t.Server]++
	}
	servers := make([]string, 0, len(count))
	for s := range count {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	return &mcp.Tool{
		Name: ToolSearchName,
		Description: "Finds and loads tools that are available but not loaded yet (deferred tools of the MCP servers " +
			strings.Join(servers, ", ") + "). Their names and schemas are not in your tool list until a search returns them, " +
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
func (h *Host) searchIndex(deferrable []Tool) *toolsurface.SearchIndex {
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
	docs := make([]toolsurface.SearchDoc, len(deferrable))
	d.indexed = make([]*mcp.Tool, len(deferrable))
	for i, t := range deferrable {
		docs[i] = toolsurface.SearchDocFor(t.Name, t.Server, t.Tool)
		d.indexed[i] = t.Tool
	}
	d.index = toolsurface.NewSearchIndex(docs)
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
	if err := decodeArgs(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return toolError(`tool_search needs {"query": "keywords"} (and optionally "limit": a number of tools); ` +
			`e.g. {"query": "create github issue"} or {"query": "select:mcp__server__tool"}`), nil
	}
	list, err := h.Tools(ctx)
	if err != nil {
		return nil, err
	}
	if len(list.deferrable) == 0 {
		return toolError("no tools are deferred: every available tool is already in your tool list"), nil
	}
	limit := int(in.Limit)
	if limit <= 0 {
		limit = toolsurface.DefaultSearchLimit
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// decodeArgs reads call arguments given as a map, a struct, or raw JSON.
func decodeArgs(args any, v any) error {
	var raw []byte
	switch a := args.(type) {
	case nil:
		raw = []byte("{}")
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	default:
		var err error
		if raw, err = json.Marshal(a); err != nil {
			return err
		}
	}
	return json.Unmarshal(raw, v)
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
