// Package toolsurface is everything between "an MCP server returned tools
// and results" and "a model accepts them": the names a model calls, the
// text it reads, and how much of it. It is pure: it decides from data and
// never spawns, dials or sleeps, so host, gateway and embedders all build
// the same surface from it.
//
// An embedder that runs its own model loop uses it at three moments:
//
//	r := toolsurface.NewRouter()
//	err := r.AddServer("github", toolNames)      // a server listed its tools
//	name, _ := r.Name("github", "create_issue")  // "mcp__github__create_issue"
//
//	server, tool, ok := r.Resolve(name)          // the model called name
//
//	out := toolsurface.Present(server, tool, result, nil) // the server answered
//	// out.Text is what the model reads: enveloped, defanged and capped.
//
// The pieces:
//
//   - Names. ToolName turns (server, tool) into "mcp__<server>__<tool>",
//     always legal for every provider (^[a-zA-Z0-9_-]{1,64}$), cutting long
//     names to end in a hash. A Router holds the reverse map the runtime
//     routes calls with, and refuses — with a *CollisionError naming both
//     tools — a server whose names would collide, so routing is never
//     ambiguous. BareRouter serves embedders that want bare tool names and
//     refuses names that would shadow their built-ins. ServedName and
//     ServedRoutes are the names a gateway serves, cut to leave room for
//     the prefix its client adds.
//
//   - Descriptions and schemas are third-party text: CapDescription bounds
//     a description, CleanTool caps every string of a tool's schemas as a
//     description and all of a schema's text at DefaultSchemaBudget,
//     NormalizeSchema makes any input schema an object schema, and EstimateTokens / ToolBlockTokens give the context cost
//     status shows per server. Tool is a tool as a model sees it (name,
//     description, schema).
//
//   - Results. Envelope renders a CallToolResult for a model (RenderContent:
//     text as is, media and binaries as one-line placeholders) and wraps it
//     in <mcp_response server="…" tool="…" trust="untrusted">, defanging
//     every tag in the payload that could close the envelope early (Defang,
//     Wrap).
//
//   - Large output. Present applies MAX_MCP_OUTPUT_TOKENS to a result: a
//     large one is written to a spill file (through an injectable writer)
//     and the model gets a paging guide, or it is truncated with a marker
//     and notes on the blocks left out.
//
//   - Deferred tools. ParseToolModifiers reads the --tools modifiers
//     (Defer, NoDefer) that decide, over the configuration, which tools
//     are deferred behind the built-in ToolSearchName tool.
//
//   - Prompts and resources. SlashCommand / SlashCommands name prompts as
//     collision-free /<server>:<prompt> commands; ParseResourceRef reads
//     @<server>:<uri> references.
//
// Two jobs live in packages of their own, each built on this one:
// toolsurface/shape turns Tools into OpenAI, Anthropic or Gemini tool
// definitions, and toolsurface/search ranks tools for the tool_search
// built-in.
package toolsurface
