package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/trust"
)

// Runtime defaults: timeouts, waits and the circuit breaker.
const (
	DefaultStartupTimeout = 30 * time.Second
	// DefaultRunnerStartupTimeout is the start-up bound of a server run by
	// a package runner (npx, uvx, bunx, pnpx, pipx, dnx) when nothing sets
	// one: its first start downloads the package, which took 13–31 s on a
	// cold cache here, past the plain 30 s default.
	DefaultRunnerStartupTimeout = 120 * time.Second
	DefaultCallTimeout          = 120 * time.Second
	DefaultToolsWait            = 5 * time.Second
	DefaultCloseGrace           = 2 * time.Second
	// DefaultBreakerCooldown is how long an open circuit first waits
	// before a call probes the server; each failed probe doubles the wait,
	// up to DefaultBreakerMaxCooldown.
	DefaultBreakerCooldown    = 5 * time.Second
	DefaultBreakerMaxCooldown = 5 * time.Minute
	DefaultBreakerThreshold   = 3
	// DefaultRetryInterval is how often a server whose quick retries
	// failed is tried again (Options.RetryInterval).
	DefaultRetryInterval = 5 * time.Minute
)

// Sentinel errors callers branch on. Errors returned by a Host wrap them.
var (
	// ErrUnknownTool: no connected server offers a tool of that name.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrUnknownServer: no server of that name is configured.
	ErrUnknownServer = errors.New("unknown server")
	// ErrNotConnected: the server exists but is not connected (its state says why).
	ErrNotConnected = errors.New("server not connected")
	// ErrMayHaveRun: the connection dropped while a non-idempotent call was
	// in flight; it may or may not have run and was not retried.
	ErrMayHaveRun = errors.New("connection lost during the call; it may or may not have run")
	// ErrClosed: the Host was closed.
	ErrClosed = errors.New("host closed")
)

// Gate decides whether a server may start (launch trust; see package trust).
// It returns "" to let the server start, or the state to show instead
// (needs-approval, approval-stale, disabled…) with a one-line reason.
type Gate func(s *config.ResolvedServer) (State, string)

// DefaultGate lets user-trusted servers start and holds repo-authored
// (project-scope) servers in needs-approval. The trust package replaces it
// with fingerprinted approvals. Its reason states the fact; how to approve
// is the embedder's to say.
func DefaultGate(s *config.ResolvedServer) (State, string) {
	if s.Trust == config.TrustRepo {
		return StateNeedsApproval, fmt.Sprintf("project-scope server from %s has not been approved", s.File)
	}
	return "", ""
}

// Options configure a Host. A nil *Options uses every default.
type Options struct {
	// Logger receives structured logs. If nil, logs are discarded. The
	// Host redacts what it logs (tool arguments, env and header values, and
	// the configured secret values wherever they appear).
	Logger *slog.Logger
	// Clock drives backoff, the breaker, cache TTLs and the host's bounded
	// waits on a server (see Clock). If nil, real time.
	Clock Clock
	// Gate decides launch trust. If nil, DefaultGate.
	Gate Gate
	// AllowPrivateNetworkForProjectServers lets project-scope (repo-authored)
	// remote servers reach loopback, private and reserved addresses, as
	// servers the user wrote always may (docs/security.md, Outbound URL
	// safety). Cloud metadata and
	// link-local addresses stay refused for every server. Set it only from
	// the user's own settings, never from a file the repository holds.
	AllowPrivateNetworkForProjectServers bool
	// Resolver resolves remote servers' host names at dial time, where the
	// address check runs. If nil, net.DefaultResolver.
	Resolver interface {
		LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	}
	// Permit decides whether each tool call may run (per-call permissions,
	// see PolicyPermit and package policy). If nil, every call runs.
	Permit Permit
	// LazyPermitArgs leaves a call's arguments undecoded for Permit, which
	// decodes them with PermitRequest.DecodeArgs when its decision or
	// question reads them, as PolicyPermit does; when it does not, the
	// call sends them as given. Set it only for a Permit that does so:
	// any other sees Args nil.
	LazyPermitArgs bool
	// Prompter answers elicitation requests. If nil, the elicitation
	// capability is not advertised and servers' requests are refused.
	// Questions MCP forbids (a form asking for a password or token, a
	// URL that is not https) and questions asked while no call to the
	// server runs are declined without it (QuestionRefusalNoter says so).
	Prompter Prompter
	// Roots are advertised to servers that ask (absolute paths). If nil, the
	// resolved workspace root is used when there is one.
	Roots []string
	// StartupTimeout bounds connecting to one server. A server's
	// startup_timeout wins, then $MCP_TIMEOUT (ms), then this. If <= 0, 30 s.
	StartupTimeout time.Duration
	// CallTimeout bounds one tool call. A server's timeout wins, then
	// $MCP_TOOL_TIMEOUT (ms), then this. If <= 0, 120 s.
	CallTimeout time.Duration
	// ToolsWait bounds how long Tools, Prompts and Resources wait for
	// servers still connecting. If 0, 5 s; if < 0, they do not wait.
	ToolsWait time.Duration
	// CloseGrace is how long a stdio server gets after stdin closes (and
	// again after SIGTERM) before it is killed. If <= 0, 2 s.
	CloseGrace time.Duration
	// BreakerThreshold consecutive failures open a server's circuit. If <= 0, 3.
	BreakerThreshold int
	// BreakerCooldown is how long a circuit that just opened waits before a
	// call is let through as the probe; each failed probe doubles it, up to
	// BreakerMaxCooldown, and a closed circuit starts again from it. If
	// <= 0, 5 s.
	BreakerCooldown time.Duration
	// BreakerMaxCooldown is the longest an open circuit waits between
	// probes. If <= 0, 5 min; never shorter than BreakerCooldown.
	BreakerMaxCooldown time.Duration
	// RetryInterval is how often a server is tried again once the quick
	// tries after a failed start or a lost connection (Backoff, at most
	// MaxReconnectAttempts) have failed: a long-running host heals by
	// itself when the cause goes away. If 0, DefaultRetryInterval (5 min);
	// if < 0, such a server stays in error until Retry or Resume.
	RetryInterval time.Duration
	// CacheTTL bounds how long tool/prompt/resource lists are reused. If <= 0, 5 min.
	CacheTTL time.Duration
	// LookupEnv reads MCP_TIMEOUT and MCP_TOOL_TIMEOUT. If nil, os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Environ is the parent environment stdio servers inherit. If nil, os.Environ.
	Environ func() []string
	// ChildEnv is added to the environment of every stdio server (after
	// the filter of project-scope servers, over the definition's env): a
	// gateway sets GatewayEnv here.
	ChildEnv map[string]string
	// GatewayID, set by a gateway over this host (`switchboard serve`: a
	// random ID per process), goes with every request to a remote server
	// as GatewayHeader, and the gateway refuses a request that carries it:
	// a gateway whose own URL is among its servers does not serve itself.
	GatewayID string
	// NoSupervisor spawns stdio servers directly instead of through the
	// supervising re-exec of the current binary (see MaybeRunSupervisor).
	NoSupervisor bool
	// SDKStdioTransport speaks to stdio servers over the SDK's own
	// mcp.IOTransport instead of Switchboard's (internal/jsonl: the same
	// wire behaviour, each message decoded once). A fallback. It costs CPU
	// per message (the SDK decodes each up to three times) and two
	// diagnoses: a line on stdout that is not JSON-RPC is not quoted, and a
	// result over the message limit is not named; both read as the server's
	// connection failing.
	SDKStdioTransport bool
	// SDKCalls sends every tools/call through the SDK's
	// ClientSession.CallTool. Otherwise a call to a stdio server on a
	// protocol before 2026-07-28 that offers no tasks, made without
	// progress, is written to the server's connection by the host and its
	// result decoded in one pass (the relay path: the same result, a third
	// fewer allocations per call; docs/benchmarks.md). A fallback, and
	// the other side of the tests that compare the two.
	SDKCalls bool
	// SandboxDefaults are the per-scope sandboxes of stdio servers whose
	// definition has no "sandbox" field (docs/security.md, Sandbox; from user or managed
	// settings, never the repository's). If nil, project-scope servers
	// are sandboxed and the others are not. A sandboxed server needs the
	// supervisor: with NoSupervisor it does not start.
	SandboxDefaults config.SandboxDefaults
	// OnEvent, if set, receives state changes, progress, log messages and
	// list changes. It is called synchronously; keep it fast.
	OnEvent func(Event)
	// LogLevel is the level asked of servers that offer logging
	// notifications. If empty, "info".
	LogLevel mcp.LoggingLevel
	// Authorizer authorizes the requests of remote servers whose
	// definition sets no Authorization header (package oauth's Client does
	// OAuth 2.1). If nil, they carry only the definition's headers, and a
	// server that asks for authorization fails.
	Authorizer Authorizer
	// Secrets gives the values of the ${secret:NAME} references of a
	// server's env values, header values and url, looked up each time the
	// server starts or reconnects, and never for a server launch trust
	// holds. Each value joins the secrets scrubbed from logs, reasons and
	// errors. If nil, a server that names a secret does not start (state
	// error, naming the secrets).
	Secrets SecretSource
	// ErrorHint, if set, is asked about each error that leaves a server in
	// StateError; a non-empty answer is added to the server's Reason, so
	// that an application can tell its user what to do (the CLI names its
	// login command for an *oauth.LoginRequiredError). err is the cause,
	// for errors.As. It must be fast and safe for concurrent use.
	ErrorHint func(server string, err error) string
	// ToolModifiers are the session's --tools modifiers: they beat
	// each server's and tool's defer_loading, and NoDefer beats Defer.
	ToolModifiers toolsurface.Modifiers
	// AutoDeferShare defers the tools of a server whose tool block (as
	// toolsurface.ToolBlockTokens estimates it) would take more than this
	// share of ContextBudget, unless defer_loading or ToolModifiers say
	// otherwise. If 0, DefaultAutoDeferShare (10%); if < 0, never.
	AutoDeferShare float64
	// ContextBudget is the model context, in tokens, AutoDeferShare is a
	// share of. If <= 0, DefaultContextBudget (200,000).
	ContextBudget int
	// ClientName and ClientVersion identify the host to servers. Defaults:
	// "switchboard", Version.
	ClientName, ClientVersion string
	// Pins is the tool pin store (docs/security.md, What the model reads):
	// each server's tool definitions are pinned per workspace when first
	// listed, and a tool whose definition changed is held (a project
	// server's) or handled as ToolChanges says. If nil, tools are not
	// pinned (they are still cleaned of deceptive characters).
	Pins *trust.PinStore
	// ToolChanges is what a changed tool of a server the user wrote does:
	// config.ToolChangesAsk holds it until AcceptTools, ToolChangesNotify
	// serves it and reports it, ToolChangesAccept pins it at once. If "",
	// notify. A project server's changed tools are always held.
	ToolChanges config.ToolChangeMode
	// CallHooks are the user's own checks run before and after calls (see
	// hooks.go; from user or managed settings only, never a repository's).
	CallHooks []config.CallHook
	// CallHookProblems are the problems of hooks that could not be read:
	// while there is one, every call is refused with it (a check the user
	// asked for must not silently not run).
	CallHookProblems []string
}

// Version is the host's version, reported to servers at initialize.
var Version = "0.1.0-dev"

// EventKind says what an Event reports.
type EventKind string

const (
	// EventState: Server entered State (Reason says why).
	EventState EventKind = "state"
	// EventProgress: a progress notification of one of Server's calls
	// (Progress), whichever call it is; WithProgress gets one call's own.
	EventProgress EventKind = "progress"
	// EventLog: a log message of Server's (Log).
	//
	// An EventLog's or EventProgress's every string (_meta and the
	// data's object keys included) has the secret values the Host gave
	// servers replaced, as a result's text has: an embedder may print it
	// whole.
	EventLog EventKind = "log"
	// EventToolsChanged, EventPromptsChanged, EventResourcesChanged:
	// Server's list may differ now (its list_changed, a reload, an
	// accepted tool change, tool_search loading a deferred tool); list it
	// again.
	EventToolsChanged     EventKind = "tools_changed"
	EventPromptsChanged   EventKind = "prompts_changed"
	EventResourcesChanged EventKind = "resources_changed"
	// EventToolChange reports tools whose definition is not the pinned
	// one (Event.Changes): held, served or accepted.
	EventToolChange EventKind = "tool_change"
	// EventPromptChange reports prompts whose definition is not the
	// pinned one (Event.PromptChanges): held, served or accepted. A
	// server's prompts are decided when they are listed (Prompts,
	// GetPrompt, a gateway's list), so it comes then, not at connect.
	EventPromptChange EventKind = "prompt_change"
)

// Event is something that happened on one server.
type Event struct {
	Kind     EventKind
	Server   string
	State    State  // EventState
	Reason   string // EventState
	Progress *mcp.ProgressNotificationParams
	Log      *mcp.LoggingMessageParams
	// Changes are the tool changes an EventToolChange reports.
	Changes []ToolChange
	// PromptChanges are the prompt changes an EventPromptChange reports.
	PromptChanges []PromptChange
}

// Host runs a set of MCP servers: it starts them concurrently in the
// background, keeps them healthy and routes calls to them. All methods are
// safe for concurrent use. A Host made by [Host.View] shows part of
// another's servers and tools and shares its processes.
type Host struct {
	*hostCore
	// scope narrows a view (View); nil for the Host Start built.
	scope *Scope
	// deferred holds the tools tool_search activated (deferred.go): each
	// view its own, as each agent loads its own.
	deferred deferState
}

// hostCore is what a Host and its views share: the servers, their
// processes and connections, the router and the subscriptions.
type hostCore struct {
	opts     Options
	cfg      *config.Resolved
	log      *slog.Logger
	clock    Clock
	ctx      context.Context
	cancel   context.CancelFunc
	progress *progressRouter

	mu      sync.Mutex
	servers map[string]*server
	order   []string
	closed  bool
	router  *toolsurface.Router
	// conflicts are nameConflicts(cfg): the servers refused for their
	// name, computed once per configuration (New, Apply), not per start.
	conflicts map[string]string
	// subs are the Subscribe callbacks, by id.
	subMu   sync.Mutex
	subs    map[int]subscription
	nextSub int
	// bg holds the calls started with Start (background.go).
	bg backgroundCalls
	// secrets are the configured env and header values (and headersHelper
	// output) scrubbed from logs, status reasons and stderr tails.
	secrets *redact.Set
	// startupDefaulted: neither Options.StartupTimeout nor $MCP_TIMEOUT
	// was given, so package runners get their longer default.
	startupDefaulted bool
	// pins holds what tool pinning decided per server (pins.go).
	pins pinSet
	// hooks runs the call hooks (hooks.go); guards are the hooks and
	// the tool-change mode in force: the Options', then a reload's.
	hooks  *hookRunner
	guards atomic.Pointer[guardSettings]
	// confine is what the settings say of how servers run where their
	// definitions are silent: the Options', then SetConfinement's. Each
	// server keeps the one it was made with (server.confine); under mu.
	confine confinement
}

// confinement is the part of the settings that shapes how a server runs
// without being part of its definition (docs/security.md, Sandbox and
// Outbound URL safety).
type confinement struct {
	sandbox      config.SandboxDefaults
	allowPrivate bool
}

// affects reports whether going from c to next changes how rs runs: its
// scope's sandbox default where its definition has no "sandbox" (a
// stdio server, or a repository's headersHelper), or, for a
// repository's server, whether it may reach private addresses.
func (c confinement) affects(next confinement, rs *config.ResolvedServer) bool {
	if rs.Written.Sandbox == nil && (config.InferType(rs.Effective) == config.TypeStdio || rs.Effective.HeadersHelper != "") &&
		!reflect.DeepEqual(c.sandbox[rs.Scope], next.sandbox[rs.Scope]) {
		return true
	}
	return rs.Trust == config.TrustRepo && c.allowPrivate != next.allowPrivate
}

// SetConfinement replaces the per-scope sandbox defaults and whether
// project servers may reach private addresses (Options.SandboxDefaults,
// Options.AllowPrivateNetworkForProjectServers), as a reload of the
// settings found them. Servers made from now on run under them; a
// running server keeps those it started with until the next Apply,
// which restarts each one they change. Safe for concurrent use.
func (h *Host) SetConfinement(sandbox config.SandboxDefaults, allowPrivateNetworkForProjectServers bool) {
	h.mu.Lock()
	h.confine = confinement{sandbox: sandbox, allowPrivate: allowPrivateNetworkForProjectServers}
	h.mu.Unlock()
}

// New is Start(context.Background(), cfg, opts): a Host that lives until
// Close.
func New(cfg *config.Resolved, opts *Options) *Host {
	return Start(context.Background(), cfg, opts)
}

// Start builds a Host for a resolved configuration and starts every
// enabled, permitted server in the background. It never blocks on a
// server; use WaitReady or the bounded waits of Tools/Call. The servers'
// connections carry ctx's values (a trace, for one); when ctx is done the
// Host closes, as Close does. Close it either way.
func Start(ctx context.Context, cfg *config.Resolved, opts *Options) *Host {
	h := &Host{hostCore: &hostCore{cfg: cfg, servers: map[string]*server{}, subs: map[int]subscription{}}}
	if opts != nil {
		h.opts = *opts
	}
	o := &h.opts
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Gate == nil {
		o.Gate = DefaultGate
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	if o.Roots == nil && cfg != nil && cfg.Workspace != "" {
		o.Roots = []string{cfg.Workspace}
	}
	if _, set := o.LookupEnv("MCP_TIMEOUT"); !set && o.StartupTimeout <= 0 {
		h.startupDefaulted = true
	}
	o.StartupTimeout = durationKnob(o.StartupTimeout, "MCP_TIMEOUT", o.LookupEnv, DefaultStartupTimeout)
	o.CallTimeout = durationKnob(o.CallTimeout, "MCP_TOOL_TIMEOUT", o.LookupEnv, DefaultCallTimeout)
	if o.ToolsWait == 0 {
		o.ToolsWait = DefaultToolsWait
	}
	if o.CloseGrace <= 0 {
		o.CloseGrace = DefaultCloseGrace
	}
	if o.RetryInterval == 0 {
		o.RetryInterval = DefaultRetryInterval
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.ClientName == "" {
		o.ClientName = "switchboard"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = Version
	}
	h.secrets = knownSecrets(cfg, o.Environ())
	if ss, ok := o.Authorizer.(SecretSharer); ok {
		ss.ShareSecrets(h.secrets.Add) // OAuth tokens: scrubbed like the rest
	}
	o.Logger = slog.New(redact.HandlerWith(o.Logger.Handler(), h.secrets))
	h.log, h.clock = o.Logger, o.Clock
	h.progress = newProgressRouter()
	h.hooks = newHookRunner(h)
	h.initGuards()
	h.ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { h.Close() })
		context.AfterFunc(h.ctx, func() { stop() })
	}
	h.conflicts = nameConflicts(cfg)
	h.confine = confinement{sandbox: o.SandboxDefaults, allowPrivate: o.AllowPrivateNetworkForProjectServers}
	if cfg != nil {
		for i := range cfg.Servers {
			rs := cfg.Servers[i]
			s := newServer(h, rs)
			h.servers[rs.Name] = s
			h.order = append(h.order, rs.Name)
		}
	}
	sort.Strings(h.order)
	for _, name := range h.order {
		h.servers[name].start()
	}
	return h
}

// durationKnob picks the env value (milliseconds) over the option, then the default.
func durationKnob(opt time.Duration, env string, lookup func(string) (string, bool), def time.Duration) time.Duration {
	if v, ok := lookup(env); ok {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	if opt > 0 {
		return opt
	}
	return def
}

// Config returns the resolved configuration in force (the last one given to
// New or Apply).
func (h *Host) Config() *config.Resolved {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg
}

func (h *Host) workspace() string {
	if cfg := h.Config(); cfg != nil {
		return cfg.Workspace
	}
	return ""
}

func (h *Host) server(name string) (*server, error) {
	// A view's scope is asked outside h.mu: it may read settings.
	if !h.scope.includes(name) {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	s, ok := h.servers[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	return s, nil
}

func (h *Host) all() []*server {
	h.mu.Lock()
	out := make([]*server, 0, len(h.order))
	for _, n := range h.order {
		out = append(out, h.servers[n])
	}
	h.mu.Unlock()
	if h.scope != nil {
		// Asked outside h.mu: a view's scope may read settings.
		out = slices.DeleteFunc(out, func(s *server) bool { return !h.scope.includes(s.name) })
	}
	return out
}

// Status returns a snapshot of every server, sorted by name.
func (h *Host) Status() []ServerStatus {
	var out []ServerStatus
	closed := h.ctx.Err() != nil
	for _, s := range h.all() {
		st := s.status()
		h.pinStatus(&st)       // pins.go
		h.promptPinStatus(&st) // promptpins.go
		h.scopeCount(s, &st)
		if closed && (st.State == StateConnected || st.State == StateConnecting) {
			// Stopped by Close, which tells no one (no event): not
			// "connected" to a server that is gone.
			st.State, st.Reason, st.Reconnecting, st.NextTry = StateDisabled, ClosedReason, false, time.Time{}
		}
		out = append(out, st)
	}
	return out
}

// ClosedReason is the Reason of a server that was running when its Host
// was closed (state disabled).
const ClosedReason = "stopped: the host was closed"

// scopeCount counts in st only the tools a view's own filter (a
// profile's) leaves its model.
func (h *Host) scopeCount(s *server, st *ServerStatus) {
	if h.scope == nil || h.scope.Tools == nil {
		return
	}
	s.mu.Lock()
	known := s.known
	s.mu.Unlock()
	if known == nil {
		return
	}
	visible := make([]*mcp.Tool, 0, len(known))
	for _, t := range known {
		if hid, _ := h.scope.hidden(t.Name); !hid {
			visible = append(visible, t)
		}
	}
	if len(visible) < len(known) {
		st.Tools, st.Tokens = len(visible), toolsurface.ToolBlockTokens(visible)
	}
}

// WaitReady waits until no server is connecting, or ctx is done. It
// reports whether every server settled; once the Host is closed it
// returns false at once (its servers are stopped: none is ready).
func (h *Host) WaitReady(ctx context.Context) bool {
	for _, s := range h.all() {
		if !s.waitSettled(ctx) {
			return false
		}
	}
	return !h.Closed()
}

// Pause stops a server for this session only (never a file) and shows it as
// paused; Resume undoes it.
func (h *Host) Pause(name string) error {
	s, err := h.server(name)
	if err != nil {
		return err
	}
	s.pause()
	return nil
}

// Resume starts a paused server, and tries a server in error again at once
// (as Retry does); a server that is connected or connecting is left alone.
// It returns an error wrapping ErrNotConnected when the server could not
// be started (disabled, held by launch trust, an invalid definition), with
// its state and reason.
func (h *Host) Resume(name string) error {
	s, err := h.server(name)
	if err != nil {
		return err
	}
	return s.resume()
}

// Retry rebuilds a server's runtime and starts it at once: it closes any
// connection, resets the circuit breaker and the budget of quick retries,
// and connects again. Its error is Resume's.
func (h *Host) Retry(name string) error {
	s, err := h.server(name)
	if err != nil {
		return err
	}
	s.retry()
	return s.notStarted()
}

// Close stops every server (stdin close → SIGTERM to its process group →
// SIGKILL) concurrently and waits for them. It is idempotent. A call that
// was waiting for its server to connect or reconnect (an idempotent call
// cut by the stop is one), or for its Permit (a person's answer: the
// Permit's ctx is done then), ends with an error wrapping ErrClosed; a call
// the stop cut that may not be retried ends as any cut call does
// (ErrMayHaveRun).
func (h *Host) Close() error {
	if h.scope != nil {
		return nil // a view's servers are its Host's
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	var wg sync.WaitGroup
	for _, s := range h.all() {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
	return nil
}

// Closed reports whether the Host was closed: by Close, or because the
// context Start was given is done. A view reports its Host's. Once true it
// stays true; Apply then does nothing, and calls and lists fail with
// ErrClosed. Safe for concurrent use.
func (h *Host) Closed() bool { return h.open() != nil }

// Done is closed when the Host closes (Close, or the context Start was
// given is done), as soon as Close begins: what serves the Host (a
// watcher of its files, say) ends then. A view's is its Host's.
func (h *Host) Done() <-chan struct{} { return h.ctx.Done() }

// RedactLogger returns l (nil: discard) with every record scrubbed as the
// Host's own are: the shapes secrets take, and every secret
// value the Host knows — configured env and header values, what ${VAR}
// expansion put in a URL, helper output. A gateway or command that logs
// the Host's errors logs through it. Safe for concurrent use; the values
// the Host learns later are scrubbed too.
func (h *Host) RedactLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(redact.HandlerWith(l.Handler(), h.secrets))
}

// Redact returns text with what the Host's logs hide replaced by
// "<redacted>": every secret value the Host knows (configured env and
// header values, what ${VAR} expansion put in a URL, helper output, the
// secret-named or token-shaped variables of its environment), the shapes
// secrets take in text (`Authorization: …`, `?access_token=…`, PEM
// keys…) and credentials of a known form (ghp_…, sk-…, AKIA…, JSON Web
// Tokens…). A gateway's audit log applies it to every string it writes.
// Safe for concurrent use.
func (h *Host) Redact(text string) string { return h.secrets.String(text) }

func (h *Host) emit(ev Event) {
	if h.opts.OnEvent != nil {
		h.opts.OnEvent(ev)
	}
	h.subMu.Lock()
	fns := make([]func(Event), 0, len(h.subs))
	for _, sub := range h.subs {
		if sub.ctx.Err() == nil { // ended, and not removed yet
			fns = append(fns, sub.fn)
		}
	}
	h.subMu.Unlock()
	for _, fn := range fns {
		fn(ev)
	}
}

// Subscribe calls fn with every event (Options.OnEvent's) from now until
// ctx is done: an event after ctx is done is not delivered. fn runs on the
// Host's goroutines and must not block: Close called in fn never returns
// (it waits for the goroutine fn runs on); hand such work to another
// goroutine.
func (h *Host) Subscribe(ctx context.Context, fn func(Event)) {
	if h.scope != nil {
		h.subscribeView(ctx, fn)
		return
	}
	h.subMu.Lock()
	id := h.nextSub
	h.nextSub++
	h.subs[id] = subscription{ctx, fn}
	h.subMu.Unlock()
	context.AfterFunc(ctx, func() {
		h.subMu.Lock()
		delete(h.subs, id)
		h.subMu.Unlock()
	})
}

type subscription struct {
	ctx context.Context
	fn  func(Event)
}

// toolName is how the Host names a server's tool for a model.
func toolName(server, tool string) string { return toolsurface.ToolName(server, tool) }

// serverSecrets are the values of one server to scrub from every message:
// its env and header values that are secrets (as expanded), and whatever
// ${VAR} expansion put in its URL's userinfo, path, query or fragment
// (redact.URLExpansions): a variable's name says nothing of its value, and
// net/http quotes the whole URL in a dial error.
func serverSecrets(rs config.ResolvedServer) []string {
	out := redact.Secrets(rs.Effective.Env, rs.Effective.Headers)
	if w := rs.Written.URL; strings.Contains(w, "${") {
		template, _ := config.Expand(w, func(string) (string, bool) { return redact.Mark, true })
		for _, v := range redact.URLExpansions(template, rs.Effective.URL) {
			// An unset variable keeps its placeholder: that names a secret,
			// it is not one (and the URL is shown as written).
			if !unexpanded(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// unexpanded reports whether v is made of ${…} placeholders only.
func unexpanded(v string) bool {
	for v != "" {
		if !strings.HasPrefix(v, "${") {
			return false
		}
		end := strings.IndexByte(v, '}')
		if end < 0 {
			return false
		}
		v = v[end+1:]
	}
	return true
}

// knownSecrets collects the values to scrub from every message: each
// server's secrets (serverSecrets), and the
// parent environment's secret-named or token-shaped values (expansion can
// put them in args or URLs).
func knownSecrets(cfg *config.Resolved, environ []string) *redact.Set {
	set := &redact.Set{}
	if cfg != nil {
		for _, rs := range cfg.Servers {
			set.Add(serverSecrets(rs)...)
		}
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		// SSH_AUTH_SOCK, XAUTHORITY: secret-named paths, not secrets;
		// scrubbing them would garble every message naming a file.
		if redact.LooksSecret(v) || redact.IsSecretKey(k) && !strings.ContainsAny(v, `/\`) {
			set.Add(v)
		}
	}
	return set
}
