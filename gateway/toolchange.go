package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// The asks about a tool that tool pinning holds (docs/security.md, Tool
// pinning): a client that calls it is asked, as it is asked a permission
// question, whether to accept the new definition.

// Answers a client may give to a tool-change question, as its
// "decision" field holds them.
const (
	// ToolChangeAccept pins the tool's new definition for the workspace,
	// as `switchboard tools accept SERVER TOOL` does; the call goes on.
	ToolChangeAccept = "accept"
	// ToolChangeHold keeps the tool held; the call is refused.
	ToolChangeHold = "hold"
)

// What the audit line says of a held tool's call (AuditEntry.ToolChange),
// besides the answers above and the client's decline and cancel.
const toolChangeNotAsked = "not_asked"

// toolChangeDiffMax bounds the word diff shown in a tool-change question,
// in characters: `switchboard tools diff` has all of it.
const toolChangeDiffMax = 2000

// AcceptToolChange implements switchboard.ToolChangeAsker: the change
// that holds the tool a client called is put to that very client, as a
// form elicitation ([ToolChangeQuestion]), when the call came through a
// gateway and the client declared elicitation support. Only the answer
// "accept" accepts; a decline, a cancel or "hold" keeps the tool held. A
// client on protocol 2026-07-28 gets the question in the call's result
// and answers it with its retry (as it answers an upstream server's
// question); an older client gets elicitation/create during the call.
//
// A caller that is one of the team's principals (a key of the auth file,
// an access token) is not asked, since tool pins hold for every caller of
// the gateway: the person who runs it accepts the change. Nor is a
// client that cannot be asked, nor about a change longer than a question
// shows (ToolChangeQuestion cuts it: an accept would pin what was cut
// unseen); for all of these it returns [ErrCannotAsk], and the call is
// refused naming `switchboard tools diff` and `switchboard tools accept`.
func (a *Asker) AcceptToolChange(ctx context.Context, c host.ToolChange) (bool, error) {
	st := askFrom(ctx)
	rec := recordFrom(ctx)
	if st == nil {
		return false, ErrCannotAsk
	}
	if rec.who().Keyed() {
		st.hint = "tool pins hold for every caller of this gateway, so only the person who runs it accepts a change"
		rec.toolChanged(toolChangeNotAsked)
		return false, ErrCannotAsk
	}
	if _, cut := toolChangeLines(c); cut {
		// What is cut off is what an accept would pin unseen.
		st.hint = "the change is longer than a question shows"
		rec.toolChanged(toolChangeNotAsked)
		return false, ErrCannotAsk
	}
	params := ToolChangeQuestion(c)
	var (
		res *mcp.ElicitResult
		err error
	)
	switch {
	case st.held != nil && st.canElicitMode(""):
		res, err = st.held.put(ctx, c.Server, params)
	case st.held == nil && st.session != nil && !st.legacyStateless && st.canElicitMode(""):
		res, err = askClient(ctx, st.session, params)
	default:
		if st.legacyStateless {
			st.hint = "this gateway runs --stateless, where a client on a protocol before 2026-07-28 cannot be asked"
		}
		rec.toolChanged(toolChangeNotAsked)
		return false, ErrCannotAsk
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		rec.toolChanged("decline")
		return false, nil
	}
	// What the audit line says is one of a few words, whatever the
	// client sent.
	var answer string
	switch res.Action {
	case "accept":
		if answer, _ = res.Content["decision"].(string); answer != ToolChangeAccept {
			answer = ToolChangeHold
		}
	case "cancel":
		answer = "cancel"
	default:
		answer = "decline"
	}
	rec.toolChanged(answer)
	return answer == ToolChangeAccept, nil
}

// ToolChangeQuestion is the form elicitation a gateway sends about a held
// tool a client called: what changed, field by field, as the word diff of
// `switchboard tools diff` ([-removed-] {+added+}, cut to 2,000
// characters), every line of it marked as the server's own text
// ("[github] description: …") with invisible and control characters
// made visible; and one required enum field "decision": accept or hold.
func ToolChangeQuestion(c host.ToolChange) *mcp.ElicitParams {
	server, tool := termsafe.Line(c.Server), termsafe.Line(c.Tool)
	what := "changed since it was pinned"
	if !c.PinnedAt.IsZero() {
		what += " on " + c.PinnedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	if c.Kind == host.ChangeAdded {
		what = "is new since the server's tools were pinned"
	}
	lines, cut := toolChangeLines(c)
	if cut {
		lines = append(lines, "… (the rest: switchboard tools diff "+server+")")
	}
	msg := fmt.Sprintf("The tool %s of server %s %s, and is held: the model does not get it until it is accepted.\n"+
		"A tool's definition is what the model reads: a changed description can tell it to do anything. "+
		"Accept it only if you trust this. The lines below are the server's own text ([-removed-] {+added+}):\n%s\n"+
		"Accept pins the new definition for this workspace, as `%s` does, and the call goes on; "+
		"hold refuses this call.", tool, server, what, attributed(server, strings.Join(lines, "\n")), termsafe.Line(host.AcceptCommand(server, c.Tool)))
	return decisionForm(msg, "Accept the new definition of "+termsafe.Line(c.Name)+"?",
		"accept: pin the new definition for this workspace and make the call; hold: keep the tool held and refuse the call",
		[]any{ToolChangeAccept, ToolChangeHold}, []any{"Accept the new definition", "Keep it held"})
}

// toolChangeLines are the lines of c's word diff that fit in a question
// (toolChangeDiffMax), and whether some did not.
func toolChangeLines(c host.ToolChange) ([]string, bool) {
	lines := make([]string, 0, len(c.Changes))
	n := 0
	for _, d := range c.Changes {
		l := termsafe.Line(d.Field) + ": " + termsafe.Line(d.Words)
		if n+len(l) > toolChangeDiffMax {
			return lines, true
		}
		n += len(l)
		lines = append(lines, l)
	}
	return lines, false
}

// heldRoutes are the routes of the tools that tool pinning holds, by the
// name each is served under once accepted: a call of one (a client that
// knew the tool before its change) reaches the host, which holds it or
// asks, instead of the SDK's unknown tool. A name that a served tool has
// is not one of them.
func (g *Gateway) heldRoutes(served map[string]toolRoute, reserved []string) map[string]toolRoute {
	var held []host.ToolChange
	for _, c := range g.sb.ToolChanges() {
		if c.State == host.ChangeHeld {
			held = append(held, c)
		}
	}
	// A pin store that cannot be used holds every tool of the servers it
	// pins, with no change to accept: a call still reaches the host, which
	// says why and what fixes it, instead of the SDK's unknown tool.
	for _, st := range g.sb.Status() {
		if st.PinError == "" {
			continue
		}
		for _, t := range st.Held {
			held = append(held, host.ToolChange{Server: st.Name, Tool: t, Name: toolsurface.ToolName(st.Name, t), State: host.ChangeHeld})
		}
	}
	if len(held) == 0 {
		return nil
	}
	tools := make([]toolsurface.ServedTool, len(held))
	for i, c := range held {
		tools[i] = toolsurface.ServedTool{Server: c.Server, Tool: c.Tool}
	}
	index, _ := toolsurface.ServedRoutes(tools, g.opts.NameBudget, reserved)
	out := make(map[string]toolRoute, len(index))
	for name, i := range index {
		if _, ok := served[name]; !ok {
			out[name] = toolRoute{server: held[i].Server, tool: held[i].Tool, hostName: held[i].Name}
		}
	}
	return out
}

// routeHeld is the receiving middleware that routes a call of a held
// tool, which the gateway does not serve (the SDK would call it unknown),
// to the gateway's call path: the host holds the call, or the client is
// asked (Options.ToolChanges). It is the innermost of the gateway's, so
// the audit line, cancellation and tasks cover such a call as any other.
func (g *Gateway) routeHeld(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		creq, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !g.anyHeld.Load() || !ok || creq.Params == nil || !g.callRoute(ctx, creq.Params.Name).held {
			return next(ctx, method, req)
		}
		res, err := g.callTool(ctx, creq)
		if err == nil && res != nil && len(res.InputRequests) > 0 && !multiRoundTrip(creq.Session) {
			// Accepted, and now a permission rule asks: the SDK puts
			// such a question to a client before 2026-07-28 only on a
			// served tool's way, inside this middleware. Served now, the
			// call goes that way; nothing ran yet.
			if serr := g.Sync(ctx); serr == nil {
				return next(ctx, method, req)
			}
		}
		return res, err
	}
}

// heldPrompt is the receiving middleware that answers a prompts/get of a
// prompt held by pinning, which the gateway does not serve (the SDK would
// call it unknown): the client that knew it is told why, and how the user
// accepts the change.
func (g *Gateway) heldPrompt(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		preq, ok := req.(*mcp.GetPromptRequest)
		if method != "prompts/get" || !ok || preq.Params == nil {
			return next(ctx, method, req)
		}
		g.mu.Lock()
		_, served := g.prompts[preq.Params.Name]
		g.mu.Unlock()
		if !served {
			for _, c := range g.h.PromptChanges() {
				if c.State == host.ChangeHeld && PromptName(c.Server, c.Prompt) == preq.Params.Name {
					he := &host.HeldPromptError{Server: c.Server, Prompt: c.Prompt, Reason: c.Reason}
					return nil, fmt.Errorf("%w; %s", he, he.Hint())
				}
			}
		}
		return next(ctx, method, req)
	}
}

// toolChanged notes what became of the change that holds the called tool:
// the person's answer (accept, hold, decline, cancel), or not_asked.
func (r *callRecord) toolChanged(answer string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if answer != toolChangeNotAsked {
		r.asked = true
	}
	r.toolChange = answer
	r.mu.Unlock()
}

// heldRefused notes a held tool's call refused without a question (no
// ToolChanges, or nothing asked it).
func (r *callRecord) heldRefused() {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.toolChange == "" {
		r.toolChange = toolChangeNotAsked
	}
	r.mu.Unlock()
}
