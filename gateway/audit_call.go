package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// callRecord is what the gateway learns about one tool call on its way —
// who made it, how it was decided, what the person answered — for the
// call's audit line and metrics. It travels in the call's context; a call
// that waits for a client's answer (a question in its result) keeps its
// record until the retry that carries the answer.
type callRecord struct {
	start     time.Time
	principal *Principal
	session   string // a digest of the client's session id
	name      string // the served tool name
	route     resolved
	args      json.RawMessage

	// report collects what the host did on the call's way to the model
	// (call hooks, deceptive text, secrets): ownReport, in the record's
	// own allocation.
	report    *host.CallReport
	ownReport host.CallReport

	mu       sync.Mutex
	decision string // allow, ask, deny, rate_limited; "" when no rule was consulted
	rule     *policy.Rule
	asked    bool
	answer   string
	// toolChange is what became of the change that holds the called
	// tool (toolChanged).
	toolChange string
	resumed    bool
	span       trace.Span // the call's server span, when tracing
	// credential is whose credential a call of a per-member server used
	// (member.go): a principal's name, "shared" or "none"; memberRedact,
	// for a principal's, scrubs the values its own host gave its servers.
	credential   string
	memberRedact func(string) string
}

type recordKey struct{}

func recordFrom(ctx context.Context) *callRecord {
	r, _ := ctx.Value(recordKey{}).(*callRecord)
	return r
}

// who is the call's principal; nil when it has none (or r is nil).
func (r *callRecord) who() *Principal {
	if r == nil {
		return nil
	}
	return r.principal
}

func (r *callRecord) decided(d policy.Decision) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decision, r.rule = string(d.Action), d.Rule
}

// question notes that the person is being asked.
func (r *callRecord) question() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.asked = true
	r.mu.Unlock()
}

// answered notes the person's answer (once, session, always, deny,
// decline, cancel), or "session-grant" for an earlier "session" answer
// that let the call run without asking.
func (r *callRecord) answered(answer string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if answer != "session-grant" {
		r.asked = true
	}
	r.answer = answer
	r.mu.Unlock()
}

// observing reports whether calls are recorded (for audit, metrics or
// principals' rules and limits).
func (g *Gateway) observing() bool {
	return g.opts.Auth != nil || g.opts.Audit != nil || g.opts.Metrics != nil || g.opts.Tracing != nil
}

// observe is the outermost middleware of tools/call when the gateway has
// principals, an audit log or metrics: it gives the call its record, takes
// the call from its principal's rate limit, and writes the audit line and
// metrics once the call is over.
func (g *Gateway) observe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		creq, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || creq.Params == nil {
			return next(ctx, method, req)
		}
		var rec *callRecord
		if st := creq.Params.RequestState; st != "" {
			rec = g.records.take(g.recordsKey(creq, st), creq.Params.Name)
		}
		if rec == nil {
			rec = &callRecord{start: time.Now(), name: creq.Params.Name, route: g.resolve(creq.Params.Name), args: creq.Params.Arguments}
			rec.report = &rec.ownReport
			if ex := creq.Extra; ex != nil {
				rec.principal = PrincipalFromTokenInfo(ex.TokenInfo)
			}
			if ss := creq.Session; g.opts.Audit != nil && ss != nil && ss.ID() != "" {
				// For the audit line alone: metrics and traces have no
				// use for the digest.
				sum := sha256.Sum256([]byte(ss.ID()))
				rec.session = hex.EncodeToString(sum[:8])
			}
			ctx, rec.span = g.opts.Tracing.startCall(ctx, creq, rec)
			server, tool := rec.route.hostNames()
			if err := g.opts.Auth.Limit(rec.principal, server, tool); err != nil {
				rec.decision = "rate_limited"
				res := g.refusal(rec.name, err.Error())
				g.finish(rec, res, nil)
				return res, nil
			}
		} else if rec.span != nil {
			// The retry of a call that asked: the same call, the same span.
			ctx = trace.ContextWithSpan(ctx, rec.span)
		}
		ctx = host.WithCallReport(context.WithValue(ctx, recordKey{}, rec), rec.report)
		res, err := next(ctx, method, req)
		if cr, ok := res.(*mcp.CallToolResult); ok && err == nil && cr != nil && len(cr.InputRequests) > 0 && cr.RequestState != "" {
			// A question went back to the client: the call goes on with
			// its retry.
			g.records.park(g.recordsKey(creq, cr.RequestState), rec, g.opts.ElicitationTimeout)
			return res, err
		}
		g.finish(rec, res, err)
		return res, err
	}
}

// finish writes the call's audit line and metrics.
func (g *Gateway) finish(rec *callRecord, res mcp.Result, err error) {
	dur := time.Since(rec.start)
	cr, _ := res.(*mcp.CallToolResult)
	server, tool := rec.route.hostNames()
	var out outcome
	out.duration = dur
	switch {
	case err != nil:
		out.err = err.Error()
	case cr == nil:
		out.err = "no result"
	default:
		out.isError = cr.IsError
		for _, c := range cr.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				out.size += len(tc.Text)
			}
		}
	}
	rec.mu.Lock()
	decision, rule, asked, answer, credential, memberRedact := rec.decision, rec.rule, rec.asked, rec.answer, rec.credential, rec.memberRedact
	toolChange := rec.toolChange
	rec.mu.Unlock()
	if g.opts.Metrics != nil {
		g.opts.Metrics.call(server, tool, decision, out)
	}
	endCall(rec.span, decision, out)
	if g.opts.Audit != nil {
		e := &AuditEntry{
			Time: rec.start.UTC(), Session: rec.session, Tool: rec.name, Server: server, ServerTool: tool,
			Credential: credential, Decision: decision, Asked: asked, Answer: answer, ToolChange: toolChange,
			DurationMS: float64(dur.Microseconds()) / 1000, ResultBytes: out.size, IsError: out.isError || out.err != "",
		}
		if h := rec.route.r.hostName; rec.route.ok && h != "" {
			// The rule name, as the host names the tool (a server "my.srv"
			// is my_srv in it, a long name is cut): what rules match.
			e.Tool = h
		}
		if p := rec.principal; p != nil {
			e.Principal, e.Groups = p.Name, p.Groups
		}
		if rule != nil {
			e.Rule, e.RuleSource = rule.Text, rule.Source.String()
		}
		notes := rec.report.Notes()
		e.Hooks, e.Secrets = notes.Hooks, notes.Secrets
		for _, f := range notes.Findings {
			e.Findings = append(e.Findings, f.String())
		}
		switch {
		case out.err != "":
			e.Error = out.err
		case refusedBy(notes) != "":
			e.Error = refusedBy(notes)
		case toolChange != "" && toolChange != ToolChangeAccept && out.isError:
			e.Error = "refused: the tool is held, its definition changed since it was pinned"
			if toolChange != toolChangeNotAsked {
				e.Error += "; the person answered " + toolChange
			}
		case decision == string(policy.Deny):
			e.Error = "refused by a deny rule"
		case decision == "rate_limited":
			e.Error = "refused: over a rate limit"
		case decision == string(policy.Ask) && out.isError && !allowing[answer]:
			e.Error = "refused: nobody could be asked"
			if answer != "" {
				e.Error = "refused: the person answered " + answer
			}
		case out.isError:
			e.Error = "the call ended with an error result"
		}
		scrub := g.h.Redact
		if memberRedact != nil {
			// The member's own values too: a token passed back as an
			// argument is redacted as the gateway's would be.
			scrub = func(s string) string { return memberRedact(g.h.Redact(s)) }
		}
		g.opts.Audit.write(e, rec.args, scrub)
	}
}

// allowing are the answers that let a call run.
var allowing = map[string]bool{DecisionOnce: true, DecisionSession: true, DecisionAlways: true, "session-grant": true}

// outcome is how a call ended.
type outcome struct {
	duration time.Duration
	size     int
	isError  bool
	err      string // a protocol error
}

// records are the records of calls that wait for a client's answer,
// by the requestState the client will send back.
type records struct {
	mu sync.Mutex
	m  map[string]parked
}

type parked struct {
	rec     *callRecord
	expires time.Time
}

// recordsKey ties a parked record to its caller: the principal and, but
// for a stateless request (which is a session of its own), the
// session — a permission question's requestState is the same for every
// caller of one tool with the same arguments.
func (g *Gateway) recordsKey(req *mcp.CallToolRequest, state string) string {
	who, sid := "", ""
	if ex := req.Extra; ex != nil && ex.TokenInfo != nil {
		who = ex.TokenInfo.UserID
	}
	if !g.sessionless(req.Session) {
		sid = req.Session.ID()
	}
	return who + "\x00" + sid + "\x00" + state
}

func (rs *records) park(key string, rec *callRecord, ttl time.Duration) {
	now := time.Now()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[string]parked{}
	}
	for k, p := range rs.m {
		if now.After(p.expires) {
			delete(rs.m, k)
		}
	}
	rs.m[key] = parked{rec: rec, expires: now.Add(ttl + time.Minute)}
}

// take returns the record parked under key for a retry of the call of
// name, or nil.
func (rs *records) take(key, name string) *callRecord {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	p, ok := rs.m[key]
	if !ok || p.rec.name != name {
		return nil
	}
	delete(rs.m, key)
	p.rec.resumed = true
	return p.rec
}

// refusedBy says what refused a call or withheld its result on the
// host's side — a call hook, the server's "secrets" mode — or "".
func refusedBy(n host.CallNotes) string {
	for _, h := range n.Hooks {
		switch {
		case h.Refused && h.Decision == "deny":
			return fmt.Sprintf("refused by the call hook %s (%s): %s", h.Hook, h.Phase, h.Reason)
		case h.Refused:
			return fmt.Sprintf("refused: the call hook %s failed (%s): %s", h.Hook, h.Phase, h.Reason)
		}
	}
	for _, s := range n.Secrets {
		if strings.HasPrefix(s, "call blocked") || strings.HasPrefix(s, "result blocked") {
			return s
		}
	}
	return ""
}
