package switchboard

import (
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/host"
)

// ErrNotApproved is what a [Prompter] returns (or wraps) for a plain no:
// the server is held for this run and nothing else is wrong.
var ErrNotApproved = errors.New("not approved")

// NotApprovedError is the error of a call to a tool whose server launch
// trust holds: a project server nobody approved, whose definition changed
// since it was approved, or that the person declined for this run. It
// carries no command to run; a front end says how to approve (the CLI's
// `switchboard mcp approve NAME`).
type NotApprovedError struct {
	Server string
	// State is host.StateNeedsApproval or host.StateApprovalStale.
	State host.State
	// Reason is the launch-trust reason, as status shows it.
	Reason string
}

func (e *NotApprovedError) Error() string {
	return fmt.Sprintf("server %s %s: %s", e.Server, e.State.Phrase(), e.Reason)
}

// Is makes errors.Is(err, ErrNotApproved) true.
func (e *NotApprovedError) Is(target error) bool { return target == ErrNotApproved }

// Held returns a *NotApprovedError for every server of statuses that launch
// trust holds, in order.
func Held(statuses []host.ServerStatus) []*NotApprovedError {
	var out []*NotApprovedError
	for _, st := range statuses {
		if st.State == host.StateNeedsApproval || st.State == host.StateApprovalStale {
			out = append(out, &NotApprovedError{Server: st.Name, State: st.State, Reason: st.Reason})
		}
	}
	return out
}
