package host

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCompletions caps the values one completion returns, as MCP does.
const maxCompletions = 100

// PromptArgRef is the completion reference of a prompt's arguments.
func PromptArgRef(prompt string) *mcp.CompleteReference {
	return &mcp.CompleteReference{Type: "ref/prompt", Name: prompt}
}

// ResourceTemplateRef is the completion reference of a resource
// template's variables.
func ResourceTemplateRef(uriTemplate string) *mcp.CompleteReference {
	return &mcp.CompleteReference{Type: "ref/resource", URI: uriTemplate}
}

// Complete asks a server to complete one argument (completion/complete):
// arg of the prompt or resource template ref, as typed so far (partial),
// with the arguments already chosen (given, may be nil) as context. A
// server that does not declare the completions capability yields no values
// and no error, so callers can always offer whatever comes back. At most
// 100 values are returned; HasMore says the server had more. A value
// holding a secret value Switchboard gave a server is left out, and such
// values are replaced in the server's error.
func (h *Host) Complete(ctx context.Context, serverName string, ref *mcp.CompleteReference, arg, partial string, given map[string]string) (*mcp.CompletionResultDetails, error) {
	if ref == nil || arg == "" {
		return nil, fmt.Errorf("complete: a reference and an argument name are required")
	}
	s, c, err := h.liveServer(ctx, serverName)
	if err != nil {
		return nil, err
	}
	if res := c.session.InitializeResult(); res == nil || res.Capabilities == nil || res.Capabilities.Completions == nil {
		return &mcp.CompletionResultDetails{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: partial}}
	if len(given) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: given}
	}
	res, err := c.session.Complete(ctx, params)
	if err != nil {
		return nil, h.secrets.Error(fmt.Errorf("%s: completing %s: %w", serverName, arg, err))
	}
	out := res.Completion
	// A value is sent back as an argument's: one holding a secret value
	// Switchboard gave a server is left out, as a tool so named is
	// (secretnames.go).
	if slices.ContainsFunc(out.Values, func(v string) bool { return h.holdsSecret(v) }) {
		kept := make([]string, 0, len(out.Values))
		for _, v := range out.Values {
			if !h.holdsSecret(v) {
				kept = append(kept, v)
			}
		}
		h.log.Warn("completion values not served: they hold a secret value Switchboard gave a server", "server", serverName,
			"count", len(out.Values)-len(kept))
		out.Values = kept
	}
	if len(out.Values) > maxCompletions {
		out.Values, out.HasMore = out.Values[:maxCompletions], true
	}
	return &out, nil
}
