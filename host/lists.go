package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one tool as a model sees it: its namespaced name and the server's
// own description of it.
type Tool struct {
	// Name is the namespaced name, mcp__<server>__<tool>.
	Name   string
	Server string
	// Tool is the definition as the server sent it (Tool.Name is the
	// server's own name for it).
	Tool *mcp.Tool
	// TaskSupport is how the server runs the tool as a task, as the host
	// learned it on the connection (mcp.Tool has no execution field):
	// "required" or "optional" (every tool of a 2026-07-28 server that
	// offers the tasks extension, which decides per call), "" for none.
	// A gateway shows it to its task-capable clients.
	TaskSupport string
}

// ToolList is the result of Tools: what is ready, and a warning for each
// server that is not.
type ToolList struct {
	Tools    []Tool
	Warnings []string
	// Deferred are the tools left out of Tools because they are deferred
	// (defer_loading, --tools modifiers or automatic deferral; see
	// deferred.go) and not yet loaded by tool_search. When any tool is
	// deferred, or the configuration defers tools of a server not up yet
	// (or down since it had deferred tools), Tools holds the built-in
	// tool_search (Server ""), whose definition depends only on the
	// configuration, so the tool block stays the same as servers come and
	// go.
	Deferred []Tool
	// deferrable are all deferred tools, loaded or not: what tool_search
	// searches.
	deferrable []Tool
}

// Prompt is one prompt of one server.
type Prompt struct {
	Server string
	Prompt *mcp.Prompt
}

// Resource is one resource of one server.
type Resource struct {
	Server   string
	Resource *mcp.Resource
}

// Tools returns the tools of every connected server, sorted by name. It
// waits at most Options.ToolsWait (or until ctx is done) for servers still
// connecting; those are left out with a warning. Lists are cached per
// server (TTL, list_changed, reconnect). A server whose tool names collide
// is put in state error and left out. Deferred tools not yet loaded by
// tool_search are in ToolList.Deferred instead of Tools, which then holds
// the built-in tool_search (see ToolList.Deferred and Options.ToolModifiers).
// After Close it (and every other list) fails with ErrClosed.
func (h *Host) Tools(ctx context.Context) (*ToolList, error) {
	out := &ToolList{}
	err := h.eachReady(ctx, &out.Warnings, func(ctx context.Context, s *server) (func(), error) {
		tools, err := h.serverTools(ctx, s)
		return func() {
			for _, t := range tools {
				if hid, _ := h.scope.hidden(t.Name); hid {
					continue // a view's filter (the routes are the Host's)
				}
				out.Tools = append(out.Tools, Tool{Name: toolName(s.name, t.Name), Server: s.name, Tool: t, TaskSupport: s.taskSupport(t.Name)})
			}
			if p := h.pins.get(s.name); err == nil && p != nil && p.secretNamed > 0 {
				out.Warnings = append(out.Warnings, secretNameWarning(s.name, p.secretNamed, "tool")) // under eachReady's lock
			}
		}, err
	})
	sort.Slice(out.Tools, func(i, j int) bool { return out.Tools[i].Name < out.Tools[j].Name })
	h.applyDeferral(out)
	return out, err
}

// Prompts returns the prompts of every connected server (see Tools for the
// waiting rule), their titles and descriptions cleaned of deceptive
// characters as tools' are. With a pin store, a prompt whose definition
// is not the pinned one is left out while it is held (PromptChanges).
func (h *Host) Prompts(ctx context.Context) ([]Prompt, []string, error) {
	out, warnings, err := gather(ctx, h, func(s *server) *listCache[*mcp.Prompt] { return s.prompts },
		func(caps *mcp.ServerCapabilities) bool { return caps.Prompts != nil },
		listPrompts,
		func(p *mcp.Prompt) string { return p.Name },
		func(server string, p *mcp.Prompt) Prompt { return Prompt{Server: server, Prompt: p} },
		h.pinPrompts) // promptpins.go: held prompts left out
	out, hidden := withoutSecretNamed(out, func(p Prompt) string { return p.Server },
		func(p Prompt) bool { return h.promptHoldsSecret(p.Prompt) }, "prompt")
	return h.cleanPrompts(out), sortedWarnings(warnings, hidden), err // guard.go: what the model reads
}

// listPrompts fetches a server's prompts, every page.
func listPrompts(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[*mcp.Prompt, error] {
	return cs.Prompts(ctx, nil)
}

// sortedWarnings is warnings and more, sorted as eachReady sorts them.
func sortedWarnings(warnings, more []string) []string {
	if len(more) == 0 {
		return warnings
	}
	warnings = append(warnings, more...)
	sort.Strings(warnings)
	return warnings
}

// Resources returns the resources of every connected server (see Tools for
// the waiting rule), their names, titles and descriptions cleaned of
// deceptive characters and capped as tools' are; a resource whose URI
// holds a secret value is left out, with a warning. Templated resources
// are not listed here: see ResourceTemplates.
func (h *Host) Resources(ctx context.Context) ([]Resource, []string, error) {
	out, warnings, err := gather(ctx, h, func(s *server) *listCache[*mcp.Resource] { return s.resources },
		func(caps *mcp.ServerCapabilities) bool { return caps.Resources != nil },
		func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[*mcp.Resource, error] {
			return cs.Resources(ctx, nil)
		},
		func(r *mcp.Resource) string { return r.URI },
		func(server string, r *mcp.Resource) Resource { return Resource{Server: server, Resource: r} }, nil)
	out, hidden := withoutSecretNamed(out, func(r Resource) string { return r.Server },
		func(r Resource) bool { return r.Resource != nil && h.holdsSecret(r.Resource.URI) }, "resource")
	return h.cleanResources(out), sortedWarnings(warnings, hidden), err // listings.go: what the model reads
}

// gather collects one kind of list (prompts, resources, resource templates)
// from every ready server, sorted by server and then by key: cache picks
// the server's cache, declared says whether the server offers the feature,
// list fetches it, wrap pairs an item with its server, and decide, if not
// nil, gives what is served of a server's list (as the server sent it).
func gather[T, O any](ctx context.Context, h *Host, cache func(*server) *listCache[*T],
	declared func(*mcp.ServerCapabilities) bool,
	list func(context.Context, *mcp.ClientSession) iter.Seq2[*T, error],
	key func(*T) string,
	wrap func(server string, item *T) O,
	decide func(*server, []*T) []*T) ([]O, []string, error) {
	type entry struct {
		server string
		item   *T
	}
	var all []entry
	var warnings []string
	err := h.eachReady(ctx, &warnings, func(ctx context.Context, s *server) (func(), error) {
		items, err := fetchList(ctx, s, cache(s), func(ctx context.Context, c *conn) ([]*T, error) {
			if !c.serves(declared) {
				return nil, nil
			}
			return collect(list(ctx, c.session))
		})
		if err == nil && decide != nil {
			items = decide(s, items)
		}
		return func() {
			for _, it := range items {
				all = append(all, entry{s.name, it})
			}
		}, err
	})
	// Sorted by server, then by key: the same order whichever server
	// answered first.
	sort.Slice(all, func(i, j int) bool {
		if all[i].server != all[j].server {
			return all[i].server < all[j].server
		}
		return key(all[i].item) < key(all[j].item)
	})
	out := make([]O, 0, len(all))
	for _, e := range all {
		out = append(out, wrap(e.server, e.item))
	}
	return out, warnings, err
}

// GetPrompt renders one prompt of one server with its arguments; its text
// is what the model may read (deceptive characters removed or made
// visible). A prompt that prompt pinning holds is refused with a
// [*HeldPromptError], unrendered.
func (h *Host) GetPrompt(ctx context.Context, serverName, prompt string, args map[string]string) (*mcp.GetPromptResult, error) {
	s, c, err := h.liveServer(ctx, serverName)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	if err := h.checkPromptHeld(ctx, s, prompt); err != nil {
		return nil, err // promptpins.go
	}
	res, err := c.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Arguments: args})
	// The server's error is its words too: the secret values it was
	// given are replaced there as in its text.
	return h.cleanPromptResult(serverName, prompt, res), h.secrets.Error(err)
}

// ReadResource reads one resource of one server: a URI it lists, or one
// built from one of its ResourceTemplates. The contents are the server's
// byte for byte, but for the secret values Switchboard gave servers,
// which are replaced in every text, URI, MIME type and blob, and in the
// server's error.
func (h *Host) ReadResource(ctx context.Context, serverName, uri string) (*mcp.ReadResourceResult, error) {
	s, c, err := h.liveServer(ctx, serverName)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	return h.guardRead(serverName, res), h.secrets.Error(err)
}

// Refresh drops a server's cached lists (all servers when name is "").
func (h *Host) Refresh(name string) error {
	if name == "" {
		for _, s := range h.all() {
			s.invalidateAll()
		}
		return nil
	}
	s, err := h.server(name)
	if err != nil {
		return err
	}
	s.invalidateAll()
	return nil
}

// eachReady waits (bounded) for connecting servers, then runs fetch on every
// connected one concurrently; add is applied under a lock. Servers not
// ready add a warning.
func (h *Host) eachReady(ctx context.Context, warnings *[]string, fetch func(context.Context, *server) (func(), error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		// Not an empty list with a warning per server: nothing is served.
		return ErrClosed
	}
	wctx, cancel := context.WithTimeout(ctx, max(h.opts.ToolsWait, 0))
	defer cancel()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, s := range h.all() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A server getting a lost connection back is not waited for:
			// its last lists are served at once.
			if h.opts.ToolsWait > 0 && !s.isReconnecting() {
				s.waitSettled(wctx)
			}
			st := s.publicState()
			switch {
			case st == StateConnected:
			case st == StateCircuitOpen:
				// Its last known lists stay (fetchList serves them without
				// asking the server): a call fails fast with an isError
				// result saying so, and the lists do not churn.
				mu.Lock()
				*warnings = append(*warnings, fmt.Sprintf("%s: circuit open (%s)", s.name, s.snapshotReason()))
				mu.Unlock()
			case st == StateConnecting && s.isReconnecting():
				// Likewise while it reconnects: a call waits for it, within
				// its timeout, instead of finding its tools gone.
				mu.Lock()
				*warnings = append(*warnings, fmt.Sprintf("%s: reconnecting (%s)", s.name, s.snapshotReason()))
				mu.Unlock()
			case st == StateConnecting:
				mu.Lock()
				*warnings = append(*warnings, fmt.Sprintf("%s: still connecting; not included yet", s.name))
				mu.Unlock()
				return
			default:
				return // not running: status says why
			}
			add, err := fetch(ctx, s)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				// The server's own error may echo its secrets, as its
				// status reason may (setListErr scrubs that one).
				*warnings = append(*warnings, fmt.Sprintf("%s: %s", s.name, oneLine(h.secrets.String(err.Error()))))
				return
			}
			add()
		}()
	}
	wg.Wait()
	sort.Strings(*warnings)
	return ctx.Err()
}

// TaskSupport is how server runs its tool (by the server's own name for
// it) as a task, as Tool.TaskSupport says, read now on the current
// connection ("" for an unknown server, one not connected, or a tool
// this connection has not listed yet).
func (h *Host) TaskSupport(server, tool string) string {
	s, err := h.server(server)
	if err != nil {
		return ""
	}
	return s.taskSupport(tool)
}

// taskSupport is the current connection's word on how tool runs as a task
// (internal/tasks learned it from the raw lists), "" when it has none.
func (s *server) taskSupport(tool string) string {
	c := s.current()
	if c == nil || c.tasks == nil {
		return ""
	}
	return c.tasks.TaskSupport(tool)
}

func (s *server) current() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// serverTools returns one server's tools (cached), registering their
// namespaced names for routing. Colliding names put the server in error.
func (h *Host) serverTools(ctx context.Context, s *server) ([]*mcp.Tool, error) {
	tools, err := fetchList(ctx, s, s.tools, func(ctx context.Context, c *conn) ([]*mcp.Tool, error) {
		if !c.serves(func(caps *mcp.ServerCapabilities) bool { return caps.Tools != nil }) {
			return nil, nil
		}
		return collect(c.session.Tools(ctx, nil))
	})
	if err != nil {
		return nil, err
	}
	tools = h.filterTools(s.name, h.pinTools(s, tools)) // pins.go: cleaned, held tools left out
	s.routes.mu.Lock()
	defer s.routes.mu.Unlock()
	if h.stillRouted(s, tools) {
		return tools, nil
	}
	s.routes.tools, s.routes.first = nil, ""
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	if err := h.routerSet(s.name, names); err != nil {
		msg := fmt.Sprintf("tool names collide: %v", err)
		s.setCollision(msg)
		return nil, errors.New(msg)
	}
	s.setCollision("")
	s.mu.Lock()
	s.known = tools
	s.mu.Unlock()
	s.routes.tools = tools
	if len(tools) > 0 {
		s.routes.first = h.routerName(s.name, tools[0].Name)
	}
	return tools, nil
}

// routeMemo is the tool list last registered for a server without a
// collision, and the model-facing name of its first tool. mu serializes
// registrations of one server, so the memo always matches the router.
type routeMemo struct {
	mu    sync.Mutex
	tools []*mcp.Tool
	first string
}

// stillRouted reports whether tools (a list served from the cache) is the
// very list last registered for s, and the router still holds it (a config
// reload may have removed the server's names). The caller holds s.routes.mu.
func (h *Host) stillRouted(s *server, tools []*mcp.Tool) bool {
	m := &s.routes
	if m.tools == nil || len(m.tools) != len(tools) {
		return false
	}
	if len(tools) == 0 {
		return true
	}
	if &m.tools[0] != &tools[0] {
		return false
	}
	srv, tool, ok := h.routerResolve(m.first)
	return ok && srv == s.name && tool == tools[0].Name
}

// fetchList returns a cached list or fetches it from the live connection.
// A server whose circuit is open, or that is reconnecting, is not asked:
// its last list is served, even past its TTL or a list_changed. A failed
// fetch is recorded for status (setListErr).
func fetchList[T any](ctx context.Context, s *server, cache *listCache[T], list func(context.Context, *conn) ([]T, error)) ([]T, error) {
	if items, ok, _ := cache.get(); ok {
		return items, nil
	}
	if s.isReconnecting() || s.publicState() == StateCircuitOpen {
		return cache.lastKnown(), nil
	}
	c, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	_, _, epoch := cache.get()
	lctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	items, err := list(lctx, c)
	if err != nil {
		if ctx.Err() == nil {
			why := strings.TrimPrefix(err.Error(), fmt.Sprintf("calling %q: ", cache.method))
			s.setListErr(cache.method, errors.New(why))
			err = fmt.Errorf("%s failed: %s", cache.method, why)
		}
		return nil, err
	}
	s.setListErr(cache.method, nil)
	cache.put(items, epoch)
	return items, nil
}

// listMethods are the list requests whose failures status reports, in the
// order it reports them.
var listMethods = []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}

// A server's list is bounded: the SDK follows its next cursors for as
// long as it gives them, and a server that always gives a new one (with
// fat items) once grew a gateway by 30 MB a second, for as long as the
// list's timeout allowed, at every listing.
const (
	maxListItems = 100_000
	maxListBytes = 32 << 20 // of the items' JSON
)

// errListTooLong is the error of a list past maxListItems or maxListBytes.
var errListTooLong = fmt.Errorf("the server's list goes on past %d items or %d MiB of them; Switchboard stopped reading it", maxListItems, maxListBytes>>20)

func collect[T any](seq func(func(*T, error) bool)) ([]*T, error) {
	var out []*T
	size := 0
	for item, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, item)
		if b, err := json.Marshal(item); err == nil {
			size += len(b)
		}
		if len(out) > maxListItems || size > maxListBytes {
			return nil, errListTooLong // breaking off the loop stops the paging
		}
	}
	return out, nil
}

// serves reports whether the server declared a capability.
func (c *conn) serves(has func(*mcp.ServerCapabilities) bool) bool {
	res := c.session.InitializeResult()
	if res == nil || res.Capabilities == nil {
		return true // nothing declared: ask anyway
	}
	return has(res.Capabilities)
}
