package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/policy"
)

// ErrCannotAsk is returned by [Asker] when the calling client cannot be
// asked (it declared no elicitation support, or the call did not come
// through a gateway); host.PolicyPermit then denies the call with the
// message naming the rule to add (an ask with nobody to ask is a deny).
var ErrCannotAsk = errors.New("the calling client does not support elicitation")

// errAsking is what the Asker returns while the question is out: the
// gateway answers the call with the question instead of a denial, and the
// host does not log the call as refused (host.ErrAskPending).
var errAsking = fmt.Errorf("waiting for the client's answer: %w", host.ErrAskPending)

// Answers a client may give to a permission question, as the elicitation's
// "decision" field holds them.
const (
	DecisionOnce    = "once"
	DecisionSession = "session"
	// DecisionAlways writes the tool's exact allow rule: for one of the
	// team's principals to its entry of the auth file, else with
	// Asker.Rules (offered only where it can be written and a rule can
	// help).
	DecisionAlways = "always"
	DecisionDeny   = "deny"
)

// permissionInput is the id of the permission question among a call's
// input requests.
const permissionInput = "switchboard_permission"

// Asker is the host.Asker of a gateway: it puts the permission question of
// a call to the very client that made it, as an MCP elicitation ("Allow
// mcp__x__y with {…}? once / for this session / always / deny"), with secret
// arguments redacted. Pass it in host.PermitOptions.Asker of the host the
// gateway serves.
//
// The question travels as the call's input request (multi round-trip,
// SEP-2322): a client on protocol 2026-07-28 answers it and sends the call
// again; for older clients the SDK sends elicitation/create and calls the
// gateway again with the answer. Either way the call is decided again with
// the answer, so a rule changed meanwhile still wins.
//
// "session" allows the tool for the asking client's MCP session only. It is
// not offered to a stateless HTTP request without a session ID (a client on
// protocol 2026-07-28, which has no sessions), where it would mean once.
// "always" writes the tool's exact allow rule (policy.ExactRule), and the
// question says where: for a principal with a key of the gateway's auth
// file or an access token, to that principal's entry of the auth file
// (when the call is decided by [NewPermit] with an [Auth] that has a
// file), so that it holds for that principal only; for any other caller,
// with Rules (when set), to settings that apply to every caller.
// Its zero value is ready to use and it is safe for concurrent use.
type Asker struct {
	// Rules, if set, writes the allow rule of an "always" answer of a
	// caller that is not one of the team's principals (docs/security.md,
	// Asking, and nobody to ask). If nil, "always" is not offered to
	// such callers.
	Rules host.RuleWriter
	// Console, if set, is asked when the calling client cannot be (no
	// elicitation, or a call not made through the gateway): the question
	// waits in a console (internal/console's Asks) for a person, within
	// the call's context (console_ask.go). If nil, such a call is refused.
	Console host.Asker
	// Link, if set with Console, is the address of a question's page in
	// the console: a client that takes URL-mode elicitation but not forms
	// is sent it, then its call waits for the answer given there.
	Link func(id string) string

	mu      sync.Mutex
	allowed map[*mcp.ServerSession]map[string]bool
}

// askState carries one call's client, capabilities and answers from the
// gateway's tool handler to the Asker, and the question back.
type askState struct {
	session *mcp.ServerSession
	// sessionless is set for a stateless HTTP request, which is a
	// session of its own: "for this session" is not offered to it.
	sessionless bool
	// legacyStateless is set for a stateless request of a client on a
	// protocol before 2026-07-28, which cannot be asked anything.
	legacyStateless bool
	// caps gives the client's capabilities for this call (the request).
	// They are read only when a question comes up: the SDK decodes them
	// afresh from the request's _meta each time, which most calls never
	// need. (The request itself, not its method value, which cost an
	// allocation a call.)
	caps      clientCaps
	responses mcp.InputResponseMap
	state     string // RequestState echoed by the client

	question *mcp.ElicitParams // set by the Asker when it needs an answer
	key      string            // the question's RequestState
	hint     string            // set by the Asker when it could not ask: what would help

	// held is set for a client on protocol 2026-07-28: an upstream
	// server's question goes back to the client in the call's result.
	held *heldCall
}

type askKey struct{}

// clientCaps is a request that carries the client's capabilities.
type clientCaps interface {
	ClientCapabilities() *mcp.ClientCapabilities
}

// canElicit reports whether the client can answer an elicitation.
func (st *askState) canElicit() bool {
	if st.caps == nil {
		return false
	}
	c := st.caps.ClientCapabilities()
	return c != nil && c.Elicitation != nil
}

// declaresElicitation reports whether the client making req declared
// elicitation, as req.ClientCapabilities() reads it, or may have: on
// protocol 2026-07-28 from the request's _meta, which the SDK encodes and
// decodes again each time it is asked, so the map is looked at here. A
// key that the SDK's decoding could take for "elicitation" (any case)
// counts; where the map does not decode, the SDK reads the session's
// capabilities instead, so those count too.
func declaresElicitation(req *mcp.CallToolRequest) bool {
	caps, ok := req.Params.Meta[metaClientCapabilities].(map[string]any)
	if !ok {
		c := req.ClientCapabilities()
		return c != nil && c.Elicitation != nil
	}
	for k := range caps {
		if strings.EqualFold(k, "elicitation") {
			return true
		}
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil {
			return true
		}
	}
	return false
}

// canElicitMode reports whether the client declared support for an
// elicitation of the given mode ("" is form). A client that names neither
// mode takes forms.
func (st *askState) canElicitMode(mode string) bool {
	if st.caps == nil {
		return false
	}
	c := st.caps.ClientCapabilities()
	if c == nil || c.Elicitation == nil {
		return false
	}
	e := c.Elicitation
	if mode == "url" {
		return e.URL != nil
	}
	return e.Form != nil || e.URL == nil
}

func askFrom(ctx context.Context) *askState {
	st, _ := ctx.Value(askKey{}).(*askState)
	return st
}

// AskPermission implements host.Asker. A client that declines, cancels or
// answers anything but once, session or an offered always counts as deny.
func (a *Asker) AskPermission(ctx context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	st := askFrom(ctx)
	if st == nil {
		return a.inConsole(ctx, req, d)
	}
	rec := recordFrom(ctx)
	if a.sessionAllows(st.session, req.Tool) {
		rec.answered("session-grant")
		return host.AnswerOnce, nil
	}
	key := questionKey(req)
	if a.byLink(st) {
		return a.askByLink(ctx, st, req, d, key)
	}
	if r, ok := st.responses[permissionInput].(*mcp.ElicitResult); ok && st.state == key {
		if r.Action != "accept" {
			rec.answered(r.Action)
			return host.AnswerDeny, nil
		}
		answer, _ := r.Content["decision"].(string)
		rec.answered(answer)
		switch answer {
		case DecisionOnce:
			return host.AnswerOnce, nil
		case DecisionSession:
			if st.sessionless {
				return host.AnswerDeny, nil // not offered
			}
			a.allow(st.session, req.Tool)
			return host.AnswerOnce, nil
		case DecisionAlways:
			rule, _, write := a.always(ctx, req, d)
			if rule == "" {
				return host.AnswerDeny, nil // not offered
			}
			// The person said yes: a write that fails still lets the
			// tool run for this session.
			if write(rule) != nil {
				a.allow(st.session, req.Tool)
			}
			return host.AnswerOnce, nil
		}
		return host.AnswerDeny, nil
	}
	if st.legacyStateless {
		// A question to a client before 2026-07-28 is an
		// elicitation/create request, which a stateless request has
		// nowhere to send.
		st.hint = "this gateway runs --stateless, where a client on a protocol before 2026-07-28 cannot be asked; " +
			"serve with --session-key-file too (it gives such clients sessions), or allow the tool with a rule"
		return host.AnswerDeny, ErrCannotAsk
	}
	if !st.canElicit() {
		return a.inConsole(ctx, req, d)
	}
	rule, where, _ := a.always(ctx, req, d)
	st.question, st.key = permissionQuestion(req, d, rule, where, !st.sessionless), key
	rec.question()
	return host.AnswerDeny, errAsking
}

// AlwaysFor is what an "always" answer given elsewhere (the console,
// console.Asks.Always) does for the question of d in a call through the
// gateway: where it writes the tool's exact allow rule, and the write —
// the same as an answer by elicitation. write is nil when "always" is
// not offered.
func (a *Asker) AlwaysFor(ctx context.Context, req host.PermitRequest, d policy.Decision) (where string, write func() error) {
	rule, where, w := a.always(ctx, req, d)
	if rule == "" || w == nil {
		return "", nil
	}
	return where, func() error { return w(rule) }
}

// always is what "always" does for the question of d: the rule it
// writes, where (said in the question) and the write. rule is "" when
// "always" is not offered: when no allow rule would let the call run
// without asking (an ask rule decided, or allow rules are off: no
// d.Suggest), and as below.
//
// A principal of the team (a key of the auth file, or an access token)
// gets the rule in its own entry of the auth file whose rules decided the
// call ([NewPermit]), which is loaded again at once ([Auth.AllowFor]): it
// applies to that principal only. Without such a file, or for a name an
// entry cannot have, it is not offered. Any other caller (the shared
// token, a stdio client) gets it in Rules, if set — settings that apply
// to every caller — and a session grant until the host reloads them.
func (a *Asker) always(ctx context.Context, req host.PermitRequest, d policy.Decision) (rule, where string, write func(string) error) {
	if d.Suggest == "" {
		return "", "", nil
	}
	exact := policy.ExactRule(policy.Request{Tool: req.Tool, Server: req.Server, ToolName: req.ToolName})
	if exact == "" {
		return "", "", nil
	}
	if p := recordFrom(ctx).who(); p.Keyed() {
		au := permitAuthFrom(ctx)
		if !au.CanAllowFor(p) {
			return "", "", nil
		}
		return exact, au.AllowWhere(p.Name), func(r string) error { return au.AllowFor(p.Name, r) }
	}
	if a.Rules == nil {
		return "", "", nil
	}
	st := askFrom(ctx)
	return exact, a.Rules.Where(), func(r string) error {
		// The host reads settings again only when its watcher sees the
		// change: the session grant covers the calls until then.
		if st != nil {
			a.allow(st.session, req.Tool)
		}
		_, err := a.Rules.WriteAllow(r)
		return err
	}
}

func (a *Asker) sessionAllows(ss *mcp.ServerSession, tool string) bool {
	if ss == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.allowed[ss][tool]
}

func (a *Asker) allow(ss *mcp.ServerSession, tool string) {
	if ss == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.allowed == nil {
		a.allowed = map[*mcp.ServerSession]map[string]bool{}
	}
	if a.allowed[ss] == nil {
		a.allowed[ss] = map[string]bool{}
		go func() { // forget the session's answers when it ends
			ss.Wait()
			a.mu.Lock()
			delete(a.allowed, ss)
			a.mu.Unlock()
		}()
	}
	a.allowed[ss][tool] = true
}

// questionKey ties an answer to the call it was asked for: the same tool
// with the same arguments.
func questionKey(req host.PermitRequest) string {
	b, _ := json.Marshal(req.Args) // map keys are sorted
	sum := sha256.Sum256(append([]byte(req.Tool+"\x00"), b...))
	return permissionStatePrefix + hex.EncodeToString(sum[:16])
}

// permissionStatePrefix begins the requestState of a permission question.
const permissionStatePrefix = "permission:"

// PermissionQuestion is the form elicitation a gateway sends for a call
// whose decision is ask: a message naming the tool, its arguments (secrets
// redacted, cut to 400 characters) and why it is asked, and one required
// enum field "decision": once, session or deny.
func PermissionQuestion(req host.PermitRequest, d policy.Decision) *mcp.ElicitParams {
	return permissionQuestion(req, d, "", "", true)
}

// permissionQuestion is PermissionQuestion, with "always" offered when
// rule is set (it writes rule to where) and "session" only when session is
// set.
func permissionQuestion(req host.PermitRequest, d policy.Decision, rule, where string, session bool) *mcp.ElicitParams {
	msg := fmt.Sprintf("Allow %s with %s? (%s)", req.Tool, redact.ArgsSummary(req.Args, questionArgsMax), d.Reason)
	desc := []string{"once: this call only"}
	enum := []any{DecisionOnce}
	names := []any{"Allow once"}
	if session {
		desc = append(desc, "session: this tool for the rest of this session")
		enum, names = append(enum, DecisionSession), append(names, "Allow for this session")
	}
	if rule != "" {
		always := fmt.Sprintf("always: write the allow rule %q to %s, so that it is not asked again", rule, where)
		msg += " — " + always
		desc = append(desc, always)
		enum, names = append(enum, DecisionAlways), append(names, "Always allow (writes "+rule+" to "+where+")")
	}
	desc = append(desc, "deny: refuse")
	enum, names = append(enum, DecisionDeny), append(names, "Deny")
	return decisionForm(msg, "Allow this call?", strings.Join(desc, "; "), enum, names)
}

// decisionForm is a form elicitation of the gateway's own: message, and
// one required enum field "decision" with its title, description, values
// and their names.
func decisionForm(msg, title, desc string, enum, names []any) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type":        "string",
					"title":       title,
					"description": desc,
					"enum":        enum,
					"enumNames":   names,
				},
			},
			"required": []any{"decision"},
		},
	}
}

// Prompter is the host.Prompter of a gateway: an elicitation that an
// upstream server sends during a call is put to the client that made the
// call, when that client declared elicitation support (for the question's
// mode). A client on a protocol before 2026-07-28 gets it as an
// elicitation/create request, as the server sent it. A client on
// 2026-07-28 gets it in the call's result, as an input request whose
// message names the server ("[github] …"), with a requestState that holds
// the upstream call until the client calls again with the answer (or
// Options.ElicitationTimeout passes; then the upstream call is cancelled).
// Otherwise, or when the request does not belong to a call through the
// gateway, it is declined, as elicitation is whenever nobody can answer. Its
// zero value is ready to use.
type Prompter struct{}

// Elicit implements host.Prompter.
func (Prompter) Elicit(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	st := askFrom(ctx)
	if st != nil && st.held != nil {
		if params == nil || !st.canElicitMode(params.Mode) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return st.held.elicit(ctx, server, params)
	}
	if st == nil || st.session == nil || !st.canElicit() {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	// The server's question, every line under its name, as on the
	// relayed path: none of it can pass for the gateway's own question.
	res, err := askClient(ctx, st.session, attributedParams(server, params))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return res, nil
}

// questionArgsMax bounds the arguments shown in a permission question.
const questionArgsMax = 400
