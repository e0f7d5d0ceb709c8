package policy

import "strings"

// ExactRule returns the allow rule that names req's tool exactly and no
// other — mcp__<server>__<tool>, spelled with the server's and the tool's
// own names — for a person's "always" answer to write. When the tool's own
// name cannot be written in a rule (it holds characters rules do not
// take), it is the name the model sees (req.Tool), which rules also match.
// It is "" when no rule can name the tool.
func ExactRule(req Request) string {
	var candidates []string
	if req.Server != "" && req.ToolName != "" {
		candidates = append(candidates, mcpPrefix+req.Server+"__"+req.ToolName)
	}
	if req.Tool != "" {
		candidates = append(candidates, req.Tool)
	}
	for _, c := range candidates {
		p, err := ParseRule(c)
		if err == nil && p.NamesTool() && !p.HasArgs() && p.MatchName(req) {
			return c
		}
	}
	return ""
}

// CheckRule says why text, put in the list named list, would not take
// effect by the rule grammar (see the package doc) — it is malformed (a bad argument
// condition), matches nothing (mcp__git*, mcp__github__get_*, a bare *, a
// rule not about MCP tools), or is mcp__* in allow — and what to write
// instead; both "" when it is a rule that can take effect. Commands that
// write rules refuse such text instead of writing it.
func CheckRule(list Action, text string) (problem, fix string) {
	switch list {
	case Allow, Ask, Deny:
	default:
		return "there is no permissions list " + string(list), "use allow, ask or deny"
	}
	if strings.TrimSpace(text) != text {
		return "the rule has blanks around it", "write it without leading or trailing blanks"
	}
	r := NewRule(list, text, Source{Scope: ScopeUser})
	if msg := r.Problem(); msg != "" {
		return msg, ruleFix(r)
	}
	return "", ""
}
