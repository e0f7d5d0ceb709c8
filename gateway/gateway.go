// Package gateway re-serves the servers of a [switchboard.Switchboard] (the
// front door) as one MCP server (docs/gateway.md): every connected
// server's tools as <server>__<tool> (the client adds its own
// mcp__<entry>__, so the name is cut to Options.NameBudget; schemas
// cleaned), its prompts as <server>:<prompt> and its resources and
// resource templates under their own URIs. A read of a URI goes to the
// server that lists it or, failing that, to the first server (by name)
// with a template that matches it.
//
// The gateway is a plug-in of the front door, never the other way round:
//
//	sb, _ := switchboard.Open(ctx, opts) // launch trust, rules, the host
//	g := gateway.New(sb, gopts)          // follows sb (Subscribe), calls through sb.CallWith
//	g.Run(ctx, transport)                // its *mcp.Server on any transport
//
// A Gateway owns one *mcp.Server. Serve it on any transport of the
// official Go SDK with [Gateway.Run]: on stdio, [Stdio] (what `switchboard
// serve --stdio` serves on; [mcp.StdioTransport] speaks the same wire, but
// its blocking read of stdin can stall a Go 1.26 process for 60 s); or over HTTP with [Gateway.Handler] (the SDK's
// Streamable HTTP handler behind every protection of `switchboard serve
// --http`). Both answer a plain tools/call without the SDK's decoding of
// it (the fast path: the same middleware, handler and answer bytes).
// Serving Server() yourself, wrap the transport with [Gateway.Transport],
// or an HTTP request with [Gateway.BindHTTP], so that a question the
// gateway withdraws from a client reaches it before the call's answer. Calls go through
// [switchboard.Switchboard.CallWith] — the one path of the library and of
// `switchboard call`, with the host's breaker, timeouts and retry rule —
// and their results reach the client in the envelope a model must see,
// large results spilled or truncated (toolsurface.Present). Progress
// notifications of upstream servers are forwarded to the calling client
// under the client's own progress token, and a client's cancellation
// cancels the upstream call (the host sends notifications/cancelled).
//
// The gateway's lists follow the Switchboard: New subscribes to its
// events ([switchboard.Switchboard.Subscribe]), and after a list change, a
// server's new state or a reload the gateway re-lists and applies the
// difference with AddTool/RemoveTools…, which makes the SDK send
// list_changed to every connected client.
//
// Two helpers go into the Switchboard's options, since it is opened
// first: [Asker] puts a permission question to the client whose call
// needs it, as an elicitation (switchboard.Options.Permit building a
// [NewPermit] with it), and [Prompter] (host.Options.Prompter, through
// switchboard.Options.Host) hands an upstream server's elicitation to the
// client whose call it belongs to. Both find that client through the
// call's context, so one Switchboard can serve many clients at once. The
// same Asker, as the gateway's Options.ToolChanges, asks a client that
// calls a tool held by tool pinning whether to accept its new definition.
package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/tasks"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// DefaultDescriptionMax caps a re-served tool's description, in characters,
// as the host caps what a model sees.
const DefaultDescriptionMax = 2048

// Options configure a Gateway. A nil *Options uses every default.
type Options struct {
	// Logger receives structured logs. If nil, logs are discarded. It must
	// never write to the stdio transport's stdout.
	Logger *slog.Logger
	// Name and Version identify the gateway to its clients. Defaults:
	// "switchboard", host.Version.
	Name, Version string
	// Instructions, if set, are sent to clients at initialize.
	Instructions string
	// DescriptionMax caps tool descriptions. If <= 0, DefaultDescriptionMax.
	DescriptionMax int
	// NameBudget is the longest tool name served (toolsurface.ServedName):
	// a client puts its own prefix before it (Claude Code's is
	// mcp__<entry>__), and the whole must stay within 64 characters. If
	// <= 0, toolsurface.DefaultNameBudget (room for mcp__switchboard__);
	// otherwise clamped to [toolsurface.MinNameBudget, 64].
	NameBudget int
	// AdminTools adds switchboard__pause and switchboard__resume, which
	// pause and resume one upstream server for this gateway's life.
	AdminTools bool
	// Output decides how large results are presented (toolsurface.Present):
	// over the limit they are written to a file under Output.StateDir —
	// useful only when the client runs on this machine — or truncated. If
	// nil, the default limit applies and large results are truncated.
	Output *toolsurface.OutputOptions
	// SyncDebounce is how long the gateway waits after a host event for
	// more events before it re-lists. If <= 0, 50 ms.
	SyncDebounce time.Duration
	// FirstSyncWait is how long a client's request about the servers'
	// items (a list, a call, a prompt, a read) waits for the gateway's
	// first sync (see ConnectWait). Requests after it never wait for a
	// sync (but see CallWait), and initialize, ping and notifications
	// never do: a client is answered at once however slow a server is to
	// start. If <= 0, nothing waits (a client gets what is synced so far,
	// and list_changed as more comes).
	FirstSyncWait time.Duration
	// ConnectWait is how long the first sync waits, counted from New, for
	// servers still connecting (host.WaitReady): a client that lists
	// right after the gateway started then finds the servers that start
	// quickly, and a slow one arrives later with list_changed. Each sync
	// also waits up to the host's own ToolsWait for each server still
	// connecting (a host for a gateway should have none: ToolsWait -1,
	// as serve's has, so that one slow server holds up no list). If <= 0,
	// the first sync waits only the host's ToolsWait.
	ConnectWait time.Duration
	// CallWait is how long a call of a tool the gateway does not serve
	// (yet) waits, while servers are still connecting, for a sync that
	// serves it: a client that calls a tool it knows without listing
	// first (a client that reconnects, a one-shot call) finds it once its
	// server is up. A call whose name is namespaced by a server still
	// connecting ("github__…") waits for that server however long its
	// start takes (the host bounds it by its startup timeout), then for
	// the sync after it. A name no server brings is refused as unknown
	// then. If <= 0, such a call is refused at once.
	CallWait time.Duration
	// Stateless tells the gateway that requests without a session ID are
	// served by a stateless HTTP handler (all of them with serve
	// --stateless; those of clients on 2026-07-28, which have no
	// sessions, on any HTTP gateway), which cannot send a client on a
	// protocol before 2026-07-28 anything outside a call: such clients
	// are not offered list_changed, and a request without a session ID
	// is a session of its own ("allow for this session" is not offered
	// to it). Sessions with an ID (served by a stateful handler, see
	// SessionID) keep all of it. Handler and Endpoint set it: a
	// gateway served over HTTP is stateless in this sense, whatever
	// this says.
	Stateless bool
	// SessionID, if set, makes the IDs of the sessions a stateful HTTP
	// handler creates for this gateway (mcp.ServerOptions.GetSessionID):
	// serve's scale-out seals the address of the instance that holds a
	// session into its ID, so that any instance can pass the session's
	// requests to it.
	SessionID func() string
	// Instance names this gateway in the requestStates of calls held for
	// an upstream server's question (HeldCallInstance); it must not
	// contain ".". If empty, a random name: a retry that reaches another
	// gateway is refused. serve's scale-out seals the instance's address
	// into it, so that any instance can pass the retry on.
	Instance string
	// ElicitationTimeout is how long a question that an upstream server
	// asks during a call of a client on protocol 2026-07-28 waits for the
	// client's retry with the answer; then the question is withdrawn and
	// the upstream call cancelled. The call's own timeout (host) bounds
	// the whole call, questions included. If <= 0,
	// DefaultElicitationTimeout.
	ElicitationTimeout time.Duration
	// Auth, if set, knows the principals of an HTTP gateway (the callers
	// the HTTP handler authenticated): their rate limits apply to their
	// calls, and NewPermit scopes rules to them. If nil, callers are
	// anonymous.
	Auth *Auth
	// Audit, if set, receives one line per tool call.
	Audit *AuditLog
	// Metrics, if set, counts calls, decisions and latencies.
	Metrics *Metrics
	// Tracing, if set, traces calls (OpenTelemetry, OTLP).
	Tracing *Tracing
	// Members, if set, runs the calls of the servers Auth's file marks
	// perMember as their callers, with their own credentials (member.go).
	Members *Members
	// ToolChanges, if set, is asked about the change that holds a tool
	// a client calls (tool pinning: its definition changed since it was
	// pinned, and it is not listed until accepted); an [*Asker] puts the
	// question to that client as an elicitation, and an accepted change
	// is pinned as `switchboard tools accept` pins it (the call goes on,
	// and every client gets list_changed). If nil, or when the client
	// cannot be asked, such a call is refused with an error result naming
	// `switchboard tools accept`.
	ToolChanges switchboard.ToolChangeAsker
}

// legacyProtocol reports whether an HTTP request names a protocol before
// 2026-07-28 in its MCP-Protocol-Version header (or none, which means
// 2025-03-26).
func legacyProtocol(req *mcp.CallToolRequest) bool {
	if req.Extra == nil || req.Extra.Header == nil {
		return false
	}
	v := req.Extra.Header.Get("Mcp-Protocol-Version")
	return v < "2026-07-28"
}

// sessionless reports whether ss is the session of one stateless HTTP
// request, which ends with it.
func (g *Gateway) sessionless(ss *mcp.ServerSession) bool {
	return g.stateless() && (ss == nil || ss.ID() == "")
}

// stateless reports whether requests without a session ID are stateless
// HTTP requests: Options.Stateless says so, and so does a Handler or
// Endpoint made of the gateway (over HTTP they always are).
func (g *Gateway) stateless() bool {
	return g.opts.Stateless || g.servesHTTP.Load()
}

// Gateway aggregates a host's servers into one MCP server. Its methods are
// safe for concurrent use.
type Gateway struct {
	sb   *switchboard.Switchboard
	h    *host.Host // sb.Host()
	opts Options
	// servesHTTP is set once a Handler or Endpoint is made: its requests
	// without a session are stateless, whatever Options.Stateless says.
	servesHTTP atomic.Bool
	log        *slog.Logger
	srv        *mcp.Server
	// relay holds calls whose upstream server asked a 2026-07-28 client
	// a question.
	relay *relay
	// calls are the tool calls in flight, to cancel when their client
	// goes away or the gateway shuts down.
	calls calls
	// records are the audit records of calls waiting for an answer.
	records records
	// tasks are the calls task-capable clients run as tasks (tasks.go).
	tasks *tasks.Store
	// taskSessions are the sessions whose end forgets their tasks
	// (watchTasks).
	taskMu       sync.Mutex
	taskSessions map[*mcp.ServerSession]map[string]bool

	kick   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	syncMu sync.Mutex           // one sync at a time
	mu     sync.Mutex           // guards the maps below
	tools  map[string]toolRoute // gateway tool name → route
	// held are the routes of the tools tool pinning holds, by the name
	// each is served under once accepted (heldRoutes); anyHeld says
	// whether there is one, without the lock (routeHeld, on every call).
	held      map[string]toolRoute
	anyHeld   atomic.Bool
	prompts   map[string]promptRoute
	resources map[string]resourceRoute
	templates map[string]resourceRoute // URI template → route
	// matchOrder is the order in which reads try the templates: the served
	// ones, by server name, then URI template.
	matchOrder []templateMatch
	synced     chan struct{} // closed after the first sync
	// resynced is closed, and replaced, after every sync of the loop
	// (under mu); syncsEnded then counts the loop's syncs that ended
	// (under mu), syncsBegun those that began.
	resynced   chan struct{}
	syncsEnded uint64
	syncsBegun atomic.Uint64
	born       time.Time // when New ran: ConnectWait counts from it
	// hostOf maps the served name of every tool, deferred ones too, to
	// the host's name (tool_search speaks of host names).
	hostOf map[string]string
	// foundNames rewrites the host's names in tool_search's results to
	// the served ones, in one pass; built on the first tool_search after
	// a sync.
	foundNames func() *strings.Replacer
	syncOnce   sync.Once
	// toolsMoving is set while a sync changes the served tools, between
	// g.tools and the SDK's registry: the HTTP fast path (http_fast.go)
	// leaves those calls to the SDK, which answers from its registry.
	toolsMoving atomic.Bool
	// mws are the receiving middlewares New gave the SDK's server, in
	// order, and fastChain the same chain around the tool handler, for
	// the calls the HTTP fast path answers without the SDK.
	mws       []mcp.Middleware
	fastChain mcp.MethodHandler
	// fastCalls counts the calls the fast path answered.
	fastCalls atomic.Int64
	// handoffs are the fast calls being handed over to the SDK's
	// handler, by their handoffHeader (under calls.mu).
	handoffs map[string]*handoff
	// handedOver counts the fast calls handed over.
	handedOver atomic.Int64
	// stand is the session the fast path's 2026-07-28 calls run under.
	stand standIn
	// streams are the standalone streams served on connections of their
	// own (http_stream.go), ended at shutdown.
	streams streamSet
	// infoMeta is serverInfoMeta's JSON, made once.
	infoMetaOnce sync.Once
	infoMeta     []byte
	// metas remembers what fastMeta made of the _meta texts 2026-07-28
	// clients send (the same text on every call).
	metas metaCache
}

// toolRoute is where a served tool name goes: the host's name for it
// (mcp__<server>__<tool>, which host.Call routes exactly and the
// permission rules match), and the server's own names for the envelope.
type toolRoute struct {
	server, tool, hostName, fp string
	// app: the tool links an MCP App (apps.go), whose result the client
	// gets with its structured content.
	app bool
	// paramHeaders: its schema names x-mcp-header parameters, which the
	// SDK checks against a 2026-07-28 request's headers (the HTTP fast
	// path leaves those calls to it).
	paramHeaders bool
}

type promptRoute struct {
	server, prompt, fp string
}

type resourceRoute struct {
	server, fp string
	// uri is the server's own URI for a resource served under another
	// (an App's, AppURI); "" when the same.
	uri string
}

type templateMatch struct {
	uriTemplate, server string
	re                  *regexp.Regexp
}

// New builds a Gateway that serves sb's servers and starts keeping its
// lists in sync in the background: it follows sb's events (a server that
// connects, a list that changes, a reload). Its calls go through
// sb.CallWith, as the library's and the CLI's do. Call Close when done,
// before sb's Close (it does not close sb).
func New(sb *switchboard.Switchboard, opts *Options) *Gateway {
	h := sb.Host()
	g := &Gateway{
		sb:        sb,
		h:         h,
		kick:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		tools:     map[string]toolRoute{},
		prompts:   map[string]promptRoute{},
		resources: map[string]resourceRoute{},
		templates: map[string]resourceRoute{},
		synced:    make(chan struct{}),
		resynced:  make(chan struct{}),
		born:      time.Now(),
	}
	if opts != nil {
		g.opts = *opts
	}
	o := &g.opts
	// Warnings quote the Host's errors, and a dial error quotes a URL
	// whose ${VAR} values are secrets: scrub what the Host knows.
	o.Logger = h.RedactLogger(o.Logger)
	if o.Name == "" {
		o.Name = "switchboard"
	}
	if o.Version == "" {
		o.Version = host.Version
	}
	if o.DescriptionMax <= 0 {
		o.DescriptionMax = DefaultDescriptionMax
	}
	if o.NameBudget <= 0 {
		o.NameBudget = toolsurface.DefaultNameBudget
	}
	o.NameBudget = min(max(o.NameBudget, toolsurface.MinNameBudget), toolsurface.MaxNameLen)
	if o.SyncDebounce <= 0 {
		o.SyncDebounce = 50 * time.Millisecond
	}
	if o.ElicitationTimeout <= 0 {
		o.ElicitationTimeout = DefaultElicitationTimeout
	}
	if o.Output == nil {
		o.Output = &toolsurface.OutputOptions{} // truncated, never written
	}
	g.log = o.Logger
	g.relay = newRelay(o.Instance, o.ElicitationTimeout, o.Logger)
	g.calls.init()
	g.srv = mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{
		Instructions: o.Instructions,
		GetSessionID: o.SessionID,
		// A list_changed that cannot reach a client that left without
		// ending its session is logged once a minute, not per session.
		Logger:            quietNotifications(o.Logger),
		CompletionHandler: g.complete,
		// Servers come and go: advertise every list, with list_changed,
		// even while it is empty.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
		},
	})
	// Innermost: a held tool's call reaches the call path like a served one.
	g.use(g.routeHeld)
	g.use(g.heldPrompt)
	if o.AdminTools {
		g.addAdminTools()
	}
	// Set now, or later by Handler or Endpoint (g.stateless).
	g.use(func(next mcp.MethodHandler) mcp.MethodHandler {
		caps := statelessCaps(next)
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if g.stateless() {
				return caps(ctx, method, req)
			}
			return next(ctx, method, req)
		}
	})
	// Outermost: a call's cancellation and timeout cover all of it.
	g.use(g.trackCalls)
	g.srv.AddSendingMiddleware(trackQuestions)
	// A client that stops reading its stream holds up its own
	// list_changed only, not every session's after it.
	g.srv.AddSendingMiddleware(newNotifyApart(quietNotifications(o.Logger)).middleware)
	if g.observing() {
		// Around even that: the audit line and metrics see the answer the
		// client gets, timeouts included.
		g.use(g.observe)
		if o.Metrics != nil {
			o.Metrics.bind(g)
		}
	}
	// Around those: a call run as a task goes through everything above,
	// once, after its tools/call is answered.
	g.tasks = tasks.NewStore()
	g.taskSessions = map[*mcp.ServerSession]map[string]bool{}
	g.use(g.serveTasks)
	if err := g.tasks.Serve(g.srv, taskOwnerFrom); err != nil {
		panic("gateway: " + err.Error()) // the method names are constants
	}
	if o.FirstSyncWait > 0 || o.CallWait > 0 {
		// Around all: the record's route lookup must see the first sync,
		// and so must the tasks' (whether a tool runs as a task).
		g.use(g.waitFirstSync)
	}
	// Outside everything, and only on the SDK's server: a fast call
	// handed over when it asks is not run again (http_handoff.go).
	g.srv.AddReceivingMiddleware(g.takeHandoff)
	g.fastChain = g.fastTool
	for _, mw := range g.mws {
		g.fastChain = mw(g.fastChain)
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	sb.Subscribe(g.ctx, g.HandleEvent)
	go g.loop()
	g.Kick()
	return g
}

// use adds mw to the SDK server's receiving middleware and to the chain of
// the HTTP fast path, in the same order.
func (g *Gateway) use(mw mcp.Middleware) {
	g.srv.AddReceivingMiddleware(mw)
	g.mws = append(g.mws, mw)
}

// SetInstance renames the gateway in the requestStates of the calls it
// holds from now on (Options.Instance): a scale-out front whose keys
// changed seals the instance's address again. Calls held already keep
// the name they were issued under. An empty name, or one with ".", is
// ignored.
func (g *Gateway) SetInstance(name string) { g.relay.setInstance(name) }

// Server returns the MCP server to connect transports to. For HTTP, serve
// [Gateway.Handler], which carries the HTTP protections around it.
func (g *Gateway) Server() *mcp.Server { return g.srv }

// Host returns the host the gateway serves.
func (g *Gateway) Host() *host.Host { return g.h }

// HandleEvent tells the gateway about an event of its Switchboard (New
// subscribes it); lists are re-read after list changes, tool changes that
// tool pinning found (a call may find one first), state changes and
// reloads. It never blocks.
func (g *Gateway) HandleEvent(ev host.Event) {
	switch ev.Kind {
	case host.EventToolsChanged, host.EventToolChange, host.EventPromptsChanged, host.EventResourcesChanged, host.EventState, switchboard.EventReloaded:
		g.Kick()
	}
}

// Kick asks for a re-sync in the background. It never blocks; kicks that
// arrive while one is pending are merged.
func (g *Gateway) Kick() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// noSyncWait are the requests answered without waiting for the first
// sync: the session's own, which know nothing of the servers.
var noSyncWait = map[string]bool{"initialize": true, "ping": true, "server/discover": true, "logging/setLevel": true, "subscriptions/listen": true}

// waitFirstSync holds a request about the servers' items (a list, a call,
// a prompt, a read) until the first sync has finished, at most
// Options.FirstSyncWait, so that a client that calls a tool it knows
// without listing first finds it; and a call of a tool not served yet
// while servers are still connecting up to Options.CallWait
// (waitForTool).
func (g *Gateway) waitFirstSync(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		select {
		case <-g.synced:
			// Synced: no request waits again, so none pays for a timer.
		default:
			if g.opts.FirstSyncWait > 0 && !noSyncWait[method] && !strings.HasPrefix(method, "notifications/") {
				wctx, cancel := context.WithTimeout(ctx, g.opts.FirstSyncWait)
				_ = g.WaitSynced(wctx)
				cancel()
			}
		}
		creq, _ := req.(*mcp.CallToolRequest)
		if method != "tools/call" || creq == nil || creq.Params == nil {
			return next(ctx, method, req)
		}
		if g.opts.CallWait > 0 {
			g.waitForTool(ctx, creq.Params.Name)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			// Only a refused call pays for asking why (a held server).
			if herr := g.heldServerCall(creq.Params.Name); herr != nil {
				return nil, herr
			}
		}
		return res, err
	}
}

// waitForTool waits until the gateway serves the tool name while a server
// that may bring it is still connecting: for as long as the server the
// name is namespaced by ("github__…": github) takes to start, which the
// host bounds by its startup timeout, and otherwise at most
// Options.CallWait. A one-shot client calling a tool of an npx server
// whose package is still downloading gets its answer, not "unknown tool".
// A served name (every call but the rare one of a tool not listed yet)
// returns at once.
func (g *Gateway) waitForTool(ctx context.Context, name string) {
	var deadline <-chan time.Time
	arm := func() {
		if deadline == nil {
			t := time.NewTimer(g.opts.CallWait)
			deadline = t.C
			// The timer is left to the GC: this is the rare call.
		}
	}
	seen := false    // its server was seen connecting
	var after uint64 // then, once it is up: the sync that must end first
	for {
		g.mu.Lock()
		served := g.servesLocked(name)
		next, ended := g.resynced, g.syncsEnded
		g.mu.Unlock()
		if served {
			return
		}
		owner, some := g.connectingFor(name)
		switch {
		case owner:
			// Its server is still starting: no bound of ours (not even
			// one armed before it was seen starting).
			seen, deadline = true, nil
		case after > 0 && ended >= after:
			return // a sync begun after its server was up did not bring it
		case after > 0:
			// Wait for that sync (bounded: it may have begun already).
		case seen:
			after = g.syncsBegun.Load() + 1
			arm()
		case !some:
			return
		default:
			arm()
		}
		select {
		case <-next:
		case <-deadline:
			return
		case <-ctx.Done():
			return
		case <-g.ctx.Done():
			return // closed: no sync will come
		}
	}
}

// heldServerCall is the error for a call of a tool the gateway does not
// serve whose name is namespaced by a project server held for approval:
// the SDK's "unknown tool" would not say why, nor what to do. nil for
// every other call.
func (g *Gateway) heldServerCall(name string) error {
	g.mu.Lock()
	served := g.servesLocked(name)
	g.mu.Unlock()
	if served {
		return nil
	}
	for _, s := range g.h.Status() {
		if s.State != host.StateNeedsApproval && s.State != host.StateApprovalStale {
			continue
		}
		if namespacedBy(name, s.Name) {
			why := "has not been approved"
			if s.State == host.StateApprovalStale {
				why = "changed since it was approved"
			}
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
				"unknown tool %q: project server %s %s in this workspace, so it is not started; the user can approve it with `switchboard mcp approve %s`",
				name, termsafe.Line(s.Name), why, termsafe.Line(s.Name))}
		}
	}
	return nil
}

// servesLocked reports whether the gateway answers a call of name: a tool
// it serves, or one tool pinning holds (the host answers: held, or asked
// about). g.mu is held.
func (g *Gateway) servesLocked(name string) bool {
	_, served := g.tools[name]
	_, held := g.held[name]
	return served || held
}

// namespacedBy reports whether the served tool name is namespaced by
// server ("github__…" for github).
func namespacedBy(name, server string) bool {
	return strings.HasPrefix(name, toolsurface.SanitizePart(server)+toolsurface.Separator)
}

// connectingFor reports whether the server a served tool name is
// namespaced by is still connecting (owner), and whether any is (some).
func (g *Gateway) connectingFor(name string) (owner, some bool) {
	for _, s := range g.h.Status() {
		if s.State != host.StateConnecting {
			continue
		}
		some = true
		if namespacedBy(name, s.Name) {
			owner = true
		}
	}
	return owner, some
}

// WaitSynced waits until the first sync has finished or ctx is done.
func (g *Gateway) WaitSynced(ctx context.Context) error {
	select {
	case <-g.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the sync loop and cancels the calls held for a client's
// answer; a 2026-07-28 client's call made after Close is refused. It does
// not close the host. It is idempotent.
func (g *Gateway) Close() error {
	g.streams.endAll()
	g.closeStandIn()
	g.tasks.Close()
	g.relay.close()
	g.cancel()
	<-g.done
	return nil
}

func (g *Gateway) loop() {
	defer close(g.done)
	first := true
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-g.kick:
		}
		// Merge a burst of events (a server connecting emits several).
		// Not before the first sync: New's kick is the only event, and a
		// client's first request waits for it. That one gives servers
		// still connecting what is left of ConnectWait; later servers
		// arrive with their own events.
		if first && g.opts.ConnectWait > 0 {
			wctx, cancel := context.WithDeadline(g.ctx, g.born.Add(g.opts.ConnectWait))
			g.h.WaitReady(wctx)
			cancel()
		}
		if !first {
			t := time.NewTimer(g.opts.SyncDebounce)
			select {
			case <-g.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		first = false
		select {
		case <-g.kick:
		default:
		}
		begun := g.syncsBegun.Add(1)
		if err := g.Sync(g.ctx); err != nil && g.ctx.Err() == nil {
			g.log.Warn("gateway sync failed", "error", err)
		}
		g.syncOnce.Do(func() { close(g.synced) })
		g.mu.Lock()
		g.syncsEnded = begun
		close(g.resynced)
		g.resynced = make(chan struct{})
		g.mu.Unlock()
	}
}

// Sync re-lists the host's tools, prompts, resources and resource templates
// now and applies the difference to the gateway's server. Items that did
// not change are not touched, so clients get list_changed only for real
// changes.
func (g *Gateway) Sync(ctx context.Context) error {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	// The four lists at once: each waits up to the host's ToolsWait for a
	// server still connecting, and one after the other they would wait
	// four times as long. Each keeps its own routes.
	kinds := []struct {
		name string
		sync func(context.Context) error
	}{{"tools", g.syncTools}, {"prompts", g.syncPrompts}, {"resources", g.syncResources}, {"resource templates", g.syncTemplates}}
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, k := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := k.sync(ctx); err != nil {
				errs[i] = fmt.Errorf("%s: %w", k.name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fingerprint is a digest of the JSON of what a client sees of an item:
// equal fingerprints need no re-registration. A digest, not the JSON
// itself: a route lives as long as its tool, and a server's schemas ran to
// 20 KB of fingerprints each (docs/benchmarks.md, "The floor").
func fingerprint(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return string(sum[:])
}

func (g *Gateway) syncTools(ctx context.Context) error {
	list, err := g.h.Tools(ctx)
	if err != nil {
		return err
	}
	for _, w := range list.Warnings {
		g.log.Info("gateway tools", "warning", w)
	}
	// Served names are the host's less "mcp__", cut to the budget; the
	// route keeps the host's name, so a call never re-parses a cut name.
	// A name two tools would share is served for neither (and an admin
	// tool's name for no server's tool).
	served := make([]toolsurface.ServedTool, len(list.Tools))
	for i, t := range list.Tools {
		served[i] = toolsurface.ServedTool{Server: t.Server, Tool: t.Tool.Name}
		if t.Server == "" {
			served[i] = toolsurface.ServedTool{Name: t.Name} // the host's own, tool_search
		}
	}
	var reserved []string
	if g.opts.AdminTools {
		reserved = []string{PauseTool, ResumeTool}
	}
	index, clashes := toolsurface.ServedRoutes(served, g.opts.NameBudget, reserved)
	for _, c := range clashes {
		g.log.Warn("tool not served: its name through the gateway is not unique", "tool", c.Name, "error", c)
	}
	want := map[string]*mcp.Tool{}
	routes := map[string]toolRoute{}
	for name, i := range index {
		t := list.Tools[i]
		st := g.serveTool(name, t)
		want[name] = st
		routes[name] = toolRoute{server: t.Server, tool: t.Tool.Name, hostName: t.Name, fp: fingerprint(st), app: st.Meta != nil,
			paramHeaders: namesParamHeaders(st.InputSchema)}
	}
	served = served[:0]
	for _, t := range list.Deferred {
		served = append(served, toolsurface.ServedTool{Server: t.Server, Tool: t.Tool.Name})
	}
	deferred := map[string]string{} // host name → served name, for tool_search
	later, _ := toolsurface.ServedRoutes(served, g.opts.NameBudget, reserved)
	for name, i := range later {
		deferred[list.Deferred[i].Name] = name
	}
	for name, r := range routes {
		deferred[r.hostName] = name
	}
	hostOf := make(map[string]string, len(deferred))
	for h, s := range deferred {
		hostOf[s] = h
	}
	foundNames := sync.OnceValue(func() *strings.Replacer { return foundNamesReplacer(deferred) })
	held := g.heldRoutes(routes, reserved)
	g.toolsMoving.Store(true)
	defer g.toolsMoving.Store(false)
	g.mu.Lock()
	g.hostOf, g.foundNames, g.held = hostOf, foundNames, held
	g.anyHeld.Store(len(held) > 0)
	var remove []string
	for name := range g.tools {
		if _, ok := want[name]; !ok && !isAdminTool(name) {
			remove = append(remove, name)
			delete(g.tools, name)
		}
	}
	type add struct {
		name string
		tool *mcp.Tool
	}
	var adds []add
	for name, t := range want {
		if g.tools[name] == routes[name] {
			continue
		}
		g.tools[name] = routes[name]
		adds = append(adds, add{name, t})
	}
	g.mu.Unlock()
	sort.Strings(remove)
	sort.Slice(adds, func(i, j int) bool { return adds[i].name < adds[j].name })
	if len(remove) > 0 {
		g.srv.RemoveTools(remove...)
	}
	for _, a := range adds {
		if err := addTool(g.srv, a.tool, g.callTool); err != nil {
			g.log.Warn("tool not served", "tool", a.name, "error", err)
			g.mu.Lock()
			delete(g.tools, a.name)
			g.mu.Unlock()
		}
	}
	if len(remove)+len(adds) > 0 {
		g.log.Info("gateway tools changed", "added", len(adds), "removed", len(remove))
	}
	return nil
}

// addTool is Server.AddTool, which panics on a schema it rejects; a tool
// the SDK will not serve is reported instead of ending the gateway.
func addTool(srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) error {
	return recoverPanic(func() { srv.AddTool(t, h) })
}

// serveTool is the definition a client sees of one host tool: the served
// name, a capped description, a schema normalized to an object, and the
// annotations (hints a client may use to ask more, never less). The output
// schema is dropped: results reach the client as the envelope.
func (g *Gateway) serveTool(name string, t host.Tool) *mcp.Tool {
	desc := toolsurface.CapDescription(t.Tool.Description, g.opts.DescriptionMax)
	if t.Server == "" && t.Name == host.ToolSearchName {
		desc = strings.ReplaceAll(desc, "mcp__server__tool", "server__tool")
	}
	st := &mcp.Tool{
		Name:        name,
		Title:       t.Tool.Title,
		Description: desc,
		InputSchema: toolsurface.NormalizeSchema(t.Tool.InputSchema),
		Annotations: t.Tool.Annotations,
	}
	if t.Server != "" {
		st.Meta = toolAppMeta(t.Server, t.Tool.Meta)
	}
	return st
}

// callTool runs one call through the host. Host errors (unknown tool,
// server down, circuit open, refused…) become error results the model can
// read; the result is the <mcp_response> envelope (see package
// toolsurface). A call of a client on
// protocol 2026-07-28 that declared elicitation runs on its own goroutine,
// so that an upstream server's question can go back to the client in the
// call's result (callMultiRoundTrip); one that cannot be asked (every
// question to it is declined: Prompter) runs here, as it cannot outlive
// its request.
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	rt := g.callRoute(ctx, name)
	var args json.RawMessage
	if len(req.Params.Arguments) > 0 {
		args = req.Params.Arguments
	} else {
		args = json.RawMessage("{}")
	}
	mrt := multiRoundTrip(req.Session)
	if mrt {
		if req.Params.RequestState != "" || declaresElicitation(req) {
			return g.callMultiRoundTrip(ctx, req, rt, args)
		}
		// Counted with the relay's calls, as on a worker: Close ends it.
		var end func()
		var err error
		if ctx, end, err = g.relay.track(ctx); err != nil {
			return g.refusal(name, err.Error()), nil
		}
		defer end()
	}
	var progress host.ProgressFunc
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		// Its own variable: a closure over ctx, which is set again
		// below, put ctx on the heap for every call.
		ss, pctx := req.Session, ctx
		progress = func(p *mcp.ProgressNotificationParams) {
			if err := forwardProgress(pctx, ss, tok, p); err != nil {
				g.log.Debug("progress not forwarded", "tool", name, "error", err)
			}
		}
	}
	ask := &askState{
		session:     g.askSession(req.Session),
		sessionless: g.sessionless(req.Session),
		caps:        req,
		responses:   req.Params.InputResponses,
		state:       req.Params.RequestState,
	}
	ask.legacyStateless = !mrt && ask.sessionless && legacyProtocol(req)
	ctx = context.WithValue(ctx, askKey{}, ask)
	start := time.Now()
	res, err := g.call(ctx, rt, args, progress)
	return g.result(ctx, rt, start, ask, res, err)
}

// call runs the tool served as name through the Switchboard's one call
// path (switchboard.Switchboard.CallWith), by the host's own name for it:
// the route holds the exact (server, tool), so permission rules see
// mcp__<server>__<tool> whatever the served name, and a cut name is never
// parsed. A name with no route (removed since the client listed it)
// reaches the host as is, which calls it unknown.
func (g *Gateway) call(ctx context.Context, rt resolved, args json.RawMessage, progress host.ProgressFunc) (*switchboard.Result, error) {
	co := &switchboard.CallOptions{Output: g.opts.Output, Progress: progress, ToolChanges: g.opts.ToolChanges}
	r := rt.r
	if !rt.ok || r.hostName == "" {
		return g.sb.CallWith(ctx, rt.name, args, co)
	}
	if r.hostName == host.ToolSearchName {
		return g.toolSearch(ctx, args, co)
	}
	ctx, end := g.traceUpstream(ctx, r.server, r.hostName)
	// A held tool's call never goes to a member's own connection: the
	// host holds it, or the client is asked about the change.
	if !rt.held {
		if mres, err, ok := g.callMember(ctx, rt, args); ok {
			end(mres, err)
			if err != nil {
				return nil, err
			}
			return g.sb.Present(r.hostName, mres, co), nil
		}
	}
	res, err := g.sb.CallWith(ctx, r.hostName, args, co)
	var raw *mcp.CallToolResult
	if res != nil {
		raw = res.Raw
	}
	end(raw, err)
	return res, err
}

// toolSearch runs tool_search with the names of the client's side: a
// select: of served names (or of served names behind a client's
// mcp__<entry>__) is a select of the host's names, and the tools found are
// named as the gateway serves them.
func (g *Gateway) toolSearch(ctx context.Context, args json.RawMessage, co *switchboard.CallOptions) (*switchboard.Result, error) {
	g.mu.Lock()
	hostOf, foundNames := g.hostOf, g.foundNames
	g.mu.Unlock()
	var in map[string]any
	if json.Unmarshal(args, &in) == nil {
		if q, ok := in["query"].(string); ok {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(q), "select:"); ok {
				names := strings.Split(rest, ",")
				for i, n := range names {
					n = strings.TrimSpace(n)
					if h, ok := hostOf[n]; ok {
						names[i] = h
					} else if _, after, ok := strings.Cut(strings.TrimPrefix(n, toolsurface.Prefix), toolsurface.Separator); ok && strings.HasPrefix(n, toolsurface.Prefix) && hostOf[after] != "" {
						names[i] = hostOf[after]
					}
				}
				in["query"] = "select:" + strings.Join(names, ",")
				if b, err := json.Marshal(in); err == nil {
					args = b
				}
			}
		}
	}
	o := *co
	o.Transform = func(res *mcp.CallToolResult) *mcp.CallToolResult {
		if res == nil {
			return res
		}
		for i, c := range res.Content {
			tc, ok := c.(*mcp.TextContent)
			if !ok {
				continue
			}
			text := tc.Text
			if foundNames != nil {
				if r := foundNames(); r != nil {
					text = r.Replace(text)
				}
			}
			res.Content[i] = &mcp.TextContent{Text: text, Meta: tc.Meta, Annotations: tc.Annotations}
		}
		res.StructuredContent = nil // the text says it, with the served names
		return res
	}
	return g.sb.CallWith(ctx, host.ToolSearchName, args, &o)
}

// foundNamesReplacer rewrites each {"name":"<host name>" of servedOf to
// {"name":"<served name>" in one pass over a text (a ReplaceAll per tool
// was a pass per tool, and could rename a name it had just written).
func foundNamesReplacer(servedOf map[string]string) *strings.Replacer {
	pairs := make([]string, 0, 2*len(servedOf))
	for h, s := range servedOf {
		if h != s {
			pairs = append(pairs, `{"name":"`+h+`"`, `{"name":"`+s+`"`)
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	return strings.NewReplacer(pairs...)
}

// result turns the host's answer to a call into the client's result: the
// permission question, an error result or the envelope.
func (g *Gateway) result(ctx context.Context, rt resolved, start time.Time, ask *askState, res *switchboard.Result, err error) (*mcp.CallToolResult, error) {
	name := rt.name
	if err != nil && ask.question != nil && errors.Is(err, host.ErrDenied) {
		// The permission question goes back to the client, which answers
		// and calls again (the SDK does this for older clients).
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{permissionInput: ask.question},
			RequestState:  ask.key,
		}, nil
	}
	server, tool := rt.names()
	// A call that worked is logged at debug: at info, every call of a
	// busy session was a synchronous write to the log file. Failures stay
	// at info.
	ok := err == nil && res != nil && !res.IsError
	level := slog.LevelInfo
	if ok {
		level = slog.LevelDebug
	}
	if g.log.Enabled(ctx, level) {
		g.log.Log(ctx, level, "gateway call", "tool", name, "duration_ms", time.Since(start).Milliseconds(), "ok", ok)
	}
	if err != nil {
		if ctx.Err() != nil && !host.IsTimeout(ctx, err) {
			return nil, ctx.Err()
		}
		msg := err.Error()
		if de := (*host.DeniedError)(nil); errors.As(err, &de) {
			hint := de.Hint
			if !de.Asked && ask.hint != "" {
				hint = ask.hint // why the Asker could not ask, which the host cannot know
			}
			if hint != "" {
				msg += "\nhint: " + hint
			}
		}
		if he := (*host.HeldToolError)(nil); errors.As(err, &he) {
			recordFrom(ctx).heldRefused()
			hint := he.Hint()
			if ask.hint != "" {
				hint = ask.hint + "; " + hint
			}
			msg += "\nhint: " + hint
		}
		return &mcp.CallToolResult{
			IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: toolsurface.Wrap(server, tool, true, msg)}},
		}, nil
	}
	if out := res.Output; out.Fallback == toolsurface.FallbackWriteError {
		g.log.Warn("could not save a large result, so it was truncated", "tool", name, "error", out.WriteErr)
	}
	served := &mcp.CallToolResult{
		IsError: res.IsError,
		Content: []mcp.Content{&mcp.TextContent{Text: res.Text}},
	}
	if rt.r.app {
		appResult(served, res.Raw)
	}
	return served, nil
}

// refusal is the error result of a call the gateway would not make.
func (g *Gateway) refusal(name, msg string) *mcp.CallToolResult {
	server, tool := g.routeOf(name)
	g.log.Info("gateway call refused", "tool", name, "reason", msg)
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: toolsurface.Wrap(server, tool, true, msg)}},
	}
}

// resolved is a served tool name with its route, looked up once for a
// call: every layer of the call (its timeout, the permission check, the
// envelope, the audit line) reads the same route.
type resolved struct {
	name string
	r    toolRoute
	ok   bool // the name has a route
	// held: the route is a held tool's (heldRoutes), not served.
	held bool
}

// resolve looks name's route up: a served tool's, else a held one's.
func (g *Gateway) resolve(name string) resolved {
	g.mu.Lock()
	r, ok := g.tools[name]
	held := false
	if !ok {
		r, held = g.held[name]
		ok = held
	}
	g.mu.Unlock()
	return resolved{name: name, r: r, ok: ok, held: held}
}

// callRoute is the route of the call of name in ctx: the one its audit
// record resolved (observe), or a fresh lookup.
func (g *Gateway) callRoute(ctx context.Context, name string) resolved {
	if rec := recordFrom(ctx); rec != nil && rec.route.name == name {
		return rec.route
	}
	return g.resolve(name)
}

// names returns the server's own names for a served tool, for the
// envelope; it falls back to the parts of the name.
func (rt resolved) names() (server, tool string) {
	if rt.ok && rt.r.server != "" {
		return rt.r.server, rt.r.tool
	}
	if rt.ok {
		return "switchboard", rt.name // the host's own tools (tool_search), the admin tools
	}
	server, tool, ok := strings.Cut(rt.name, toolsurface.Separator)
	if !ok {
		return "switchboard", rt.name
	}
	return server, tool
}

// hostNames returns the server's and tool's own names of a served tool
// ("" and the name for the gateway's own tools and unknown names).
func (rt resolved) hostNames() (server, tool string) {
	if rt.ok && rt.r.server != "" {
		return rt.r.server, rt.r.tool
	}
	return "", rt.name
}

// routeOf returns the server's own names for a served tool (names).
func (g *Gateway) routeOf(name string) (server, tool string) {
	return g.resolve(name).names()
}

// PromptName is the name a prompt of a server has through the gateway:
// <server>:<prompt>, as the slash command /<server>:<prompt>
// (toolsurface.SlashCommand).
func PromptName(server, prompt string) string { return server + ":" + prompt }

func (g *Gateway) syncPrompts(ctx context.Context) error {
	items, warnings, err := g.h.Prompts(ctx)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		g.log.Info("gateway prompts", "warning", w)
	}
	want := map[string]*mcp.Prompt{}
	routes := map[string]promptRoute{}
	for _, p := range items {
		name := PromptName(p.Server, p.Prompt.Name)
		if _, dup := want[name]; dup {
			continue
		}
		cp := *p.Prompt
		cp.Name = name
		cp.Description = toolsurface.CapDescription(cp.Description, g.opts.DescriptionMax)
		want[name] = &cp
		routes[name] = promptRoute{server: p.Server, prompt: p.Prompt.Name, fp: fingerprint(&cp)}
	}
	remove, adds := replaceRoutes(&g.mu, g.prompts, routes)
	if len(remove) > 0 {
		g.srv.RemovePrompts(remove...)
	}
	for _, name := range adds {
		g.srv.AddPrompt(want[name], g.getPrompt)
	}
	return nil
}

func (g *Gateway) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	g.mu.Lock()
	r, ok := g.prompts[req.Params.Name]
	g.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown prompt %q", req.Params.Name)
	}
	res, err := g.h.GetPrompt(ctx, r.server, r.prompt, req.Params.Arguments)
	var he *host.HeldPromptError
	if errors.As(err, &he) { // held since the gateway listed it
		return nil, fmt.Errorf("%w; %s", err, he.Hint())
	}
	return res, err
}

func (g *Gateway) syncResources(ctx context.Context) error {
	items, warnings, err := g.h.Resources(ctx)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		g.log.Info("gateway resources", "warning", w)
	}
	// items are sorted by server, then URI: when two servers offer one
	// URI, the first server by name serves it, always the same one.
	want := map[string]*mcp.Resource{}
	routes := map[string]resourceRoute{}
	for _, r := range items {
		uri := AppURI(r.Server, r.Resource.URI)
		if prev, dup := routes[uri]; dup {
			g.log.Warn("resource offered by two servers; the first by name serves it", "uri", uri, "server", prev.server, "shadowed", r.Server)
			continue
		}
		cp := *r.Resource
		cp.URI = uri
		cp.Description = toolsurface.CapDescription(cp.Description, g.opts.DescriptionMax)
		want[uri] = &cp
		rr := resourceRoute{server: r.Server, fp: fingerprint(&cp)}
		if uri != r.Resource.URI {
			rr.uri = r.Resource.URI
		}
		routes[uri] = rr
	}
	remove, adds := replaceRoutes(&g.mu, g.resources, routes)
	if len(remove) > 0 {
		g.srv.RemoveResources(remove...)
	}
	for _, uri := range adds {
		if err := recoverPanic(func() { g.srv.AddResource(want[uri], g.readResource) }); err != nil {
			g.log.Warn("resource not served", "uri", uri, "server", routes[uri].server, "error", err)
			g.mu.Lock()
			delete(g.resources, uri)
			g.mu.Unlock()
		}
	}
	return nil
}

// syncTemplates serves the host's resource templates under their own URI
// templates, as syncResources serves resources: when two servers offer one
// template, the first server by name serves it.
func (g *Gateway) syncTemplates(ctx context.Context) error {
	items, warnings, err := g.h.ResourceTemplates(ctx)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		g.log.Info("gateway resource templates", "warning", w)
	}
	want := map[string]*mcp.ResourceTemplate{}
	routes := map[string]resourceRoute{}
	var order []templateMatch
	for _, t := range items { // sorted by server, then URI template
		ut := t.Template.URITemplate
		if prev, dup := routes[ut]; dup {
			g.log.Warn("resource template offered by two servers; the first by name serves it", "uri_template", ut, "server", prev.server, "shadowed", t.Server)
			continue
		}
		// The SDK would panic on a template it cannot parse; such a
		// template could never match a read anyway.
		parsed, err := uritemplate.New(ut)
		if err != nil {
			g.log.Warn("resource template not served", "uri_template", ut, "server", t.Server, "error", err)
			continue
		}
		cp := *t.Template
		cp.Description = toolsurface.CapDescription(cp.Description, g.opts.DescriptionMax)
		want[ut] = &cp
		routes[ut] = resourceRoute{server: t.Server, fp: fingerprint(&cp)}
		order = append(order, templateMatch{uriTemplate: ut, server: t.Server, re: parsed.Regexp()})
	}
	remove, adds := replaceRoutes(&g.mu, g.templates, routes)
	// Route reads the new way before the SDK tells clients about the
	// change: a client that reads on list_changed must reach the new
	// server. Templates not registered yet (or no longer) are refused by
	// the SDK before they reach readResource.
	g.mu.Lock()
	g.matchOrder = order
	g.mu.Unlock()
	if len(remove) > 0 {
		g.srv.RemoveResourceTemplates(remove...)
	}
	for _, ut := range adds {
		if err := recoverPanic(func() { g.srv.AddResourceTemplate(want[ut], g.readResource) }); err != nil {
			g.log.Warn("resource template not served", "uri_template", ut, "server", routes[ut].server, "error", err)
			g.mu.Lock()
			delete(g.templates, ut)
			g.matchOrder = slices.DeleteFunc(slices.Clone(g.matchOrder), func(m templateMatch) bool { return m.uriTemplate == ut })
			g.mu.Unlock()
		}
	}
	if len(remove)+len(adds) > 0 {
		g.log.Info("gateway resource templates changed", "added", len(adds), "removed", len(remove))
	}
	return nil
}

// readResource reads a listed resource or a URI built from a template.
// The SDK calls it only for a URI that is listed or matches a served
// template (anything else is "resource not found"); it routes the URI to
// the server that lists it, else to the first server (by name) with a
// matching template — the same server whatever template the SDK matched.
// The read goes through host.ReadResource, as `switchboard read` does.
func (g *Gateway) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	server, upstream, ok := g.resourceServer(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	res, err := g.h.ReadResource(ctx, server, upstream)
	servedContents(res, upstream, uri)
	return res, err
}

// resourceServer returns the server a read of uri goes to, and the
// server's own URI for it.
func (g *Gateway) resourceServer(uri string) (server, upstream string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.resources[uri]; ok {
		if r.uri != "" {
			return r.server, r.uri, true
		}
		return r.server, uri, true
	}
	for _, m := range g.matchOrder {
		if m.re.MatchString(uri) {
			return m.server, uri, true
		}
	}
	return "", "", false
}

// recoverPanic runs f, turning a panic (the SDK's answer to an item it
// rejects) into an error, so one bad upstream item cannot end the gateway.
func recoverPanic(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// complete forwards completion/complete for a prompt (<server>:<prompt>),
// a resource or a resource template to the server that offers it.
// Anything else completes to nothing.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	if p == nil || p.Ref == nil {
		return empty, nil
	}
	ref := *p.Ref
	var server string
	g.mu.Lock()
	switch ref.Type {
	case "ref/prompt":
		if r, ok := g.prompts[ref.Name]; ok {
			server, ref.Name = r.server, r.prompt
		}
	case "ref/resource":
		// A resource's URI or, above all, a template's: completion
		// fills in the template's variables.
		if r, ok := g.resources[ref.URI]; ok {
			server = r.server
		} else if r, ok := g.templates[ref.URI]; ok {
			server = r.server
		}
	}
	g.mu.Unlock()
	if server == "" {
		return empty, nil
	}
	var given map[string]string
	if p.Context != nil {
		given = p.Context.Arguments
	}
	res, err := g.h.Complete(ctx, server, &ref, p.Argument.Name, p.Argument.Value, given)
	if err != nil {
		return nil, err
	}
	if res.Values == nil {
		res.Values = []string{}
	}
	return &mcp.CompleteResult{Completion: *res}, nil
}

// Names of the admin tools (Options.AdminTools). A server's tool that
// would be served under one of them (server "switchboard", tool "pause")
// is not served while they are.
const (
	PauseTool  = "switchboard__pause"
	ResumeTool = "switchboard__resume"
)

func isAdminTool(name string) bool { return name == PauseTool || name == ResumeTool }

func (g *Gateway) addAdminTools() {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"server": map[string]any{"type": "string", "description": "the configured name of the server"},
		},
		"required": []any{"server"},
	}
	admin := func(verb string, act func(string) error) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Server string `json:"server"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || strings.TrimSpace(in.Server) == "" {
				return errorText(`pass {"server": "<name>"}`), nil
			}
			if err := act(in.Server); err != nil {
				return errorText(err.Error()), nil
			}
			g.log.Info("gateway admin", "action", verb, "server", in.Server)
			g.Kick()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: verb + " " + in.Server}}}, nil
		}
	}
	g.srv.AddTool(&mcp.Tool{
		Name:        PauseTool,
		Description: "Pause one upstream MCP server of this Switchboard gateway until it is resumed or the gateway restarts (its tools disappear). Never edits a file.",
		InputSchema: schema,
	}, admin("paused", g.h.Pause))
	g.srv.AddTool(&mcp.Tool{
		Name:        ResumeTool,
		Description: "Resume an upstream MCP server paused with switchboard__pause.",
		InputSchema: schema,
	}, admin("resumed", g.h.Resume))
	g.mu.Lock()
	g.tools[PauseTool], g.tools[ResumeTool] = toolRoute{fp: "admin"}, toolRoute{fp: "admin"}
	g.mu.Unlock()
}

func errorText(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// replaceRoutes makes cur hold exactly next (under mu) and returns, sorted,
// the names that went away and the names that are new or changed: what the
// caller must remove from and add to the MCP server.
func replaceRoutes[R comparable](mu *sync.Mutex, cur, next map[string]R) (remove, adds []string) {
	mu.Lock()
	for name := range cur {
		if _, ok := next[name]; !ok {
			remove = append(remove, name)
			delete(cur, name)
		}
	}
	for name, r := range next {
		if old, ok := cur[name]; ok && old == r {
			continue
		}
		cur[name] = r
		adds = append(adds, name)
	}
	mu.Unlock()
	sort.Strings(remove)
	sort.Strings(adds)
	return remove, adds
}
