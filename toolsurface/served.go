package toolsurface

import "sort"

// Names a gateway serves (docs/gateway.md, Tool names). A client puts a gateway's tools
// behind its own prefix — Claude Code calls tool T of its entry E
// "mcp__E__T" — so the gateway serves "<server>__<tool>", without the
// "mcp__" that the client adds, and cut to a budget that leaves room for
// the client's prefix within MaxNameLen.

// DefaultGatewayEntry is the entry name `install-gateway` writes unless
// told otherwise, and the one DefaultNameBudget leaves room for.
const DefaultGatewayEntry = "switchboard"

// DefaultNameBudget is the longest name a gateway serves by default:
// MaxNameLen less Claude Code's prefix for the default entry,
// "mcp__switchboard__" (64 − 18 = 46).
const DefaultNameBudget = MaxNameLen - len(Prefix+DefaultGatewayEntry+Separator)

// MinNameBudget is the smallest budget a gateway accepts: the hash that
// ends a cut name, its '_' and seven bytes of the name itself.
const MinNameBudget = hashLen + 1 + 7

// ClientPrefix is the prefix Claude Code (and clients that copy it) puts
// before the tools of an MCP server entry named entry: "mcp__<entry>__",
// with entry sanitized as a tool name part.
func ClientPrefix(entry string) string { return Prefix + SanitizePart(entry) + Separator }

// NameBudget is the budget that keeps ClientPrefix(entry) + name within
// MaxNameLen. It may be below MinNameBudget for a very long entry name,
// which a gateway refuses.
func NameBudget(entry string) int { return MaxNameLen - len(ClientPrefix(entry)) }

// ServedName is the name a gateway serves for tool of server:
// "<server>__<tool>", both parts through SanitizePart. A name longer than
// budget is cut as ToolName cuts at MaxNameLen — the tool's first and last
// words kept, its middle ones (and, behind a long server name, the
// server's) cut, then '_' and the first 8 hex digits of sha256(server +
// "\x00" + tool) over the raw parts — so it is deterministic, and tools
// that differ only in their last word keep it. The
// result always matches ^[a-zA-Z0-9_-]+$ and is at most budget bytes long;
// budget is clamped to [MinNameBudget, MaxNameLen].
//
// Like ToolName, ServedName is not injective; route with ServedRoutes.
func ServedName(server, tool string, budget int) string {
	budget = min(max(budget, MinNameBudget), MaxNameLen)
	return fitParts("", SanitizePart(server), SanitizePart(tool), budget, server, tool)
}

// ServedTool is one tool a gateway may serve.
type ServedTool struct {
	Server, Tool string
	// Name, if set, is served as is instead of ServedName(Server, Tool):
	// the host's own tools (tool_search), which belong to no server.
	Name string
}

// ServedRoutes names tools for a gateway with ServedName under budget and
// returns the routing table: served name → index into tools. A name that
// two tools (or a tool and one of reserved) would share is served for
// none of them — a client that calls it can never reach the wrong tool,
// whatever order the tools come in — and each such clash is returned once,
// sorted by name, with the first two claimants (a reserved name counts as
// CollisionError.Reserved). Duplicate entries (same server and tool) count
// as one claimant.
func ServedRoutes(tools []ServedTool, budget int, reserved []string) (map[string]int, []*CollisionError) {
	claim := make(map[string][]int, len(tools))
	for i, t := range tools {
		name := t.Name
		if name == "" {
			name = ServedName(t.Server, t.Tool, budget)
		}
		if prev := claim[name]; len(prev) > 0 {
			p := tools[prev[0]]
			if p.Server == t.Server && p.Tool == t.Tool && p.Name == t.Name {
				continue
			}
		}
		claim[name] = append(claim[name], i)
	}
	isReserved := make(map[string]string, len(reserved))
	for _, r := range reserved {
		isReserved[r] = r
	}
	routes := make(map[string]int, len(claim))
	var clashes []*CollisionError
	for name, idx := range claim {
		first := tools[idx[0]]
		switch {
		case isReserved[name] != "":
			clashes = append(clashes, &CollisionError{Name: name, Server: first.Server, Tool: first.Tool, Reserved: isReserved[name]})
		case len(idx) > 1:
			second := tools[idx[1]]
			clashes = append(clashes, &CollisionError{Name: name, Server: second.Server, Tool: second.Tool, OtherServer: first.Server, OtherTool: first.Tool})
		default:
			routes[name] = idx[0]
		}
	}
	sort.Slice(clashes, func(i, j int) bool { return clashes[i].Name < clashes[j].Name })
	return routes, clashes
}
