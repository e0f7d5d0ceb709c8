package host

import (
	"time"

	"github.com/switchboard-mcp/switchboard/config"
)

// State is a server's runtime state. The strings are part of the
// JSON contract of `status --json`.
type State string

const (
	StateDisabled      State = "disabled"
	StatePaused        State = "paused"
	StateMissing       State = "missing"
	StateNeedsApproval State = "needs-approval"
	StateApprovalStale State = "approval-stale"
	StateConnecting    State = "connecting"
	StateConnected     State = "connected"
	StateError         State = "error"
	StateCircuitOpen   State = "circuit-open"
)

// Phrase is the state as a sentence's verb phrase, after a server's name:
// "mem needs approval", "mem failed", "mem is paused".
func (s State) Phrase() string {
	switch s {
	case StateNeedsApproval:
		return "needs approval"
	case StateApprovalStale:
		return "needs approval again (its definition changed)"
	case StateError:
		return "failed"
	case StateCircuitOpen:
		return "is resting after repeated failures (circuit open)"
	}
	return "is " + string(s)
}

// Settled reports whether a server in this state is done starting: anything
// but connecting.
func (s State) Settled() bool { return s != StateConnecting }

// ServerStatus is a snapshot of one server for status views and scripts.
type ServerStatus struct {
	Name  string       `json:"name"`
	Type  config.Type  `json:"type"`
	Scope config.Scope `json:"scope"`
	Trust config.Trust `json:"trust"`
	File  string       `json:"file,omitempty"`
	State State        `json:"state"`
	// Reason is one line saying why the server is in its state (empty when
	// connected and healthy).
	Reason string `json:"error"`
	// Err, in StateError, is the error that put the server there, if one
	// did (nil otherwise), for errors.As: an *oauth.LoginRequiredError, a
	// refused address. Reason holds its text (secrets scrubbed, one line).
	Err error `json:"-"`
	// Since is when the server entered State.
	Since time.Time `json:"since"`
	// Command is the literal command line (stdio), as it would run, or the
	// URL (remote) as written, with its ${VAR} references unexpanded; secrets
	// in env and headers, userinfo passwords and secret-named parameters
	// are never included.
	Command string `json:"command"`
	// Tools is the number of the server's tools the model is offered
	// (when known): tool filters, held tools and a view's filter leave
	// theirs out.
	Tools int `json:"tools"`
	// Tokens estimates what the block of those tools costs in a model's context.
	Tokens int `json:"tokens"`
	// Deferred is how many of the server's tools were held back from the
	// model's tool list at the last listing (deferred loading); they are
	// found through tool_search. Tokens counts the whole block regardless.
	Deferred int `json:"deferred"`
	// Protocol is the negotiated protocol revision; Server names the peer.
	Protocol   string `json:"protocol,omitempty"`
	ServerInfo string `json:"serverInfo,omitempty"`
	// StderrTail holds the last lines the server wrote to stderr (stdio).
	StderrTail []string `json:"stderr,omitempty"`
	// ListErrors holds, per list request ("tools/list", "prompts/list",
	// "resources/list", "resources/templates/list"), why its last fetch
	// failed. A connected server with any is not healthy, whatever its
	// state: Reason names them too, and its Tools count is not known.
	ListErrors map[string]string `json:"listErrors,omitempty"`
	// Reconnects counts reconnections after unexpected closes.
	Reconnects int `json:"reconnects"`
	// Reconnecting: the server lost its connection and is being
	// reconnected (state connecting); its last tool list stays served
	// and calls wait for it within their timeout.
	Reconnecting bool `json:"reconnecting,omitempty"`
	// NextTry is when the server is tried again: the next start or
	// reconnect of a server that failed or lost its connection (state
	// error or connecting), the next probe of an open circuit (state
	// circuit-open). Zero when none is due. Reason says why, NextTry when.
	NextTry time.Time `json:"nextTry,omitzero"`
	Stats   CallStats `json:"stats"`
	// Held are the tools tool pinning does not serve (docs/security.md,
	// What the model reads); ToolChanges says why each is held, and lists
	// the changes served or accepted too. PinError, when set, is why no
	// tool of the server is served: the pin store cannot be used.
	Held        []string     `json:"held,omitempty"`
	ToolChanges []ToolChange `json:"toolChanges,omitempty"`
	PinError    string       `json:"pinError,omitempty"`
	// HeldPrompts are the prompts prompt pinning does not serve;
	// PromptChanges says why each is held, and lists the changes served
	// or accepted too.
	HeldPrompts   []string       `json:"heldPrompts,omitempty"`
	PromptChanges []PromptChange `json:"promptChanges,omitempty"`
	// Findings are the deceptive characters found in its tools' and
	// prompts' definitions, and the schema text cut to its caps
	// (removed, made visible or cut in what the model reads).
	Findings []ToolFindings `json:"findings,omitempty"`
	// SecretNamed counts the tools not served because a name of theirs
	// (the tool's, a parameter's) holds a secret value Switchboard gave a
	// server: a name must be sent back as it is, so it cannot be
	// redacted (docs/security.md, Secrets going the wrong way).
	SecretNamed int `json:"secretNamed,omitempty"`
}

// NextTryNote says when a server in error is tried again, as a suffix for
// its reason ("; next try in 4s", rounded up: a try 300 ms away is "in
// 1s", never "in 0s"; "; trying again now" when it is due); "" when no
// try is due.
func (st ServerStatus) NextTryNote(now time.Time) string {
	if st.State != StateError || st.NextTry.IsZero() {
		return ""
	}
	if wait := st.NextTry.Sub(now); wait > 0 {
		return "; next try in " + (wait + time.Second - 1).Truncate(time.Second).String()
	}
	return "; trying again now"
}

// UnknownCount says why a count of the server's (its tools, their
// tokens) shows no number: "?" when n is 0 because its tools/list failed
// (not known, not empty), "-" when n is 0 because it is not running; ""
// when n is the count.
func (st ServerStatus) UnknownCount(n int) string {
	if n != 0 {
		return ""
	}
	if _, failed := st.ListErrors["tools/list"]; failed {
		return "?"
	}
	if st.State != StateConnected && st.State != StateCircuitOpen {
		return "-"
	}
	return ""
}

// CallStats are per-server counters, as status shows them.
type CallStats struct {
	Calls  int64         `json:"calls"`
	Errors int64         `json:"errors"`
	P50    time.Duration `json:"p50_ns"`
	P99    time.Duration `json:"p99_ns"`
}
