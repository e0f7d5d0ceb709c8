package switchboard

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// Result is a tool call's result as the model gets it.
type Result struct {
	// Text is what goes back to the model: the result inside its
	// untrusted-data envelope, or, when it is too large, the guide to the
	// file holding it (or its truncation).
	Text string
	// IsError is the server's isError.
	IsError bool
	// Raw is the server's result, unwrapped: for the program, never for
	// the model.
	Raw *mcp.CallToolResult
	// Name is the tool's rule name, mcp__<server>__<tool>, as permission
	// rules and audit lines name it; Server and Tool are the server's own
	// names, as the envelope shows them ("switchboard" and the name for
	// the host's own tool_search).
	Name, Server, Tool string
	// Output is how the result was presented: its estimated size, and
	// the file it was spilled to or why it was truncated instead.
	Output toolsurface.Output
}

// CallOptions adjust one call ([Switchboard.CallWith]). A nil
// *CallOptions uses every default.
type CallOptions struct {
	// Progress, if set, receives the server's progress notifications of
	// this call (on the host's goroutines; it must not block).
	Progress host.ProgressFunc
	// Output bounds the result in place of [Options.Output].
	Output *toolsurface.OutputOptions
	// Transform, if set, may change the server's result before it is
	// presented (the gateway renames the tools tool_search found).
	Transform func(*mcp.CallToolResult) *mcp.CallToolResult
	// ToolChanges, if set, is asked about the change that holds the
	// called tool (tool pinning) in place of the Prompter: the gateway
	// puts it to the client that made the call. Its answer is taken as
	// the Prompter's would be: only (true, nil) accepts, and the tool is
	// then pinned as [Switchboard.AcceptTools] pins it. It does not
	// change the default of "toolChanges", which the Prompter decides.
	ToolChanges ToolChangeAsker
}

// Call runs the tool named mcp__<server>__<tool> (as Tools names it) with
// args (a map, a struct, or the model's JSON as json.RawMessage, []byte or
// string; a JSON object, or null), after the permission rules allow it
// (asking the Prompter when they say to ask), and returns its result
// enveloped and bounded. A name no server offers is a
// *host.UnknownToolError; a tool a tool filter (or a view's profile)
// hides, a *host.FilteredError (host.ErrFiltered); a held server's tool
// is a *NotApprovedError; a denied call wraps host.ErrDenied; a tool held by tool pinning wraps host.ErrToolHeld (a
// Prompter that implements ToolChangeAsker, or CallOptions.ToolChanges, is
// asked first). A call or result refused by the server's "secrets" mode or
// a call hook is a Result with IsError set whose Text says why
// (host.Blocked tells it apart).
func (sb *Switchboard) Call(ctx context.Context, name string, args any) (*Result, error) {
	return sb.CallWith(ctx, name, args, nil)
}

// CallWith is Call with options. It is the one path of every call and its
// presentation: the CLI's `switchboard call` and the gateway make theirs
// through it, so a model gets the same envelope, the same spill decision
// and the same names from each.
func (sb *Switchboard) CallWith(ctx context.Context, name string, args any, opts *CallOptions) (*Result, error) {
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	if err := sb.viewClosed(); err != nil {
		return nil, err // the host checks its own Close
	}
	if o.Progress != nil {
		ctx = host.WithProgress(ctx, o.Progress)
	}
	res, err := sb.host.Call(ctx, name, args)
	if err != nil {
		if he := (*host.HeldToolError)(nil); errors.As(err, &he) && sb.askHeld(ctx, he, o.ToolChanges) {
			res, err = sb.host.Call(ctx, name, args) // accepted: the call goes on
		}
	}
	if err != nil {
		return nil, sb.heldError(name, err)
	}
	if o.Transform != nil {
		res = o.Transform(res)
	}
	return sb.present(name, res, o.Output), nil
}

// Present makes res, a result of the tool called name obtained outside
// CallWith (the gateway's per-member connections), what the model gets,
// exactly as CallWith presents its own; opts' Output and Transform apply.
func (sb *Switchboard) Present(name string, res *mcp.CallToolResult, opts *CallOptions) *Result {
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	if o.Transform != nil {
		res = o.Transform(res)
	}
	return sb.present(name, res, o.Output)
}

// present makes the result of the tool called name what the model gets,
// bounded by out (nil: [Options.Output]).
func (sb *Switchboard) present(name string, res *mcp.CallToolResult, out *toolsurface.OutputOptions) *Result {
	r := &Result{Name: name, IsError: res.IsError, Raw: res}
	r.Server, r.Tool = sb.toolNames(name)
	if out == nil {
		out = &sb.output
	}
	r.Output = toolsurface.Present(r.Server, r.Tool, res, out)
	r.Text = r.Output.Text
	return r
}

// hostToolServer is the envelope's server of the host's own tools
// (tool_search).
const hostToolServer = "switchboard"

// toolNames are the server's own names of the tool called name, for the
// envelope: the host's route, which keeps "my.srv" and a name cut to 64
// as the server wrote them; else the parts of the name.
func (sb *Switchboard) toolNames(name string) (server, tool string) {
	if server, tool, ok := sb.host.ToolOf(name); ok {
		return server, tool
	}
	if server, tool, ok := toolsurface.ParseToolName(name); ok {
		return server, tool
	}
	return hostToolServer, name
}

// heldError is err, or the *NotApprovedError of the server launch trust
// holds when that is why the tool called name cannot be reached.
func (sb *Switchboard) heldError(name string, err error) error {
	if !errors.Is(err, host.ErrUnknownTool) && !errors.Is(err, host.ErrNotConnected) {
		return err
	}
	for _, held := range Held(sb.host.Status()) {
		// The host's own rule for the servers a name can belong to.
		if strings.HasPrefix(name, toolsurface.Prefix+toolsurface.SanitizePart(held.Server)+toolsurface.Separator) {
			return held
		}
	}
	return err
}
