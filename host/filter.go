package host

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// ErrFiltered is wrapped by a [*FilteredError]: the tool exists but a tool
// filter (enabledTools / disabledTools, see [config.ToolFilter]) hides it.
var ErrFiltered = errors.New("tool hidden by a tool filter")

// FilteredError is a call of a tool that a tool filter hides from the
// model. Reason names the layer and glob. View is whether the filter is a
// view's own ([Scope].Tools: a profile's), not the server's.
type FilteredError struct {
	Server, Tool, Reason string
	View                 bool
	// Pattern is the disabledTools glob that hides the tool ("" when an
	// enabledTools list leaves it out), and Scope the layer's
	// [config.ToolLayer].Scope: "local" or "user" for a filter of the
	// user's own file, "" for another layer's.
	Pattern, Scope string
}

func (e *FilteredError) Error() string {
	return fmt.Sprintf("tool %q of server %q is hidden: %s", e.Tool, e.Server, e.Reason)
}

func (e *FilteredError) Unwrap() error { return ErrFiltered }

// toolFilter is server's tool filter in the configuration in force.
func (h *Host) toolFilter(server string) config.ToolFilter {
	if cfg := h.Config(); cfg != nil {
		if rs := cfg.Server(server); rs != nil {
			return rs.Tools
		}
	}
	return nil
}

// hidden reports whether server's tool is filtered out, and why.
// A view's own filter (Scope.Tools) counts too.
func (h *Host) hidden(server, tool string) (bool, string) {
	hid, why, _ := h.hiddenBy(server, tool)
	return hid, why
}

// hiddenBy is hidden, and whether the view's own filter is the one that
// hides the tool.
func (h *Host) hiddenBy(server, tool string) (hid bool, why string, view bool) {
	if hid, why := h.toolFilter(server).Hidden(tool); hid {
		return hid, why, false
	}
	hid, why = h.scope.hidden(tool)
	return hid, why, hid
}

// filteredError is the FilteredError of a call of server's tool, nil when
// no filter hides it.
func (h *Host) filteredError(server, tool string) *FilteredError {
	hid, why, view := h.hiddenBy(server, tool)
	if !hid {
		return nil
	}
	e := &FilteredError{Server: server, Tool: tool, Reason: why, View: view}
	if !view {
		if l, glob := h.toolFilter(server).HiddenBy(tool); l != nil {
			e.Pattern, e.Scope = glob, l.Scope
		}
	}
	return e
}

// filterTools returns the tools of server that no filter hides: what the
// model, tool_search and the gateway's clients see. tools itself is
// returned when the server has no filter, so that the cached list keeps
// its identity (stillRouted).
//
// An App's own tool (AppOnly) is left out too: it is not the model's.
func (h *Host) filterTools(server string, tools []*mcp.Tool) []*mcp.Tool {
	f := h.toolFilter(server)
	if f.IsZero() && !slices.ContainsFunc(tools, AppOnly) {
		return tools
	}
	out := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if hid, _ := f.Hidden(t.Name); !hid && !AppOnly(t) {
			out = append(out, t)
		}
	}
	return out
}

// filteredCall returns the FilteredError for a namespaced name that no
// visible tool answers but a hidden tool of one of servers would: the
// message then names the filter instead of saying there is no such tool.
func (h *Host) filteredCall(name string, servers []*server) error {
	for _, s := range servers {
		tool := strings.TrimPrefix(name, "mcp__"+toolsurface.SanitizePart(s.name)+"__")
		if fe := h.filteredError(s.name, tool); fe != nil {
			return fe
		}
	}
	return nil
}

// filtersChanged lists the servers of both configurations whose tool
// filters differ: a running server keeps running, and only its lists are
// fetched again.
func filtersChanged(old, next *config.Resolved) []string {
	var out []string
	if old == nil || next == nil {
		return nil
	}
	for _, rs := range next.Servers {
		if o := old.Server(rs.Name); o != nil && !reflect.DeepEqual(o.Tools, rs.Tools) {
			out = append(out, rs.Name)
		}
	}
	return out
}
