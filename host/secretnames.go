package host

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names that hold a secret.
//
// The secret values Switchboard gave servers are replaced wherever the
// model reads text (guard.go), but not in names: a tool's, a prompt's, a
// parameter's name and a resource's URI are what a call or a read sends
// back, and a name rewritten to "<redacted>" names nothing. A server that
// puts such a value into a name would hand it to the model all the same,
// so what carries one is not served at all — left out of the lists, with
// a warning that names the server and never the name (which holds the
// secret). A call by that name finds no such tool.

// secretNameWarning is the warning of a list that left out n items of
// server whose names hold a secret value.
func secretNameWarning(server string, n int, what string) string {
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("%s: %d %s%s not served: a name the server gave holds a secret value Switchboard gave a server", server, n, what, s)
}

// minNamedSecret is the length from which a secret value found in a name
// keeps the name from being served. Shorter known values (a password of
// `postgres`, an API key of `test`) are still replaced wherever the model
// reads text; in a name they are as likely an ordinary word of the
// server's (a tool `postgres_query`), and refusing it would take tools
// away for nothing. Generated credentials are longer.
const minNamedSecret = 12

// holdsSecret reports whether any of names holds a secret value
// Switchboard gave a server, of at least minNamedSecret bytes.
func (h *Host) holdsSecret(names ...string) bool {
	for _, n := range names {
		if h.secrets.HoldsAtLeast(n, minNamedSecret) {
			return true
		}
	}
	return false
}

// keysHoldSecret reports whether any object key of a schema (a property
// name, at any depth) holds a secret value.
func (h *Host) keysHoldSecret(schema any) bool {
	switch x := schema.(type) {
	case nil, bool, string, float64, json.Number:
		return false
	case map[string]any:
		for k, v := range x {
			if h.holdsSecret(k) || h.keysHoldSecret(v) {
				return true
			}
		}
		return false
	case []any:
		for _, v := range x {
			if h.keysHoldSecret(v) {
				return true
			}
		}
		return false
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return false
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	return h.keysHoldSecret(v)
}

// toolsWithoutSecretNames returns tools without those whose name or any
// of whose schemas' property names holds a secret value, and how many
// were left out; tools itself when none was.
func (h *Host) toolsWithoutSecretNames(tools []*mcp.Tool) ([]*mcp.Tool, int) {
	var out []*mcp.Tool
	for i, t := range tools {
		if t == nil || !h.holdsSecret(t.Name) && !h.keysHoldSecret(t.InputSchema) && !h.keysHoldSecret(t.OutputSchema) {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make([]*mcp.Tool, 0, len(tools)-1), tools[:i]...)
		}
	}
	if out == nil {
		return tools, 0
	}
	return out, len(tools) - len(out)
}

// promptHoldsSecret reports whether a prompt's name or one of its
// arguments' names holds a secret value.
func (h *Host) promptHoldsSecret(p *mcp.Prompt) bool {
	if p == nil {
		return false
	}
	if h.holdsSecret(p.Name) {
		return true
	}
	for _, a := range p.Arguments {
		if a != nil && h.holdsSecret(a.Name) {
			return true
		}
	}
	return false
}

// withoutSecretNamed returns items without those holds says hold a secret
// in a name, and a warning per server that had any (secretNameWarning);
// items itself when none did.
func withoutSecretNamed[T any](items []T, server func(T) string, holds func(T) bool, what string) ([]T, []string) {
	var out []T
	var order []string
	left := map[string]int{}
	for i, it := range items {
		if !holds(it) {
			if out != nil {
				out = append(out, it)
			}
			continue
		}
		if out == nil {
			out = append(make([]T, 0, len(items)-1), items[:i]...)
		}
		srv := server(it)
		if left[srv] == 0 {
			order = append(order, srv)
		}
		left[srv]++
	}
	if out == nil {
		return items, nil
	}
	warnings := make([]string, len(order))
	for i, srv := range order {
		warnings[i] = secretNameWarning(srv, left[srv], what)
	}
	return out, warnings
}
