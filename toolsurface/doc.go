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
//
//   - Descriptions and schemas are third-party text: CapDescription bounds
//     a description, NormalizeSchema makes any input schema an object
//     schema, and EstimateTokens / ToolBlockTokens give the context cost
//     status shows per server.
//
//   - Results. Envelope renders a CallToolResult for a model (RenderContent:
//     text as is, media and binaries as one-line placeholders) and wraps it
//     in <mcp_response server="…" tool="…" trust="untrusted">, defanging
//     every tag in the payload that could close the envelope early (Defang,
//     Wrap).
//
//   - Tool search. A SearchIndex ranks tools for a query with BM25F over
//     their names, server names, argument names and descriptions (with
//     stemming, synonyms, +required words and select:NAME); the host's
//     built-in tool_search (ToolSearchName) runs it over deferred tools.
//     ParseToolModifiers reads the --tools modifiers (Defer, NoDefer) that
//     decide, over the configuration, which tools are deferred.
//
//   - Prompts and resources. SlashCommand / SlashCommands name prompts as
//     collision-free /<server>:<prompt> commands; ParseResourceRef reads
//     @<server>:<uri> references.
//
//   - Provider shapes. Shape turns tools into OpenAI, Anthropic or Gemini
//     tool definitions, each schema cleaned for its provider by CleanSchema
//     (no keyword the provider rejects; Gemini's OpenAPI subset gets $refs
//     inlined, type lists made nullable, formats and bounds rewritten).
//
//   - Large output. Present applies MAX_MCP_OUTPUT_TOKENS to a result: a
//     large one is written to a spill file (through an injectable writer)
//     and the model gets a paging guide, or it is truncated with a marker
//     and notes on the blocks left out.
package toolsurface
