// Package shape turns MCP tools into the tool definitions a model
// provider accepts: OpenAI's Chat Completions functions, Anthropic's
// Messages tools and Gemini's function declarations.
//
// An MCP server's input schema is third-party JSON Schema of any draft,
// and each provider rejects a different part of it with a 400 — a root
// anyOf, a type list, a $ref, a format it does not know. An embedder that
// talks to a provider itself names its tools with toolsurface (ToolName or
// a Router) and shapes them here:
//
//	tools := []toolsurface.Tool{{Name: name, Description: t.Description, InputSchema: t.InputSchema}}
//	defs, err := shape.Tools(shape.Anthropic, tools) // one JSON object per tool
//
// Tools caps each description and cleans each schema with Schema, which
// keeps what the model needs to know and drops or rewrites what the
// provider refuses (for Gemini's OpenAPI subset it inlines $refs, makes
// type lists nullable and moves formats and bounds into the description).
// ParseProvider reads a provider's name as a user types it.
//
// The package is pure: it never modifies its input and never does I/O.
package shape
