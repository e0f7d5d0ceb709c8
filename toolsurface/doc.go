// Package toolsurface is everything between "an MCP server returned tools
// and results" and "a model's provider accepts them" (SPEC §5). It is pure:
// it decides from data and never spawns, dials or sleeps, so host, gateway
// and embedders all build the same surface from it.
//
// The pieces:
//
//   - Names. ToolName turns (server, tool) into "mcp__<server>__<tool>",
//     always legal for every provider (^[a-zA-Z0-9_-]{1,64}$), cutting long
//     names to end in a hash. A Router holds the reverse map the runtime
//     routes calls with, and refuses — with a *CollisionError naming both
//     tools — a server whose names would collide, so routing is never
//     ambiguous. BareRouter serves embedders that want bare tool names and
//     refuses names that would shadow their built-ins.
//   - Descriptions and schemas are third-party text: CapDescription bounds
//     a description, NormalizeSchema makes any input schema an object
//     schema, and EstimateTokens / ToolBlockTokens give the context cost
//     status shows per server.
//   - Results. Envelope renders a CallToolResult for a model (RenderContent:
//     text as is, media and binaries as one-line placeholders) and wraps it
//     in <mcp_response server="…" tool="…" trust="untrusted">, defanging
//     every tag in the payload that could close the envelope early (Defang,
//     Wrap).
//
// Provider shapes, tool_search with deferred loading, and large-output spill
// files build on these and live alongside them.
package toolsurface
