package toolsurface

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxNameLen is the longest tool name a model sees: the stricter of the
// OpenAI (64) and Anthropic (128) limits.
const MaxNameLen = 64

// Prefix and Separator frame a namespaced tool name: Prefix + server +
// Separator + tool.
const (
	Prefix    = "mcp__"
	Separator = "__"
)

// hashLen is how many hex digits of sha256 end a truncated name; with the
// '_' before them they take the last hashLen+1 bytes of MaxNameLen.
const hashLen = 8

// SanitizePart maps a server or tool name onto the legal alphabet
// [a-zA-Z0-9_-]: every other rune (and every byte of invalid UTF-8)
// becomes one '_'. The empty string becomes "_" so that no part of a
// name is ever empty. The result is not length-limited; see ToolName.
func SanitizePart(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if legal(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func legal(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// ToolName returns the name a model sees for tool of server:
// "mcp__<server>__<tool>" with both parts passed through SanitizePart.
//
// The result always matches ^[a-zA-Z0-9_-]{1,64}$. A name longer than
// MaxNameLen is cut deterministically (see fitParts): what tells tools
// apart is kept — the tool's first word and its last ones, cutting words
// from its middle ("create_merge_request_discussion" becomes
// "create_discussion") — then '_' and the first 8 hex digits of
// sha256(server + "\x00" + tool) over the unsanitized inputs, so two long
// names that share a front or a back stay distinct. "mcp__<server>__"
// stays whole unless it would leave the tool less than half the room;
// then the server's middle words go too. Routing never depends on the
// cut: permission rules and calls see the real server and tool.
//
// ToolName is not injective (two tools equal after sanitizing get one
// name); Router.AddServer detects every such collision.
func ToolName(server, tool string) string {
	return fitParts(Prefix, SanitizePart(server), SanitizePart(tool), MaxNameLen, server, tool)
}

// fitParts joins pre + srv + Separator + tail ("" srv: pre + tail alone,
// the bare form) and, when that is longer than limit bytes (limit >
// hashLen+1), cuts it to end in '_' and the hash of the raw server and
// tool. The parts are already sanitized (so ASCII). The tool keeps at
// least half of the room before the hash, or all it needs: its words are
// what tell a server's tools apart, while the server's are the same for
// all of them. Each part is shortened by shortenWords.
func fitParts(pre, srv, tail string, limit int, server, tool string) string {
	sep := ""
	if srv != "" {
		sep = Separator
	}
	if len(pre)+len(srv)+len(sep)+len(tail) <= limit {
		return pre + srv + sep + tail // one allocation, not two: every call's name
	}
	head := pre + srv + sep
	room := limit - hashLen - 1
	keepTail := min(len(tail), max(room-len(head), room/2))
	if srv != "" && len(head) > room-keepTail {
		// The server's middle words go; the prefix and separator stay so
		// that the name still reads mcp__<server>__<tool>.
		srvRoom := room - keepTail - len(pre) - len(Separator)
		if srvRoom >= 1 {
			head = pre + shortenWords(srv, srvRoom) + Separator
		} else {
			head = (pre + srv + Separator)[:max(room-keepTail, 0)]
		}
	}
	return head + shortenWords(tail, room-len(head)) + "_" + shortHash(server, tool)
}

// shortenWords cuts s to at most n bytes, dropping whole words from its
// middle: words start at '_' or '-' (which they keep), the first word and
// the last stay, and then, in turn, the words before the last and after
// the first while they fit. When the first and last word do not fit
// together, the last one is kept with as much of the front as fits, or
// alone, cut; a single word is cut to its first n bytes.
func shortenWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	var words []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == '_' || s[i] == '-' {
			words = append(words, s[start:i])
			start = i
		}
	}
	words = append(words, s[start:])
	last := len(words) - 1
	size := len(words[0]) + len(words[last])
	switch {
	case last == 0:
		return s[:n]
	case len(words[last]) <= n && size > n:
		// The last word and as much of the front as fits.
		return strings.TrimLeft(s[:n-len(words[last])]+words[last], "_-")
	case size > n:
		return strings.TrimLeft(words[last], "_-")[:n]
	}
	front, back := 1, last // words[:front] and words[back:] are kept
	for grew := true; grew && front < back; {
		grew = false
		if front < back && size+len(words[back-1]) <= n {
			back--
			size += len(words[back])
			grew = true
		}
		if front < back && size+len(words[front]) <= n {
			size += len(words[front])
			front++
			grew = true
		}
	}
	return strings.Join(words[:front], "") + strings.Join(words[back:], "")
}

func shortHash(server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// ParseToolName splits a namespaced name "mcp__<server>__<tool>" at the
// first "__" after the prefix, as permission rules do (policy.ParseRule):
// a host refuses servers whose names hold "__" or end in "_" once folded,
// so the split is the server's. It is meant for help text and completion:
// it returns the sanitized parts, and a truncated name yields a truncated
// tool. Route
// calls with Router.Resolve, which returns the original names.
func ParseToolName(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, Separator)
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// ErrCollision is wrapped by every error AddServer returns: two tools would
// reach the model under one name, so routing would be ambiguous.
var ErrCollision = errors.New("tool name collision")

// CollisionError says which two tools collide, and under what name.
// It unwraps to ErrCollision.
type CollisionError struct {
	// Name is the model-facing name both tools map to.
	Name string
	// Server and Tool are the tool being added.
	Server, Tool string
	// OtherServer and OtherTool hold the name already: the same server
	// for a duplicate inside one tool list, another server for a
	// cross-server clash. Both are empty when Reserved is set.
	OtherServer, OtherTool string
	// Reserved is the embedder's built-in tool Name would shadow.
	Reserved string
}

func (e *CollisionError) Error() string {
	var b strings.Builder
	b.WriteString(ErrCollision.Error())
	b.WriteString(": ")
	switch {
	case e.Reserved != "":
		fmt.Fprintf(&b, "tool %s of server %s would shadow built-in tool %s",
			quote(e.Tool), quote(e.Server), quote(e.Reserved))
	case e.OtherServer == e.Server && e.OtherTool == e.Tool:
		fmt.Fprintf(&b, "server %s lists tool %s more than once", quote(e.Server), quote(e.Tool))
	case e.OtherServer == e.Server:
		fmt.Fprintf(&b, "server %s: tools %s and %s both become %s",
			quote(e.Server), quote(e.OtherTool), quote(e.Tool), quote(e.Name))
	default:
		fmt.Fprintf(&b, "tool %s of server %s and tool %s of server %s both become %s",
			quote(e.OtherTool), quote(e.OtherServer), quote(e.Tool), quote(e.Server), quote(e.Name))
	}
	return b.String()
}

func (e *CollisionError) Unwrap() error { return ErrCollision }

// quote keeps a one-line error readable when a server sends a
// 1,000-character name.
func quote(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// ToolSearchName is the name of the built-in tool a model calls to find
// deferred tools (toolsurface/search ranks them). A BareRouter reserves it
// by default, and a gateway serves it under this name.
const ToolSearchName = "tool_search"

// DefaultReserved returns the built-in tool names a BareRouter refuses when
// the embedder passes none: the usual coding-agent built-ins plus
// tool_search, which this package provides.
func DefaultReserved() []string {
	return []string{
		"bash", "shell", "read_file", "write_file", "edit_file", "apply_patch",
		"list_files", "list_dir", "glob", "grep", "search", "web_fetch", "web_search",
		"todo_write", "task", ToolSearchName,
	}
}

type route struct{ server, tool string }

// Router maps model-facing tool names back to (server, tool) and enforces
// the collision rules of the package doc. The zero value is not usable; call NewRouter or
// BareRouter. A Router is safe for concurrent use.
type Router struct {
	bare     bool
	reserved map[string]string // lower-cased name → as the embedder spelled it

	mu       sync.RWMutex
	routes   map[string]route
	byServer map[string][]string // server → its names, in tool-list order
}

// NewRouter returns a Router for namespaced names (ToolName). It reserves
// nothing: every namespaced name starts with "mcp__", so it cannot shadow
// an embedder's built-in.
func NewRouter() *Router {
	return &Router{routes: map[string]route{}, byServer: map[string][]string{}}
}

// BareRouter returns a Router for embedders that show MCP tools under their
// own names: a tool's name is SanitizePart(tool), cut to MaxNameLen like
// ToolName. A name equal to a reserved built-in (compared ignoring case) or
// to another server's tool is an error, never a shadow. If reserved is nil,
// DefaultReserved() is used; pass an empty non-nil slice to reserve nothing.
func BareRouter(reserved []string) *Router {
	if reserved == nil {
		reserved = DefaultReserved()
	}
	r := NewRouter()
	r.bare = true
	r.reserved = make(map[string]string, len(reserved))
	for _, n := range reserved {
		r.reserved[strings.ToLower(n)] = n
	}
	return r
}

// nameFor is the model-facing name of tool under this router's mode.
func (r *Router) nameFor(server, tool string) string {
	if r.bare {
		return fitParts("", "", SanitizePart(tool), MaxNameLen, server, tool)
	}
	return ToolName(server, tool)
}

// AddServer registers server's tools, replacing any it had before (as after
// tools/list_changed). If two of the tools are equal, equal after
// sanitizing, or collide with another server's names or a reserved name,
// AddServer returns a *CollisionError (wrapping ErrCollision) for the first
// such tool in list order, and the router then holds no name for server at
// all: a server in error is not routable, and routing never depends on
// which server connected first beyond refusing the later one.
func (r *Router) AddServer(server string, tools []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeLocked(server)

	names := make([]string, 0, len(tools))
	mine := make(map[string]string, len(tools)) // name → tool
	for _, tool := range tools {
		name := r.nameFor(server, tool)
		if prev, dup := mine[name]; dup {
			return &CollisionError{Name: name, Server: server, Tool: tool, OtherServer: server, OtherTool: prev}
		}
		if builtin, ok := r.reserved[strings.ToLower(name)]; ok {
			return &CollisionError{Name: name, Server: server, Tool: tool, Reserved: builtin}
		}
		if other, taken := r.routes[name]; taken {
			return &CollisionError{Name: name, Server: server, Tool: tool, OtherServer: other.server, OtherTool: other.tool}
		}
		mine[name] = tool
		names = append(names, name)
	}
	for name, tool := range mine {
		r.routes[name] = route{server, tool}
	}
	r.byServer[server] = names
	return nil
}

// RemoveServer forgets every name of server. It is idempotent.
func (r *Router) RemoveServer(server string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeLocked(server)
}

func (r *Router) removeLocked(server string) {
	for _, name := range r.byServer[server] {
		delete(r.routes, name)
	}
	delete(r.byServer, server)
}

// Resolve returns the original (unsanitized) server and tool a
// model-facing name stands for.
func (r *Router) Resolve(name string) (server, tool string, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rt, ok := r.routes[name]
	return rt.server, rt.tool, ok
}

// Name returns the model-facing name of tool of server, if AddServer
// registered it. In namespaced mode it equals ToolName(server, tool).
func (r *Router) Name(server, tool string) (string, bool) {
	name := r.nameFor(server, tool)
	r.mu.RLock()
	defer r.mu.RUnlock()
	rt, ok := r.routes[name]
	if !ok || rt.server != server || rt.tool != tool {
		return "", false
	}
	return name, true
}

// Names returns the model-facing names of server's tools in the order
// AddServer was given them, or nil if the server has none registered.
func (r *Router) Names(server string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := r.byServer[server]
	if names == nil {
		return nil
	}
	return append([]string(nil), names...)
}
