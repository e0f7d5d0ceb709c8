package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/policy"
)

// HookContractVersion is the version of the JSON a call hook is sent and
// answers (docs/security.md, Call hooks). A hook that answers a later
// version is an error, and so fails closed.
const HookContractVersion = 1

// HookRequest is what a call hook receives: on stdin for a command, as the
// body of a POST for a URL.
type HookRequest struct {
	Version int `json:"version"`
	// Phase is "before" (the call has not run; the hook may deny it) or
	// "after" (it ran; the hook may redact or deny its result).
	Phase string `json:"phase"`
	// Tool is the namespaced name mcp__<server>__<tool>; Server and
	// ServerTool its parts as the server names them.
	Tool       string `json:"tool"`
	Server     string `json:"server"`
	ServerTool string `json:"serverTool"`
	// Scope is the server's scope (user, project, local…), Workspace the
	// workspace root ("" without one).
	Scope     string `json:"scope"`
	Workspace string `json:"workspace,omitempty"`
	// Arguments are the call's arguments as the model sent them.
	Arguments json.RawMessage `json:"arguments"`
	// Result, after the call, is the result as the model would read it
	// (deceptive characters removed, known secrets replaced).
	Result *mcp.CallToolResult `json:"result,omitempty"`
}

// HookResponse is what a call hook answers: one JSON object on stdout
// (exit status 0) or as the body of a 200 answer.
type HookResponse struct {
	// Version is HookContractVersion (0 is read as 1).
	Version int `json:"version"`
	// Decision is "allow" or "deny".
	Decision string `json:"decision"`
	// Reason says why, for the model and the audit log (a deny should
	// have one).
	Reason string `json:"reason,omitempty"`
	// Redact lists texts to replace with "<redacted>" wherever they appear
	// in the result (after the call only).
	Redact []string `json:"redact,omitempty"`
}

// HookDecision is one hook's verdict on one call, as the audit log and
// the call's report keep it.
type HookDecision struct {
	Hook  string `json:"hook"`
	Phase string `json:"phase"`
	// Decision is allow, deny, redact or error.
	Decision string `json:"decision"`
	// Reason is the hook's reason, or what went wrong.
	Reason string `json:"reason,omitempty"`
	// Refused: the call, or its result, was refused because of it (a deny,
	// or an error of a hook that fails closed).
	Refused    bool    `json:"refused,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// hookOutputLimit bounds a hook's answer.
const hookOutputLimit = 1 << 20

// hookRunner runs the Host's call hooks.
type hookRunner struct {
	h      *Host
	client *http.Client
}

func newHookRunner(h *Host) *hookRunner {
	// Hooks on loopback only: every connection is checked where it is made,
	// so that neither a name nor a redirect can send a call's arguments
	// elsewhere.
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ip := net.ParseIP(host)
			if host == "localhost" {
				ip = net.IPv4(127, 0, 0, 1)
			}
			if ip == nil || !ip.IsLoopback() {
				return nil, fmt.Errorf("a call hook may only be reached on loopback, not %s", host)
			}
			return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		},
		MaxIdleConnsPerHost: 4,
	}
	return &hookRunner{h: h, client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return errors.New("a call hook may not redirect")
	}}}
}

// hooksFor returns the hooks that check server's tool in phase.
func (h *Host) hooksFor(server, tool, phase string) []config.CallHook {
	hooks, _ := h.callHooks()
	if len(hooks) == 0 {
		return nil
	}
	var out []config.CallHook
	req := policy.Request{Tool: toolName(server, tool), Server: server, ToolName: tool}
	for _, hk := range hooks {
		if phase == "before" && !hk.Before || phase == "after" && !hk.After {
			continue
		}
		if len(hk.Tools) > 0 {
			match := false
			for _, t := range hk.Tools {
				if p, err := policy.ParseRule(t); err == nil && p.MatchName(req) {
					match = true
					break
				}
			}
			if !match {
				continue
			}
		}
		out = append(out, hk)
	}
	return out
}

// run runs one hook on req. A hook that fails — does not start, times out,
// exits with an error, answers what is not the contract — is an error
// whose message says which and why.
func (r *hookRunner) run(ctx context.Context, hk config.CallHook, req *HookRequest) (*HookResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("the request could not be encoded: %v", err)
	}
	timeout := time.Duration(hk.TimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = config.DefaultHookTimeoutMs * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out []byte
	if hk.URL != "" {
		out, err = r.post(ctx, hk.URL, body)
	} else {
		out, err = r.exec(ctx, hk.Command, body, timeout)
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("no answer within %s", timeout)
		}
		return nil, err
	}
	var resp HookResponse
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&resp); err != nil || dec.More() {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return nil, fmt.Errorf("its answer is not the JSON of the call hook contract (%v): %q", err, snippet(out))
	}
	switch {
	case resp.Version > HookContractVersion:
		return nil, fmt.Errorf("it answers contract version %d; this Switchboard speaks version %d", resp.Version, HookContractVersion)
	case resp.Decision != "allow" && resp.Decision != "deny":
		return nil, fmt.Errorf(`its answer's "decision" is %q, not "allow" or "deny"`, resp.Decision)
	}
	return &resp, nil
}

// snippet is the start of a hook's output, for a message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// post sends body to a hook's URL and returns the answer of a 200.
func (r *hookRunner) post(ctx context.Context, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap()
		}
		return nil, fmt.Errorf("%s did not answer: %v", url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, hookOutputLimit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading its answer: %v", url, err)
	}
	if len(out) > hookOutputLimit {
		return nil, fmt.Errorf("%s answered more than %d KiB", url, hookOutputLimit>>10)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s: %q", url, resp.Status, snippet(out))
	}
	return out, nil
}

// exec runs a hook's command (no shell; supervised, so nothing it starts
// outlives it) with body on stdin and returns its stdout. It runs in the
// user's home directory with the host's environment: the user's own
// program, which no repository file steers.
func (r *hookRunner) exec(ctx context.Context, argv []string, body []byte, timeout time.Duration) ([]byte, error) {
	prog := argv[0]
	home, _ := os.UserHomeDir()
	if rest, ok := strings.CutPrefix(prog, "~/"); ok && home != "" {
		prog = filepath.Join(home, rest)
	}
	dir := home
	if dir == "" {
		dir = proc.NeutralDir()
	}
	out, err := runOnce(ctx, proc.Spec{Command: prog, Args: argv[1:], Env: r.h.opts.Environ(), Dir: dir,
		Supervise: !r.h.opts.NoSupervisor, StderrLimit: 4 << 10}, body, hookOutputLimit, timeout, r.h.opts.CloseGrace)
	if err != nil {
		return nil, fmt.Errorf("%s %v", prog, err)
	}
	return out, nil
}

// guardSettings are the settings of what the model reads that a reload
// can change (SetCallHooks, SetToolChanges).
type guardSettings struct {
	hooks       []config.CallHook
	problems    []string
	toolChanges config.ToolChangeMode
}

// initGuards sets the guard settings from the Options, once, at New: a
// call reads them (guardSettings) without deciding them again.
func (h *Host) initGuards() {
	hooks, problems := readableHooks(h.opts.CallHooks, h.opts.CallHookProblems)
	h.guards.Store(&guardSettings{hooks: hooks, problems: problems, toolChanges: h.opts.ToolChanges})
}

func (h *Host) guardSettings() guardSettings { return *h.guards.Load() }

// readableHooks takes out of hooks those with a "tools" pattern that is
// not a rule or matches nothing (mcp__ev*, an unclosed parenthesis), each
// as a problem: such a hook would run for no call at all (it fails open),
// where a hook that cannot be read refuses every call until it is fixed.
// Neither slice given is written.
func readableHooks(hooks []config.CallHook, problems []string) ([]config.CallHook, []string) {
	out, dropped := hooks, false
	for i, hk := range hooks {
		bad := hookToolsProblem(hk)
		if bad == "" {
			if dropped {
				out = append(out, hk)
			}
			continue
		}
		if !dropped {
			out, dropped = slices.Clone(hooks[:i]), true
		}
		problems = append(slices.Clip(problems), bad)
	}
	return out, problems
}

// hookToolsProblem says why a "tools" entry of hk is not a tool pattern
// that can match a call, naming where hk is written; "" when none.
func hookToolsProblem(hk config.CallHook) string {
	for _, t := range hk.Tools {
		p, err := policy.ParseRule(t)
		why := p.Never()
		if err != nil {
			why = err.Error()
		}
		if why == "" {
			continue
		}
		bad := fmt.Sprintf("call hook %q: \"tools\" entry %q is not a tool pattern: %s", hk.Name, t, why)
		if at := hk.Position.String(); at != "" {
			bad = at + ": " + bad
		}
		return bad
	}
	return ""
}

func (h *Host) callHooks() ([]config.CallHook, []string) {
	g := h.guardSettings()
	return g.hooks, g.problems
}

// SetCallHooks replaces the call hooks in force (Options.CallHooks and
// Options.CallHookProblems), for the settings a reload read. Calls already
// running keep the hooks they started with.
func (h *Host) SetCallHooks(hooks []config.CallHook, problems []string) {
	g := h.guardSettings()
	g.hooks, g.problems = readableHooks(hooks, problems)
	h.guards.Store(&g)
}

// SetToolChanges replaces Options.ToolChanges; the servers' lists are
// decided again at their next listing.
func (h *Host) SetToolChanges(mode config.ToolChangeMode) {
	g := h.guardSettings()
	if g.toolChanges == mode {
		return
	}
	g.toolChanges = mode
	h.guards.Store(&g)
	h.pins.mu.Lock()
	h.pins.m, h.pins.promptStates = nil, nil
	h.pins.mu.Unlock()
}

// CallHooks returns the call hooks in force, and the problems of those
// that could not be read (while there is one every call is refused).
func (h *Host) CallHooks() ([]config.CallHook, []string) { return h.callHooks() }
