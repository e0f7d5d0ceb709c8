package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"

	"github.com/switchboard-mcp/switchboard/internal/jsonl"
	"github.com/switchboard-mcp/switchboard/policy"
)

// ErrDenied is wrapped by every call refused by a permission rule, by the
// person asked, or because a question was needed and nobody could answer
// it. The call never reached the server.
var ErrDenied = errors.New("permission denied")

// ErrAskPending is wrapped by the error of an [Asker] that sent its
// question to be answered on another round of the call (the gateway's
// Asker: the question rides the call's result, and the client calls again
// with the answer). The call is put off, not refused: PolicyPermit's
// [DeniedError] then has Pending set, and the call is decided again when
// it comes back with the answer.
var ErrAskPending = errors.New("waiting for the answer to a permission question")

// PermitRequest describes a tool call about to be made.
type PermitRequest struct {
	// Tool is the name the model sees, mcp__<server>__<tool>.
	Tool string
	// Server is the configured server name; ToolName the server's own name
	// for the tool.
	Server, ToolName string
	// Args are the call's arguments, exactly as they will be sent (the
	// object is re-encoded from this map), numbers as json.Number; nil
	// when the call has none or they are not an object.
	Args map[string]any
	// Annotations are the tool's hints as the server declared them
	// (untrusted), nil when unknown.
	Annotations *mcp.ToolAnnotations

	// lazy holds the arguments the host left undecoded
	// (Options.LazyPermitArgs); nil when it decoded them into Args.
	lazy *lazyArgs
}

// lazyArgs are a call's arguments as JSON, decoded by the first
// DecodeArgs of any copy of the request.
type lazyArgs struct {
	raw     []byte
	once    sync.Once
	decoded bool
	args    map[string]any
	send    json.RawMessage
}

// DecodeArgs fills Args when the host left the arguments undecoded
// ([Options.LazyPermitArgs]), and makes the call send them as decoded, as
// it does when the host decodes them: a Permit whose decision or question
// reads Args calls it first. Otherwise it does nothing. Copies of the
// request share one decoding.
func (r *PermitRequest) DecodeArgs() {
	if r.lazy == nil || r.Args != nil {
		return
	}
	l := r.lazy
	l.once.Do(func() { l.args, l.send = permitArgs(l.raw); l.decoded = true })
	r.Args = l.args
}

// Permit decides whether a call may run: nil lets it run, an error
// (wrapping ErrDenied) refuses it and is returned by Call. It is called
// once per call, after the tool is resolved and before the circuit
// breaker, and may block (to ask a person) until ctx is done.
type Permit func(ctx context.Context, req PermitRequest) error

// Answer is a person's answer to a permission question.
type Answer int

const (
	// AnswerDeny refuses this call.
	AnswerDeny Answer = iota
	// AnswerOnce lets this call run.
	AnswerOnce
	// AnswerAlways lets this call and every later call of the same tool
	// run, for the life of the Permit (one session), unless a rule denies.
	// An Asker whose person answered "always" writes the tool's allow rule
	// with a [RuleWriter] (so that later sessions do not ask) and returns
	// AnswerAlways for this one.
	AnswerAlways
)

// RuleWriter writes the allow rule of an "always" answer to a
// settings file, so that later sessions let the tool run without asking.
type RuleWriter interface {
	// Where says in one line where WriteAllow writes, for the question:
	// "local settings ~/.switchboard/settings.json (workspace ~/proj)".
	Where() string
	// WriteAllow adds rule to that file's permissions.allow (a no-op when
	// it is there) and returns where it wrote.
	WriteAllow(rule string) (where string, err error)
}

// Asker puts a permission question to a person: a terminal, or an MCP
// client through elicitation. An error counts as AnswerDeny.
type Asker interface {
	AskPermission(ctx context.Context, req PermitRequest, d policy.Decision) (Answer, error)
}

// PermitOptions configure PolicyPermit. A nil *PermitOptions means
// headless, no autopilot.
type PermitOptions struct {
	// Asker answers questions. If nil, nobody can be asked: an ask is a
	// deny, whose error names the rule that would allow the call.
	Asker Asker
	// Autopilot is passed to every policy.Request. It skips no question
	// for MCP tools; it is there so that reasons can say so.
	Autopilot bool
	// UserSettings names the user settings file in hints, as a person
	// should read it. If empty, "~/.switchboard/settings.json".
	UserSettings string
	// Rules, if not nil, picks the rules that decide a call from its
	// context in place of PolicyPermit's own (a gateway's: the rules of
	// the calling principal on top of the global ones), and who, whose
	// "always" answers the call shares ("" for everyone's): an answer is
	// remembered per (who, server, tool).
	Rules func(ctx context.Context) (rules *policy.Policy, who string)
	// Decided, if not nil, is told every decision before it is acted on
	// (a gateway's audit line and metrics).
	Decided func(ctx context.Context, d policy.Decision)
}

// DeniedError is the error of a call refused by PolicyPermit. It unwraps
// to ErrDenied.
type DeniedError struct {
	Tool     string
	Decision policy.Decision
	// Asked reports that a person was asked and refused.
	Asked bool
	// Pending reports that the question is out ([ErrAskPending]): the
	// call is put off until it comes again with the answer, not refused.
	Pending bool
	// Hint says in one line what would let the call run ("" when nothing
	// would).
	Hint string
}

func (e *DeniedError) Error() string {
	switch {
	case e.Asked:
		return fmt.Sprintf("%s: call refused when asked", e.Tool)
	case e.Pending:
		return fmt.Sprintf("%s: waiting for the answer to its permission question", e.Tool)
	case e.Decision.Action == policy.Deny:
		return fmt.Sprintf("%s: %s", e.Tool, e.Decision.Reason)
	}
	return fmt.Sprintf("%s: needs permission and nobody can answer here (%s)", e.Tool, e.Decision.Reason)
}

func (e *DeniedError) Unwrap() error { return ErrDenied }

// PolicyPermit returns a Permit deciding with p (nil: no rules, so every
// call is asked for), or with the rules opts.Rules picks per call: allow
// runs, deny refuses, ask puts the question to opts.Asker — or refuses
// when there is none (an ask with nobody to ask is a deny). AnswerAlways
// is remembered by the returned Permit per (who, server, tool), never per
// joined name, so that it cannot pass to another server's tool of the
// same name nor to another principal. It is safe for concurrent use;
// questions are not serialized (the Asker may do so). It is the one
// permission engine: the front door, the CLI and the gateway
// (gateway.NewPermit) all decide with it.
func PolicyPermit(p *policy.Policy, opts *PermitOptions) Permit {
	var o PermitOptions
	if opts != nil {
		o = *opts
	}
	if o.UserSettings == "" {
		o.UserSettings = "~/.switchboard/settings.json"
	}
	var (
		mu     sync.Mutex
		always = map[[3]string]bool{}
	)
	return func(ctx context.Context, req PermitRequest) error {
		pol, who := p, ""
		if o.Rules != nil {
			pol, who = o.Rules(ctx)
		}
		preq := policy.Request{Tool: req.Tool, Server: req.Server, ToolName: req.ToolName, Autopilot: o.Autopilot}
		if a := req.Annotations; a != nil {
			preq.Annotations = policy.Annotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint != nil && *a.DestructiveHint}
		}
		if pol.NeedsArgs(preq) {
			// A rule with argument conditions could match: decide on the
			// arguments (otherwise they cannot change the decision).
			req.DecodeArgs()
		}
		preq.Args = req.Args
		d := pol.Decide(preq)
		if o.Decided != nil {
			o.Decided(ctx, d)
		}
		switch d.Action {
		case policy.Allow:
			return nil
		case policy.Deny:
			return &DeniedError{Tool: req.Tool, Decision: d, Hint: d.Hint(o.UserSettings)}
		}
		key := [3]string{who, req.Server, req.ToolName}
		if req.Server == "" {
			key[2] = req.Tool
		}
		mu.Lock()
		ok := always[key]
		mu.Unlock()
		if ok {
			return nil
		}
		if o.Asker == nil {
			return &DeniedError{Tool: req.Tool, Decision: d, Hint: d.Hint(o.UserSettings)}
		}
		req.DecodeArgs() // the person asked is shown them
		ans, err := o.Asker.AskPermission(ctx, req, d)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, ErrAskPending) {
				return &DeniedError{Tool: req.Tool, Decision: d, Pending: true}
			}
			return &DeniedError{Tool: req.Tool, Decision: d, Hint: d.Hint(o.UserSettings)}
		case ans == AnswerAlways:
			mu.Lock()
			always[key] = true
			mu.Unlock()
			return nil
		case ans == AnswerOnce:
			return nil
		}
		return &DeniedError{Tool: req.Tool, Decision: d, Asked: true}
	}
}

// permit asks Options.Permit about a call and returns the arguments to
// send: the very JSON the decision saw. With Options.LazyPermitArgs the
// arguments are decoded only if the Permit asks for them
// (PermitRequest.DecodeArgs); if it does not, they are sent as given.
// served is the server's tool list checkHeld decided on (nil: listed
// here), where the tool's annotations are read.
func (h *Host) permit(ctx context.Context, s *server, tool string, args any, served []*mcp.Tool) (any, error) {
	permit := h.permitFunc()
	if permit == nil {
		return args, nil
	}
	req := PermitRequest{Tool: toolName(s.name, tool), Server: s.name, ToolName: tool}
	if args != nil {
		raw, err := argsJSON(args)
		if err != nil {
			return nil, fmt.Errorf("%s: arguments: %w", req.Tool, err)
		}
		if h.opts.LazyPermitArgs {
			req.lazy = &lazyArgs{raw: raw}
		} else {
			req.Args, args = permitArgs(raw)
		}
	}
	tools := served
	if tools == nil {
		tools, _ = h.serverTools(ctx, s) // nil when it could not list them
	}
	for _, t := range tools {
		if t.Name == tool {
			req.Annotations = t.Annotations
		}
	}
	if err := h.askPermit(ctx, permit, req); err != nil {
		// A question sent to be answered on the call's next round (the
		// gateway's) puts the call off: it is decided again with the
		// answer, and logged as refused only if it is refused then.
		if de := (*DeniedError)(nil); errors.As(err, &de) && de.Pending {
			h.log.Info("asking permission", "server", s.name, "tool", tool)
		} else {
			h.log.Info("call refused", "server", s.name, "tool", tool)
		}
		return nil, err
	}
	if l := req.lazy; l != nil {
		l.once.Do(func() {}) // no decoding from here on: what is sent is settled
		if l.decoded {
			return l.send, nil
		}
	}
	return args, nil
}

// argsParseFlags decode numbers as json.Number, keeping their exact text
// (encoding/json's UseNumber).
const argsParseFlags = sjson.UseNumber

// permitArgs decodes the JSON of a call's arguments (valid JSON, as
// argsJSON returns it) for the permission decision, and returns the
// arguments to send: the object as decided on, re-encoded. With a key
// given twice, a server that keeps the first value would otherwise see
// other arguments than the rules did (the decoding keeps the last). When
// raw is not an object (or is null), there are no named arguments and raw
// is sent as it is.
//
// It decodes and re-encodes with segmentio's encoding/json rather than a
// json.Decoder (a reader, a buffer and a scanner each call) and
// json.Marshal; FuzzPermitArgs checks that the map and the bytes are
// those encoding/json gives.
func permitArgs(raw []byte) (map[string]any, json.RawMessage) {
	if len(raw) > deepArgs && jsonl.NestsDeeper(raw, deepArgs) {
		return deepPermitArgs(raw)
	}
	// Made here: for a nil map, the parser makes one sized for 64 keys.
	m := map[string]any{}
	if _, err := sjson.Parse(raw, &m, argsParseFlags); err != nil || m == nil {
		return nil, raw
	}
	canon, err := sjson.Marshal(m)
	if err != nil {
		return m, raw
	}
	return m, canon
}

// maxArgsDepth is encoding/json's limit on nesting, which segmentio's
// parser does not have.
const maxArgsDepth = 10000

// deepArgs is the nesting past which permitArgs decodes with encoding/json:
// segmentio's parser takes time that grows with the square of the depth
// (0.8 s for 8,000 levels, a 16 KB argument any client may send), and
// encoding/json's grows with the depth.
const deepArgs = 1000

// deepPermitArgs is permitArgs for arguments nested deeper than deepArgs,
// with encoding/json (a json.Decoder with UseNumber, then json.Marshal).
func deepPermitArgs(raw []byte) (map[string]any, json.RawMessage) {
	if jsonl.NestsDeeper(raw, maxArgsDepth) {
		return nil, raw // encoding/json refuses it: no named arguments
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return nil, raw
	}
	canon, err := json.Marshal(m)
	if err != nil {
		return m, raw
	}
	return m, canon
}

// argsJSON returns the JSON of a call's arguments. JSON text, which
// jsonTextArgs has checked and left as json.RawMessage (as the gateway
// relays it), is used as it is: json.Marshal would only have checked it
// again and copied it compacted.
func argsJSON(args any) ([]byte, error) {
	if raw, ok := args.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(args)
}

// askPermit runs permit, which may wait for a person, with a ctx that is
// also done once the Host closes: a call made with a ctx that is never
// done (context.Background) then ends with ErrClosed, and the question
// with it, rather than waiting for an answer nobody can use.
func (h *Host) askPermit(ctx context.Context, permit Permit, req PermitRequest) error {
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(h.hostCore.ctx, func() { cancel(ErrClosed) })
	defer stop()
	err := permit(pctx, req)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(pctx), ErrClosed) {
		return fmt.Errorf("%s: asking permission: %w", req.Tool, ErrClosed)
	}
	return err
}
