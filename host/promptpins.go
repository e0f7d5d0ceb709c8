package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/trust"
)

// Prompt pinning: a prompt's definition (its name, title, description and
// arguments: toolsurface.PromptDefinition) is what the model and a person
// picking a slash command read, as a tool's is, and a server may change it
// after it was approved. It is pinned beside the server's tools
// (trust.PinStore.PinPrompts) and decided the way they are: first sight
// pins, a change follows "toolChanges" (a project server's is held), and
// `switchboard tools accept SERVER --prompt=NAME` (AcceptPromptChanges)
// or the console (AcceptPromptChange) accepts it.

// ErrPromptHeld is wrapped by a [*HeldPromptError]: the prompt's
// definition is not the one pinned, and it is not served until the change
// is accepted.
var ErrPromptHeld = errors.New("prompt held: its definition changed since it was pinned")

// HeldPromptError is a GetPrompt of a prompt that prompt pinning holds
// (docs/security.md, What the model reads).
type HeldPromptError struct {
	Server, Prompt string
	// Reason says why, in one line.
	Reason string
}

func (e *HeldPromptError) Error() string {
	return fmt.Sprintf("prompt %q of server %q is held: %s", e.Prompt, e.Server, e.Reason)
}

func (e *HeldPromptError) Unwrap() error { return ErrPromptHeld }

// Hint says how a person sees and accepts the change that holds the
// prompt: the commands, as they would type them.
func (e *HeldPromptError) Hint() string {
	return fmt.Sprintf("see the change with `switchboard tools diff %s`; accept it with `%s`", e.Server, PromptAcceptCommand(e.Server, e.Prompt))
}

// PromptAcceptCommand is the command line that accepts server's changed
// prompt: `switchboard tools accept SERVER --prompt=NAME`, the prompt's
// name — the server's own words — one shell word (trust.Quote) glued to
// the flag, so that it is the flag's value whatever it starts with, and
// the line runs that command and nothing else.
func PromptAcceptCommand(server, prompt string) string {
	return "switchboard tools accept " + server + " --prompt=" + trust.Quote(prompt)
}

// PromptChange is one prompt whose definition is not the pinned one; its
// fields mean what a ToolChange's do.
type PromptChange struct {
	Server string `json:"server"`
	Prompt string `json:"prompt"`
	// Kind is ChangeChanged or ChangeAdded; State is ChangeHeld,
	// ChangeServed or ChangeAccepted.
	Kind   string `json:"kind"`
	State  string `json:"state"`
	Reason string `json:"reason"`
	// PinnedAt is when the definition it differs from was pinned (zero
	// for an added prompt).
	PinnedAt time.Time `json:"pinnedAt,omitzero"`
	// Pinned and Current are the definitions
	// (toolsurface.PromptDefinition); Pinned is nil for an added prompt.
	Pinned  json.RawMessage `json:"pinned,omitempty"`
	Current json.RawMessage `json:"current"`
	// Changes are the fields that differ, word by word.
	Changes []toolsurface.DefinitionChange `json:"changes"`
}

// promptPinState is what the Host decided about one server's prompt list,
// kept while the list and the pin store stay the same.
type promptPinState struct {
	s *server
	// raw is the list decided on (the cache's) and out what is served of
	// it: held prompts left out.
	raw, out []*mcp.Prompt
	gen      uint64
	// current holds the definition of every prompt of raw, by name.
	current map[string]json.RawMessage
	held    map[string]string // prompt → reason
	changes []PromptChange
	pinErr  string
}

// pinPrompts returns what is served of server s's prompt list raw (as the
// server sent it): with a pin store, only the prompts whose definition is
// the pinned one or that the rules let through. Prompts whose name holds
// a secret value are neither pinned nor decided on: Prompts leaves them
// out after.
func (h *Host) pinPrompts(s *server, raw []*mcp.Prompt) []*mcp.Prompt {
	store := h.opts.Pins
	if store == nil {
		return raw
	}
	gen := store.Generation()
	h.pins.mu.Lock()
	prev := h.pins.promptStates[s.name]
	h.pins.mu.Unlock()
	if prev != nil && prev.s == s && prev.gen == gen && sameList(prev.raw, raw) {
		return prev.out
	}
	st := h.decidePromptPins(s, raw)
	h.pins.mu.Lock()
	if h.pins.promptStates == nil {
		h.pins.promptStates = map[string]*promptPinState{}
	}
	h.pins.promptStates[s.name] = st
	h.pins.mu.Unlock()
	h.reportPromptChanges(s.name, prev, st)
	return st.out
}

// decidePromptPins computes a server's prompt pin state, as decidePins
// does its tools'.
func (h *Host) decidePromptPins(s *server, raw []*mcp.Prompt) *promptPinState {
	store := h.opts.Pins
	st := &promptPinState{s: s, raw: raw, current: map[string]json.RawMessage{}, held: map[string]string{}}
	defs := make([]json.RawMessage, len(raw)) // nil: not pinned (a secret in its name)
	// A second prompt of one name is neither pinned nor served: what is
	// pinned under a name must be what is served under it, and a gateway
	// serves the first (the pin of the last, with the first served,
	// would let the server swap them unseen at its next listing).
	var dups []*mcp.Prompt
	for i, p := range raw {
		if p == nil || h.promptHoldsSecret(p) {
			continue
		}
		if _, dup := st.current[p.Name]; dup {
			dups = append(dups, p)
			continue
		}
		defs[i] = toolsurface.PromptDefinition(p)
		st.current[p.Name] = defs[i]
	}
	if len(dups) > 0 {
		h.log.Warn("prompts not served: the server lists another prompt of the same name first", "server", s.name, "prompts", len(dups))
		kept := make([]*mcp.Prompt, 0, len(raw)-len(dups))
		keptDefs := make([]json.RawMessage, 0, len(raw)-len(dups))
		j := 0
		for i, p := range raw {
			if j < len(dups) && p == dups[j] {
				j++
				continue
			}
			kept = append(kept, p)
			keptDefs = append(keptDefs, defs[i])
		}
		raw, defs = kept, keptDefs
	}
	holdAll := func(why string) *promptPinState {
		st.pinErr = why
		st.out = []*mcp.Prompt{}
		for name := range st.current {
			st.held[name] = why
		}
		return st
	}
	st.gen = store.Generation()
	if err := store.Err(); err != nil {
		return holdAll(err.Error())
	}
	ws := h.workspace()
	pins, seen := store.Prompts(ws, s.name)
	if !seen {
		// First sight, as for tools: an upgrade from a Switchboard that
		// pinned no prompts holds nothing, it pins what it sees.
		if err := store.PinPrompts(ws, s.name, st.current, h.clock.Now()); err != nil {
			return holdAll("its prompts could not be pinned: " + err.Error())
		}
		h.log.Info("prompts pinned", "server", s.name, "prompts", len(st.current))
		st.gen = store.Generation()
		st.out = raw
		return st
	}
	repo := s.cfg.Trust == config.TrustRepo
	mode := h.toolChangeMode()
	accept := map[string]json.RawMessage{}
	st.out = make([]*mcp.Prompt, 0, len(raw))
	diffBudget := toolsurface.DiffBudget // one for the whole list, as for tools
	for i, p := range raw {
		def := defs[i]
		if def == nil {
			st.out = append(st.out, p)
			continue
		}
		pin, pinned := pins[p.Name]
		if pinned && pin.Digest == trust.DefinitionDigest(def) {
			st.out = append(st.out, p)
			continue
		}
		c := PromptChange{Server: s.name, Prompt: p.Name, Kind: ChangeAdded, Current: def}
		verb := "it is new since the server's prompts were pinned"
		if pinned {
			c.Kind, c.PinnedAt = ChangeChanged, pin.PinnedAt
			c.Pinned, _ = store.Definition(pin.Digest)
			verb = "its definition changed since it was pinned"
		}
		c.Changes = toolsurface.DiffDefinitionsWithin(c.Pinned, def, &diffBudget)
		switch {
		case repo:
			c.State = ChangeHeld
			c.Reason = verb + " (a project server's changed prompts wait until you accept them)"
		case mode == config.ToolChangesAccept:
			c.State = ChangeAccepted
			c.Reason = verb + `; accepted, as "toolChanges": "accept" says`
			accept[p.Name] = def
		case mode == config.ToolChangesAsk:
			c.State = ChangeHeld
			c.Reason = verb + ` ("toolChanges": "ask")`
		default:
			c.State = ChangeServed
			c.Reason = verb + `; served, as "toolChanges": "notify" says`
		}
		st.changes = append(st.changes, c)
		if c.State == ChangeHeld {
			st.held[p.Name] = c.Reason
			continue
		}
		st.out = append(st.out, p)
	}
	if len(accept) > 0 {
		if err := store.PinPrompts(ws, s.name, accept, h.clock.Now()); err != nil {
			// Not pinned: not served either.
			why := "its change could not be accepted: " + err.Error()
			out := st.out[:0]
			for _, p := range st.out {
				if _, ok := accept[p.Name]; ok {
					st.held[p.Name] = why
					continue
				}
				out = append(out, p)
			}
			st.out = out
		}
		st.gen = store.Generation()
	}
	return st
}

// reportPromptChanges logs and announces (EventPromptChange) the changes
// of next that prev did not have.
func (h *Host) reportPromptChanges(server string, prev, next *promptPinState) {
	known := map[string]string{}
	if prev != nil {
		for _, c := range prev.changes {
			known[c.Prompt] = c.State + string(c.Current)
		}
	}
	var fresh []PromptChange
	for _, c := range next.changes {
		if known[c.Prompt] == c.State+string(c.Current) {
			continue
		}
		fresh = append(fresh, c)
		fields := make([]string, len(c.Changes))
		for i, d := range c.Changes {
			fields[i] = d.Field
		}
		h.log.Warn("prompt definition changed", "server", server, "prompt", c.Prompt, "kind", c.Kind, "state", c.State,
			"fields", strings.Join(fields, ", "))
	}
	if (prev == nil || prev.pinErr == "") && next.pinErr != "" {
		h.log.Error("prompt pins cannot be used: no prompt of the server is served", "server", server, "error", next.pinErr)
	}
	if len(fresh) > 0 {
		h.emit(Event{Kind: EventPromptChange, Server: server, PromptChanges: fresh})
	}
}

// serverPrompts returns what is served of s's prompts, deciding on the
// pins as they are now (the list is fetched again when it was dropped).
func (h *Host) serverPrompts(ctx context.Context, s *server) ([]*mcp.Prompt, error) {
	items, err := fetchList(ctx, s, s.prompts, func(ctx context.Context, c *conn) ([]*mcp.Prompt, error) {
		if !c.serves(func(caps *mcp.ServerCapabilities) bool { return caps.Prompts != nil }) {
			return nil, nil
		}
		return collect(listPrompts(ctx, c.session))
	})
	if err != nil {
		return nil, err
	}
	return h.pinPrompts(s, items), nil
}

// checkPromptHeld is the pin check of a GetPrompt of s's prompt: nil
// without a pin store, or when the prompt is served. A list that cannot be
// fetched cannot be checked: the prompt is refused (fail closed).
func (h *Host) checkPromptHeld(ctx context.Context, s *server, prompt string) error {
	if h.opts.Pins == nil {
		return nil
	}
	if _, err := h.serverPrompts(ctx, s); err != nil {
		return fmt.Errorf("prompt %q of server %q: its prompts could not be listed to check it against its pin: %w", prompt, s.name, err)
	}
	h.pins.mu.Lock()
	st := h.pins.promptStates[s.name]
	h.pins.mu.Unlock()
	if st == nil {
		return nil
	}
	if why, ok := st.held[prompt]; ok {
		return &HeldPromptError{Server: s.name, Prompt: prompt, Reason: why}
	}
	return nil
}

// PromptChanges returns every prompt whose definition is not the pinned
// one, as the servers last listed them: held, served (toolChanges
// "notify") or just accepted, sorted by server and prompt.
func (h *Host) PromptChanges() []PromptChange {
	h.pins.mu.Lock()
	defer h.pins.mu.Unlock()
	var out []PromptChange
	for _, st := range h.pins.promptStates {
		for _, c := range st.changes {
			if h.scope.includes(c.Server) {
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Prompt < out[j].Prompt
	})
	return out
}

// promptState returns server's prompt pin state for an accept: the
// server must have listed its prompts in this process.
func (h *Host) promptState(server string) (*promptPinState, error) {
	s, err := h.server(server)
	if err != nil {
		return nil, err
	}
	if h.opts.Pins == nil {
		return nil, errors.New("prompts are not pinned in this session")
	}
	if err := h.opts.Pins.Err(); err != nil {
		return nil, err
	}
	h.pins.mu.Lock()
	st := h.pins.promptStates[server]
	h.pins.mu.Unlock()
	if st == nil || st.s != s {
		return nil, fmt.Errorf("server %s has not listed its prompts yet", server)
	}
	return st, nil
}

// AcceptPromptChanges pins the definitions server's prompts have now, as
// it last listed them (Prompts): the named prompts, or every changed
// prompt when none is named. Held prompts are then served, and
// EventPromptsChanged is announced (a gateway's clients get
// list_changed). It returns the changes it pinned, with what differs from
// the definitions pinned before. A name that did not change, or that the
// server does not offer, is an error naming the changed prompts.
func (h *Host) AcceptPromptChanges(server string, prompts ...string) ([]PromptChange, error) {
	st, err := h.promptState(server)
	if err != nil {
		return nil, err
	}
	changed := map[string]PromptChange{}
	var names []string
	for _, c := range st.changes {
		changed[c.Prompt] = c
		names = append(names, c.Prompt)
	}
	sort.Strings(names)
	if len(prompts) == 0 {
		prompts = names
	}
	defs := map[string]json.RawMessage{}
	var out []PromptChange
	for _, p := range prompts {
		c, ok := changed[p]
		if !ok {
			list := "none"
			if len(names) > 0 {
				list = strings.Join(names, ", ")
			}
			if _, offered := st.current[p]; !offered {
				return nil, fmt.Errorf("server %s offers no prompt %q (changed prompts: %s)", server, p, list)
			}
			return nil, fmt.Errorf("prompt %q of server %s has not changed since it was pinned (changed prompts: %s)", p, server, list)
		}
		if _, dup := defs[p]; !dup {
			out = append(out, c)
		}
		defs[p] = c.Current
	}
	if len(defs) == 0 {
		return nil, nil
	}
	if err := h.pinAcceptedPrompts(server, defs); err != nil {
		return nil, err
	}
	return out, nil
}

// AcceptPromptChange pins the definition c shows (c.Current) for c's
// prompt: the one a person was shown and said yes to; a server that
// changed it again meanwhile gets that definition held as a change of its
// own. c is a change the Host reported (PromptChanges); its prompt must
// still be changed.
func (h *Host) AcceptPromptChange(c PromptChange) error {
	st, err := h.promptState(c.Server)
	if err != nil {
		return err
	}
	changed := false
	for _, sc := range st.changes {
		changed = changed || sc.Prompt == c.Prompt
	}
	if !changed || len(c.Current) == 0 {
		return fmt.Errorf("prompt %q of server %s has not changed since it was pinned", c.Prompt, c.Server)
	}
	return h.pinAcceptedPrompts(c.Server, map[string]json.RawMessage{c.Prompt: c.Current})
}

// pinAcceptedPrompts pins defs, accepted changes of server's prompts, and
// announces it.
func (h *Host) pinAcceptedPrompts(server string, defs map[string]json.RawMessage) error {
	if err := h.opts.Pins.PinPrompts(h.workspace(), server, defs, h.clock.Now()); err != nil {
		return err
	}
	names := make([]string, 0, len(defs))
	for p := range defs {
		names = append(names, p)
	}
	sort.Strings(names)
	h.log.Info("prompt changes accepted", "server", server, "prompts", strings.Join(names, ", "))
	h.emit(Event{Kind: EventPromptsChanged, Server: server})
	return nil
}

// promptPinStatus fills the prompt pin fields of a server's status.
func (h *Host) promptPinStatus(st *ServerStatus) {
	h.pins.mu.Lock()
	p := h.pins.promptStates[st.Name]
	h.pins.mu.Unlock()
	if p == nil {
		return
	}
	for name := range p.held {
		st.HeldPrompts = append(st.HeldPrompts, name)
	}
	sort.Strings(st.HeldPrompts)
	st.PromptChanges = append(st.PromptChanges, p.changes...)
}
