package gateway

import (
	"context"

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
