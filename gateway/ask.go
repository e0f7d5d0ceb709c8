package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/policy"
)

// ErrCannotAsk is returned by [Asker] when the calling client cannot be
// asked (it declared no elicitation support, or the call did not come
// through a gateway); host.PolicyPermit then denies the call with the
// message naming the rule to add (SPEC §3: ask with nobody to ask is deny).
var ErrCannotAsk = errors.New("the calling client does not support elicitation")

// Answers a client may give to a permission question, as the elicitation's
// "decision" field holds them.
const (
	DecisionOnce    = "once"
	DecisionSession = "session"
	DecisionDeny    = "deny"
)

// Asker is the host.Asker of a gateway: it puts the permission question of
// a call to the very client that made it, as an MCP elicitation ("Allow
// mcp__x__y with {…}? once / for this session / deny"), with secret
// arguments redacted. Pass it in host.PermitOptions.Asker of the host the
// gateway serves. Its zero value is ready to use and it is safe for
// concurrent use.
type Asker struct{}

// AskPermission implements host.Asker. A client that declines, cancels or
// answers anything but once/session counts as deny.
func (Asker) AskPermission(ctx context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	ss := Caller(ctx)
	if ss == nil || !canElicit(ss) {
		return host.AnswerDeny, ErrCannotAsk
	}
	res, err := ss.Elicit(ctx, PermissionQuestion(req, d))
	if err != nil {
		return host.AnswerDeny, fmt.Errorf("asking the client: %w", err)
	}
	if res.Action != "accept" {
		return host.AnswerDeny, nil
	}
	switch res.Content["decision"] {
	case DecisionOnce:
		return host.AnswerOnce, nil
	case DecisionSession:
		return host.AnswerAlways, nil
	}
	return host.AnswerDeny, nil
}

func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// PermissionQuestion is the form elicitation a gateway sends for a call
// whose decision is ask: a message naming the tool, its arguments (secrets
// redacted, cut to 400 characters) and why it is asked, and one required
// enum field "decision": once, session or deny.
func PermissionQuestion(req host.PermitRequest, d policy.Decision) *mcp.ElicitParams {
	msg := fmt.Sprintf("Allow %s with %s? (%s)", req.Tool, argsText(req.Args), d.Reason)
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type":        "string",
					"title":       "Allow this call?",
					"description": "once: this call only; session: this tool until the gateway restarts; deny: refuse",
					"enum":        []any{DecisionOnce, DecisionSession, DecisionDeny},
					"enumNames":   []any{"Allow once", "Allow for this session", "Deny"},
				},
			},
			"required": []any{"decision"},
		},
	}
}

// argsText renders arguments for a question, secrets redacted.
func argsText(args map[string]any) string {
	if len(args) == 0 {
		return "no arguments"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redact.Args(args)); err != nil {
		return "arguments that cannot be shown"
	}
	b := bytes.TrimSpace(buf.Bytes())
	const max = 400
	if r := []rune(string(b)); len(r) > max {
		return string(r[:max]) + "…"
	}
	return string(b)
}
