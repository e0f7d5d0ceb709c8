package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// CallPrincipal returns the principal of the call ctx belongs to (nil for
// a call without one), for an Asker.Console that shows each principal its
// own questions.
func CallPrincipal(ctx context.Context) *Principal { return recordFrom(ctx).who() }

// inConsole asks Asker.Console, when there is one, a question nobody else
// can answer, and records the question and its answer for the call's
// audit line; without one, the call is refused (ErrCannotAsk).
func (a *Asker) inConsole(ctx context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	if a.Console == nil {
		return host.AnswerDeny, ErrCannotAsk
	}
	rec := recordFrom(ctx)
	rec.question()
	req.DecodeArgs()
	ans, err := a.Console.AskPermission(ctx, req, d)
	switch {
	case err != nil:
		rec.answered("cancel")
	case ans == host.AnswerOnce:
		rec.answered(DecisionOnce)
	case ans == host.AnswerAlways:
		rec.answered(DecisionSession)
	default:
		rec.answered(DecisionDeny)
	}
	return ans, err
}

type questionIDKey struct{}

// QuestionID returns the id of the question whose link the gateway sent
// the client of the call ctx belongs to (Asker.Link), or "": a console
// lists the question under that id, so that the link finds it.
func QuestionID(ctx context.Context) string {
	id, _ := ctx.Value(questionIDKey{}).(string)
	return id
}

// byLink reports whether the question goes to the client as a link to
// the console: it takes URL-mode elicitation but no forms.
func (a *Asker) byLink(st *askState) bool {
	return a.Link != nil && a.Console != nil && !st.legacyStateless && st.canElicitMode("url") && !st.canElicitMode("")
}

// askByLink sends the client a URL-mode elicitation with the link to the
// question's page in the console; once the client has shown it (accept),
// the call waits for the answer given there, as inConsole does. The id is
// the same on both rounds of the call: a digest of the question and its
// principal.
func (a *Asker) askByLink(ctx context.Context, st *askState, req host.PermitRequest, d policy.Decision, key string) (host.Answer, error) {
	rec := recordFrom(ctx)
	name := ""
	if p := rec.who(); p != nil {
		name = p.Name
	}
	sum := sha256.Sum256([]byte(key + "\x00" + name))
	id := hex.EncodeToString(sum[:12])
	if r, ok := st.responses[permissionInput].(*mcp.ElicitResult); ok && st.state == key {
		if r.Action != "accept" {
			rec.answered(r.Action)
			return host.AnswerDeny, nil
		}
		return a.inConsole(context.WithValue(ctx, questionIDKey{}, id), req, d)
	}
	st.question = &mcp.ElicitParams{Mode: "url", ElicitationID: id, URL: a.Link(id),
		Message: fmt.Sprintf("Switchboard asks whether to allow %s (%s). Answer in its console: open the link.", req.Tool, d.Reason)}
	st.key = key
	rec.question()
	return host.AnswerDeny, errAsking
}
