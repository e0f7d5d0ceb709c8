package host

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// UnknownToolError is the error of a call (or lookup) of a tool name that
// no configured server offers. It unwraps to ErrUnknownTool. Its message
// states the fact only; what a person should run next is the embedder's
// to say (the CLI points at `switchboard tools`).
type UnknownToolError struct {
	// Name is the tool name as called.
	Name string
	// Server is the configured server the name points at, when there is
	// one and it lists no such tool; "" when no configured server matches
	// the name.
	Server string
}

func (e *UnknownToolError) Error() string {
	switch {
	case e.Server != "":
		return fmt.Sprintf("%v %q: server %s has no such tool", ErrUnknownTool, e.Name, e.Server)
	case isNamespaced(e.Name):
		return fmt.Sprintf("%v %q: no configured server matches", ErrUnknownTool, e.Name)
	}
	return fmt.Sprintf("%v %q: MCP tool names look like mcp__<server>__<tool>", ErrUnknownTool, e.Name)
}

func (e *UnknownToolError) Unwrap() error { return ErrUnknownTool }

func isNamespaced(name string) bool {
	_, _, ok := toolsurface.ParseToolName(name)
	return ok
}
