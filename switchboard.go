package switchboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/watch"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
	"github.com/switchboard-mcp/switchboard/trust"
)

// Prompter is the person at the other end, asked before a project server
// starts, before a call the permission rules say to ask about, and when a
// server asks for input (elicitation). Embed [Headless] to answer only
// some of them: the rest are refused.
type Prompter interface {
	// ApproveServer is asked, before anything starts, about each project
	// server that needs approval. Only (true, nil) approves; a plain no is
	// (false, nil) or ErrNotApproved.
	ApproveServer(ctx context.Context, r Review) (bool, error)
	host.Asker
	host.Prompter
}

// Headless is the Prompter of a run nobody can answer: no server is
// approved, every ask is a deny (whose error names the rule that would
// allow the call), every elicitation is declined. A Prompter that embeds
// it and answers only some questions leaves the others as a headless run
// does: a project server it cannot review stays in needs-approval (not
// "you did not approve it"), and a denied call names the rule to add
// (not "refused when asked").
type Headless struct{}

// errNobodyAsked is Headless's answer to a question nobody was asked:
// LaunchTrust.Ask leaves the server pending, and host.PolicyPermit denies
// naming the rule that would allow the call, as with no Asker at all.
var errNobodyAsked = errors.New("nobody can answer here")

// ApproveServer approves nothing.
func (Headless) ApproveServer(context.Context, Review) (bool, error) { return false, errNobodyAsked }

// AskPermission denies.
func (Headless) AskPermission(context.Context, host.PermitRequest, policy.Decision) (host.Answer, error) {
	return host.AnswerDeny, errNobodyAsked
}

// Elicit declines.
func (Headless) Elicit(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// Options configure [Open]. The zero value is a headless run on the
// user's own servers and settings, with no workspace.
type Options struct {
	// Workspace is the project root whose .mcp.json, mcp.json and
	// .switchboard/ are read ("" for none: user and managed servers only).
	Workspace string
	// Home is the Switchboard directory. If "", $SWITCHBOARD_HOME, else
	// ~/.switchboard.
	Home string
	// HomeDir is the user's home directory. If "", os.UserHomeDir.
	HomeDir string
	// ManagedDir holds the administrator's managed-mcp.json and
	// managed-settings.json. If "", $SWITCHBOARD_MANAGED_DIR, else
	// /etc/switchboard.
	ManagedDir string
	// ConfigFiles are more configuration files the person chose for this
	// run (as --mcp-config): each a file's path or inline JSON ({"mcpServers":
	// …}). StrictConfig uses only them (and the managed servers).
	ConfigFiles  []string
	StrictConfig bool
	// Settings are the run's own settings (as --settings), trusted as the
	// person's. SettingsFile names the file they came from: one inside the
	// workspace's repository may only tighten ([CheckSettingsFile]).
	Settings     config.Settings
	SettingsFile string
	// Load, if set, loads the configuration, at Open and on each Reload,
	// in place of config.Load on the fields above: a front end with flags
	// of its own (the CLI) loads it its way, and an agent that defines its
	// servers in code hands them in as config.LoadOptions.Session
	// (user-trusted; with StrictMCPConfig, no file's servers join them; see
	// the example). Workspace, Home and ManagedDir still say where the
	// settings are. A config.ResolvedServer it builds by hand must set
	// Trust (config.TrustUser or config.TrustRepo): a server of no stated
	// trust does not start (see [config.Trust]). Its Availability may be
	// left out: the zero value is config.Available (a TrustRepo server is
	// still put to the Prompter before it starts).
	Load func() (*config.Resolved, error)
	// LastGood is the config.LastGood that Load loads with, if it uses
	// one: Watch forgets through it a file that read empty and stayed
	// empty (config.Files.Unsettled), so that the empty file applies. If
	// nil with Load set, such a file keeps its last good contents until it
	// is written again. (Without Load, the Switchboard's own is used.)
	LastGood *config.LastGood
	// Rules are permission rules this run adds (they join the settings').
	Rules []policy.Rule
	// Prompter answers questions. If nil, [Headless].
	Prompter Prompter
	// Logger gets the host's log lines (secrets redacted). If nil, none.
	Logger *slog.Logger
	// LookupEnv reads the environment ($SWITCHBOARD_HOME and friends, and
	// the ${VAR}s of configurations). If nil, os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Output bounds what a call returns to the model. If nil, the
	// defaults under Home ([toolsurface.OutputOptions]): large results go
	// to the workspace's folder, one session per process, kept for
	// [toolsurface.DefaultSpillRetention]; the limit and the switch are
	// read from $MAX_MCP_OUTPUT_TOKENS and
	// $SWITCHBOARD_DISABLE_MCP_LARGE_OUTPUT_FILES through LookupEnv
	// ([toolsurface.OutputOptionsFromEnv]), as the CLI and the gateway
	// read them.
	Output *toolsurface.OutputOptions
	// Permit builds the per-call check from the policy in force (it is
	// called again on every reload). If nil, [host.PolicyPermit] asking
	// the Prompter. A nil host.Permit from it lets every call run, whatever
	// the rules say.
	Permit func(*policy.Policy) host.Permit
	// Secrets gives the values of the servers' ${secret:NAME} references
	// (docs/configuration.md, Secret references), looked up when a server
	// starts. If nil, the user's secret store of Home: the OS credential
	// store, else the encrypted file in Home/secrets (docs/security.md,
	// Secrets); a missing secret is then the server's error. The OS store
	// (and stored OAuth tokens kept there) is read only by a program that
	// imports package oskeyring, as the switchboard command does; without
	// it, a value kept there is an error naming the import.
	Secrets host.SecretSource
	// Host, if set, adjusts the host's options last (timeouts, tool
	// modifiers, the client version servers see). What the settings
	// decide — the call hooks, the tool-change mode, the sandbox
	// defaults and whether project servers may reach private addresses —
	// is set again from the settings at each Reload, except what this
	// func changed: that stays as it set it.
	Host func(*host.Options)
	// Now is the clock of approvals. If nil, time.Now.
	Now func() time.Time
	// Profile, if set, names the profile of the settings (docs/configuration.md,
	// Profiles) the Switchboard shows: only the servers it includes start
	// (Status lists the others as disabled, "not in profile NAME"), its
	// tool filters hide tools, and its deny and ask rules join the global
	// ones. Open fails with an *UnknownProfileError when no valid
	// profile has the name. Other profiles over the same servers are
	// [Switchboard.View]s.
	Profile string
}

func (o Options) withDefaults() Options {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.HomeDir == "" {
		o.HomeDir, _ = os.UserHomeDir()
	}
	if o.Home == "" {
		o.Home = config.DefaultHome(o.LookupEnv, o.HomeDir)
	}
	if o.ManagedDir == "" {
		if d, ok := o.LookupEnv("SWITCHBOARD_MANAGED_DIR"); ok && d != "" {
			o.ManagedDir = d
		} else {
			o.ManagedDir = config.DefaultManagedDir
		}
	}
	if o.Workspace != "" {
		if abs, err := filepath.Abs(o.Workspace); err == nil {
			o.Workspace = abs
		}
	}
	if o.Prompter == nil {
		o.Prompter = Headless{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Switchboard is one running set of MCP servers with Switchboard's safety
// in front of them: launch trust decides what starts, the permission
// rules what may be called, and every result reaches the model wrapped as
// untrusted data and bounded in size. Build it with [Open]; it is safe for
// concurrent use.
type Switchboard struct {
	*shared
	// host is the running host, or for a view (View) a view of it.
	host *host.Host
	// view is what a view adds; nil for the Switchboard Open made.
	view *view
}

// shared is what a Switchboard and its views share: the configuration,
// settings, launch trust, the running host and the subscribers.
type shared struct {
	opts     Options
	lo       *config.LoadOptions
	trust    *LaunchTrust
	root     *host.Host
	output   toolsurface.OutputOptions
	reloadMu sync.Mutex // one Reload at a time

	cfg      atomic.Pointer[config.Resolved]
	settings atomic.Pointer[config.SettingsStack]
	policy   atomic.Pointer[policy.Policy]
	permit   atomic.Pointer[host.Permit]

	subMu   sync.Mutex
	subs    map[int]subscriber
	nextSub int

	// kept says which of the host options the settings decide
	// Options.Host changed at Open: a reload leaves those as it set them.
	kept embedderKept

	// sessions are the servers session views added (session.go).
	sessionMu sync.Mutex
	sessions  map[string]sessionServer
}

// subscriber is one Subscribe callback, until its ctx is done.
type subscriber struct {
	ctx context.Context
	fn  func(host.Event)
}

// embedderKept records which of the host options the settings decide —
// call hooks, the tool-change mode, sandbox defaults with the private
// network setting — an embedder's Options.Host changed at Open.
type embedderKept struct{ hooks, toolChanges, confinement bool }

// Open loads the configuration and settings of opts.Workspace, asks the
// Prompter about the project servers that need approval, and starts every
// server that may start, in the background. ctx bounds the opening (the
// questions); the Switchboard lives until Close. It fails only when nothing
// can be loaded at all (no home directory, a --settings file inside the
// repository that grants); problems in the files are in Diagnostics and
// the servers they spare start.
func Open(ctx context.Context, opts Options) (*Switchboard, error) {
	o := opts.withDefaults()
	if o.Settings != nil && o.SettingsFile != "" {
		if err := CheckSettingsFile(o.SettingsFile, o.Settings, o.Workspace, o.HomeDir); err != nil {
			return nil, err
		}
	}
	sb := &Switchboard{shared: &shared{opts: o}}
	sb.lo = &config.LoadOptions{
		Home: o.Home, HomeDir: o.HomeDir, Workspace: o.Workspace, Cwd: o.Workspace,
		ManagedDir: o.ManagedDir, MCPConfigs: o.ConfigFiles, StrictMCPConfig: o.StrictConfig,
		LookupEnv: o.LookupEnv, LastGood: &config.LastGood{},
	}
	if sb.lo.Cwd == "" {
		sb.lo.Cwd = o.HomeDir
	}
	cfg, err := sb.load()
	if err != nil {
		return nil, err
	}
	st := sb.readSettings(cfg)
	sb.trust = NewLaunchTrust(o.Home, cfg.Workspace, st, o.Now)
	if canApprove(o.Prompter) {
		if err := sb.trust.Ask(ctx, cfg, o.Prompter); err != nil && ctx.Err() != nil {
			return nil, err
		}
	}
	sb.setPolicy(st)
	sb.cfg.Store(cfg)
	sb.settings.Store(st)

	if o.Output != nil {
		sb.output = *o.Output
	} else {
		sb.output = defaultOutput(o, cfg.Workspace)
	}
	hopts := &host.Options{
		Logger:   o.Logger,
		Gate:     sb.trust.Gate,
		Prompter: o.Prompter,
		Permit: func(ctx context.Context, req host.PermitRequest) error {
			if p := sb.permit.Load(); p != nil && *p != nil {
				return (*p)(ctx, req)
			}
			return nil
		},
		// host.PolicyPermit decodes a call's arguments only when a rule
		// could read them; a Permit of o.Permit gets them decoded.
		LazyPermitArgs:                       o.Permit == nil,
		AllowPrivateNetworkForProjectServers: st.AllowPrivateNetwork(),
		SandboxDefaults:                      st.SandboxDefaults(),
		LookupEnv:                            o.LookupEnv,
		Secrets:                              o.Secrets,
		ToolChanges:                          sb.toolChangeMode(st),
	}
	hopts.CallHooks, hopts.CallHookProblems = callHooks(st)
	if o.Home != "" {
		// Tool definitions are pinned beside the approvals (toolchanges.go).
		hopts.Pins = trust.OpenPins(o.Home)
	}
	if o.Home != "" {
		store := secretstore.ForHome(o.Home, o.LookupEnv)
		// Stored OAuth tokens are used and refreshed; a new authorization
		// is a login (package oauth), which the front end runs. They live
		// in the OS credential store when one answers, else in 0600 files.
		hopts.Authorizer = oauth.New(&oauth.Options{Dir: filepath.Join(o.Home, "oauth"), Logger: o.Logger, Secrets: store.OAuthTokens()})
		if o.Secrets == nil {
			hopts.Secrets = storeSecrets(store)
		}
	}
	if o.Host != nil {
		o.Host(hopts)
		// What the hook changed of what the settings decide is the
		// embedder's to keep: a reload that set it again from the
		// settings would drop an embedder's call hook or sandbox at the
		// first edit of a settings file (fail open).
		hooks, problems := callHooks(st)
		sb.kept = embedderKept{
			hooks:       !reflect.DeepEqual(hopts.CallHooks, hooks) || !slices.Equal(hopts.CallHookProblems, problems),
			toolChanges: hopts.ToolChanges != sb.toolChangeMode(st),
			confinement: !reflect.DeepEqual(hopts.SandboxDefaults, st.SandboxDefaults()) || hopts.AllowPrivateNetworkForProjectServers != st.AllowPrivateNetwork(),
		}
	}
	if own := hopts.OnEvent; own != nil {
		// The hook set a callback of its own: it runs first.
		hopts.OnEvent = func(ev host.Event) { own(ev); sb.publish(ev) }
	} else {
		hopts.OnEvent = sb.publish
	}
	// The servers' connections carry ctx's values; the Switchboard lives
	// until Close, not until ctx is done.
	if o.Profile != "" {
		// Only the profile's servers start: the others are disabled.
		if _, err := profileNamed(st, o.Profile); err != nil {
			return nil, err
		}
		gate := hopts.Gate
		hopts.Gate = func(rs *config.ResolvedServer) (host.State, string) {
			if p, err := profileNamed(sb.settings.Load(), o.Profile); err != nil || !p.IncludesServer(rs.Name) {
				return host.StateDisabled, fmt.Sprintf("not in profile %q", o.Profile)
			}
			return gate(rs)
		}
	}
	sb.host = host.Start(context.WithoutCancel(ctx), cfg, hopts)
	sb.root = sb.host
	if o.Profile != "" {
		v, err := sb.View(o.Profile)
		if err != nil {
			_ = sb.Close()
			return nil, err
		}
		v.view.owner = true
		return v, nil
	}
	return sb, nil
}

// defaultOutput are the output options of a Switchboard whose Options
// name none: spill files under Home, in workspace's folder, and the limit
// and switch of $MAX_MCP_OUTPUT_TOKENS and
// $SWITCHBOARD_DISABLE_MCP_LARGE_OUTPUT_FILES, as the CLI and the gateway
// read them. A bad value is logged, and the safe choice made.
func defaultOutput(o Options, workspace string) toolsurface.OutputOptions {
	getenv := func(k string) string {
		v, _ := o.LookupEnv(k)
		return v
	}
	out, err := toolsurface.OutputOptionsFromEnv(getenv, o.Home)
	if err != nil && o.Logger != nil {
		o.Logger.Warn("output settings", "error", err)
	}
	out.Workspace = workspace
	return out
}

// lastGood is the LastGood the configuration is loaded with, if known.
func (sb *shared) lastGood() *config.LastGood {
	if sb.opts.Load != nil {
		return sb.opts.LastGood
	}
	return sb.lo.LastGood
}

// load loads the configuration: Options.Load, else config.Load.
func (sb *shared) load() (*config.Resolved, error) {
	if sb.opts.Load != nil {
		return sb.opts.Load()
	}
	return config.Load(sb.lo)
}

// canApprove reports whether p can answer at all: a headless run asks
// nobody, so its pending servers keep their own reason (needs approval)
// rather than "not approved for this run", and its denies name the rule
// that would allow the call rather than "refused when asked".
func canApprove(p Prompter) bool {
	switch p.(type) {
	case nil, Headless, *Headless:
		return false
	}
	return true
}

// readSettings reads the settings of cfg's workspace, with the managed
// folder the configuration was loaded from.
func (sb *shared) readSettings(cfg *config.Resolved) *config.SettingsStack {
	managed := sb.opts.ManagedDir
	if cfg.Files.Managed != "" {
		managed = filepath.Dir(cfg.Files.Managed)
	}
	return config.ReadSettings(sb.opts.settingsPlaces(cfg.Workspace, managed))
}

// setPolicy compiles the permission rules of st and the run's own.
func (sb *shared) setPolicy(st *config.SettingsStack) {
	p := policy.FromSettings(st)
	if len(sb.opts.Rules) > 0 {
		p = p.With(sb.opts.Rules...)
	}
	sb.policy.Store(p)
	permit := sb.permitFor(p)
	sb.permit.Store(&permit)
}

// permitFor is the per-call check of the policy p: Options.Permit's, else
// host.PolicyPermit asking the Prompter.
func (sb *shared) permitFor(p *policy.Policy) host.Permit {
	if sb.opts.Permit != nil {
		return sb.opts.Permit(p)
	}
	po := &host.PermitOptions{UserSettings: config.UserSettingsPath(sb.opts.Home)}
	if canApprove(sb.opts.Prompter) {
		// Headless, nobody is asked: the deny names the rule that
		// would allow the call.
		po.Asker = sb.opts.Prompter
	}
	return host.PolicyPermit(p, po)
}

// Host is the running host, for what the front door does not wrap
// (prompts, resources, completions, skills). For a view it is the
// host's view ([host.Host.View]), which the view's Close does not
// close: it works for as long as the Switchboard runs, so check the
// view's own methods' errors (they wrap host.ErrClosed) first.
func (sb *Switchboard) Host() *host.Host { return sb.host }

// Config is the configuration in force.
func (sb *Switchboard) Config() *config.Resolved { return sb.cfg.Load() }

// Settings are the settings layers in force.
func (sb *Switchboard) Settings() *config.SettingsStack { return sb.settings.Load() }

// Policy is the permission policy in force: for a view of a profile, the
// global rules and the profile's.
func (sb *Switchboard) Policy() *policy.Policy {
	if sb.view != nil {
		return sb.view.current().policy
	}
	return sb.policy.Load()
}

// Trust is the run's launch trust.
func (sb *Switchboard) Trust() *LaunchTrust { return sb.trust }

// Diagnostics are the problems of the configuration and settings files in
// force, each naming file:line:col where it has one.
func (sb *Switchboard) Diagnostics() []config.Diagnostic {
	out := slices.Clone(sb.cfg.Load().Diagnostics)
	out = append(out, sb.trust.Warnings()...)
	for _, pr := range sb.Policy().Problems(nil) {
		out = append(out, config.Diagnostic{Severity: config.SeverityWarning, Position: config.Position{File: pr.Source.File},
			Message: pr.Message, Fix: pr.Fix})
	}
	return out
}

// Status is every server's state, with the reason of those that are not
// connected. After Close the servers that ran show as disabled: for a
// view closed on its own, with [ViewClosedReason] (they may run on for
// the Switchboard it viewed). A Switchboard opened on a profile (Options.Profile) lists the
// servers the profile leaves out too, as disabled, "not in profile NAME";
// a View lists only its profile's.
func (sb *Switchboard) Status() []host.ServerStatus {
	list := sb.host.Status()
	if sb.viewClosed() != nil {
		// The servers may run on for the Switchboard, not for this view.
		for i, st := range list {
			if st.State == host.StateConnected || st.State == host.StateConnecting {
				list[i].State, list[i].Reason, list[i].Reconnecting, list[i].NextTry = host.StateDisabled, ViewClosedReason, false, time.Time{}
			}
		}
	}
	if v := sb.view; v != nil && v.owner {
		list = append(list, v.outside()...)
		slices.SortStableFunc(list, func(a, b host.ServerStatus) int { return strings.Compare(a.Name, b.Name) })
	}
	return list
}

// Ready waits until no server is still connecting, or ctx is done, and
// reports whether every server settled. After Close it returns false at
// once: no server runs.
func (sb *Switchboard) Ready(ctx context.Context) bool {
	return sb.viewClosed() == nil && sb.host.WaitReady(ctx)
}

// Tools returns the tools of every connected server as provider's tool
// definitions ("anthropic", "openai", "gemini"; see [shape.Provider]):
// names mcp__<server>__<tool> within the provider's limits, schemas in the
// subset it accepts. A server still connecting is waited for, bounded by
// ctx and by the host's ToolsWait (5 s unless Options.Host sets it): one
// still connecting then is left out ([Switchboard.ListTools] says which;
// [Switchboard.Ready] waits for every server, bounded by ctx alone).
// After Close it fails with host.ErrClosed.
func (sb *Switchboard) Tools(ctx context.Context, provider shape.Provider) ([]json.RawMessage, error) {
	res, err := sb.ListTools(ctx, provider)
	if err != nil {
		return nil, err
	}
	return res.Tools, nil
}

// ToolsResult is what [Switchboard.ListTools] returns.
type ToolsResult struct {
	// Tools are the provider's tool definitions, as [Switchboard.Tools]
	// returns them.
	Tools []json.RawMessage
	// Warnings say, one line per server and sorted, whose tools are not
	// in Tools or may be out of date: "NAME: still connecting; not
	// included yet" (list again once it connects, or wait with
	// [Switchboard.Ready] first), "NAME: reconnecting (…)" and "NAME:
	// circuit open (…)" (its last known tools are in Tools), or "NAME: "
	// and why its tools could not be listed. The secrets the host knows
	// are replaced in them. A server that does not run at all (held by
	// launch trust, disabled, failed) has none: [Switchboard.Status] says
	// why. Empty when every running server's tools are in Tools.
	Warnings []string
}

// ListTools is [Switchboard.Tools] with the warnings of the servers whose
// tools are missing from the list, or may be out of date: an agent that
// lists its tools while servers are still connecting can tell the person
// (or list again later) instead of handing its model a short list
// unawares. It waits as Tools does, and after Close fails with
// host.ErrClosed.
func (sb *Switchboard) ListTools(ctx context.Context, provider shape.Provider) (*ToolsResult, error) {
	if err := sb.viewClosed(); err != nil {
		return nil, err // the host checks its own Close
	}
	list, err := sb.host.Tools(ctx)
	if err != nil {
		return nil, err
	}
	if sb.heldChanges() {
		// A Prompter that can ask is asked about held tool changes first.
		if err := sb.AskToolChanges(ctx); err != nil && ctx.Err() != nil {
			return nil, err
		}
		if list, err = sb.host.Tools(ctx); err != nil {
			return nil, err
		}
	}
	in := make([]toolsurface.Tool, 0, len(list.Tools))
	for _, t := range list.Tools {
		in = append(in, toolsurface.Tool{Name: t.Name, Description: t.Tool.Description, InputSchema: t.Tool.InputSchema})
	}
	tools, err := shape.Tools(provider, in)
	if err != nil {
		return nil, err
	}
	return &ToolsResult{Tools: tools, Warnings: list.Warnings}, nil
}

// EventReloaded is the Kind of the event [Switchboard.Reload] publishes
// once it has applied the configuration and settings (Server is ""):
// whatever lists the servers' tools (a gateway) lists them again.
const EventReloaded host.EventKind = "reloaded"

// Start begins a call as Call does, decided at once (the permission rules
// apply, and a question is asked, before Start returns), and returns
// while it runs: an agent gives its model an immediate answer ("started
// as call 1") and collects the result later with [BackgroundCall.Wait].
// It suits a long tool, such as one that runs as an MCP task (followed to
// its end as Call follows it; see docs/gateway.md, Tasks). The call runs
// until it ends, is cancelled, or the Switchboard closes — for a view's
// call, the view too (its Wait then returns host.ErrCancelled).
func (sb *Switchboard) Start(ctx context.Context, name string, args any) (*BackgroundCall, error) {
	if err := sb.viewClosed(); err != nil {
		return nil, err
	}
	b, err := sb.host.Start(ctx, name, args)
	if err != nil {
		return nil, sb.heldError(name, err)
	}
	// A view's call ends with the view (or a view it was made from), as
	// the view's other calls do.
	var stops []func() bool
	for s := sb; s.view != nil; s = s.view.parent {
		stops = append(stops, context.AfterFunc(s.view.ctx, b.Cancel))
	}
	if len(stops) > 0 {
		go func() {
			<-b.Done()
			for _, stop := range stops {
				stop()
			}
		}()
	}
	return &BackgroundCall{sb: sb, b: b}, nil
}

// BackgroundCalls returns the calls started with Start and not forgotten,
// oldest first.
func (sb *Switchboard) BackgroundCalls() []*BackgroundCall {
	var out []*BackgroundCall
	for _, b := range sb.host.BackgroundCalls() {
		out = append(out, &BackgroundCall{sb: sb, b: b})
	}
	return out
}

// BackgroundCall returns the call started with Start under id, or nil.
func (sb *Switchboard) BackgroundCall(id string) *BackgroundCall {
	if b := sb.host.BackgroundCall(id); b != nil {
		return &BackgroundCall{sb: sb, b: b}
	}
	return nil
}

// BackgroundCall is a call started with [Switchboard.Start]. Its methods
// are safe for concurrent use.
type BackgroundCall struct {
	sb *Switchboard
	b  *host.BackgroundCall
}

// ID names the call within its Switchboard ("1", "2", …).
func (c *BackgroundCall) ID() string { return c.b.ID() }

// Status says where the call is: running (with the server's last progress
// message, a task's status), done, failed or cancelled.
func (c *BackgroundCall) Status() host.CallStatus { return c.b.Status() }

// Done is closed when the call has ended.
func (c *BackgroundCall) Done() <-chan struct{} { return c.b.Done() }

// Wait waits for the call to end (or ctx) and returns what Call would
// have: the result as the model gets it, or the error.
func (c *BackgroundCall) Wait(ctx context.Context) (*Result, error) {
	res, err := c.b.Wait(ctx)
	if err != nil {
		return nil, err
	}
	return c.sb.present(c.b.Status().Tool, res, nil), nil
}

// Cancel ends the call; a task is cancelled at its server. It returns at
// once; Done says when the call has ended.
func (c *BackgroundCall) Cancel() { c.b.Cancel() }

// Forget cancels the call if it runs and drops it from the list.
func (c *BackgroundCall) Forget() { c.b.Forget() }

// Subscribe calls fn with every host event (a server's state, progress,
// log lines, list changes) and every [EventReloaded] until ctx is done.
// fn runs on the host's goroutines (a reload's on the reloading one) and
// must not block, nor wait for the Switchboard: Close called in fn never
// returns (it waits for the goroutine fn runs on), and Call, Tools or
// Reload there hold up the server whose event it is. Hand such work to
// another goroutine. A gateway (package gateway) follows the Switchboard
// this way. After Close (of sb, or of the view it is) there is nothing
// more to hear: fn is never called and nothing is kept for it.
func (sb *Switchboard) Subscribe(ctx context.Context, fn func(host.Event)) {
	if sb.closedErr() != nil {
		return
	}
	if sb.view != nil {
		// A view hears of its own servers only (and of reloads).
		inner, h := fn, sb.host
		fn = func(ev host.Event) {
			if ev.Server == "" || h.Includes(ev.Server) {
				inner(ev)
			}
		}
	}
	sb.subMu.Lock()
	if sb.subs == nil {
		sb.subs = map[int]subscriber{}
	}
	id := sb.nextSub
	sb.nextSub++
	sb.subs[id] = subscriber{ctx, fn}
	sb.subMu.Unlock()
	context.AfterFunc(ctx, func() {
		sb.subMu.Lock()
		delete(sb.subs, id)
		sb.subMu.Unlock()
	})
}

// publish hands an event to the subscribers.
func (sb *shared) publish(ev host.Event) {
	sb.subMu.Lock()
	fns := make([]func(host.Event), 0, len(sb.subs))
	for _, s := range sb.subs {
		if s.ctx.Err() == nil { // ended, and not removed yet
			fns = append(fns, s.fn)
		}
	}
	sb.subMu.Unlock()
	for _, fn := range fns {
		fn(ev)
	}
}

// Reload reads the configuration and every settings file again and
// applies them in one step: the permission rules and launch-trust
// pre-approvals in force change first, then servers are added, removed or
// restarted ([host.Host.Apply]), then [EventReloaded] is published (a
// gateway lists again). A file that
// does not parse keeps its last good contents. A file that is empty now is
// taken as it is ([Switchboard.Watch] first waits for such a file to
// settle: a program may be half-way through writing it). A running server
// whose approval was withdrawn is not stopped; its next start is held.
// After Close it reads nothing, changes nothing and returns
// host.ErrClosed, as Tools and Call do.
func (sb *Switchboard) Reload() (host.ApplyResult, error) {
	if err := sb.viewClosed(); err != nil {
		return host.ApplyResult{}, err
	}
	return sb.reload(true)
}

// reload is Reload. settled says the files have stopped changing: a file
// that reads empty where it held servers is then taken as written;
// otherwise its last good contents stay in force for now
// (config.Files.Unsettled), and Watch reads it again once it settles.
func (sb *Switchboard) reload(settled bool) (host.ApplyResult, error) {
	sb.reloadMu.Lock()
	defer sb.reloadMu.Unlock()
	if sb.root.Closed() {
		// Nothing runs to apply it to: the configuration, settings and
		// rules shown stay those the servers last ran under.
		return host.ApplyResult{}, host.ErrClosed
	}
	next, err := sb.load()
	if err != nil {
		return host.ApplyResult{}, err
	}
	if lg := sb.lastGood(); settled && lg != nil && len(next.Files.Unsettled) > 0 {
		lg.Forget(next.Files.Unsettled...)
		if next, err = sb.load(); err != nil {
			return host.ApplyResult{}, err
		}
	}
	next = sb.withSessions(next)
	st := sb.readSettings(next)
	sb.setPolicy(st)
	sb.trust.SetSettings(st)
	sb.settings.Store(st)
	sb.cfg.Store(next)
	if !sb.kept.hooks {
		hooks, problems := callHooks(st)
		sb.root.SetCallHooks(hooks, problems)
	}
	if !sb.kept.toolChanges {
		sb.root.SetToolChanges(sb.toolChangeMode(st))
	}
	if !sb.kept.confinement {
		sb.root.SetConfinement(st.SandboxDefaults(), st.AllowPrivateNetwork())
	}
	res := sb.root.Apply(next)
	if sb.root.Closed() {
		// Closed while this reload ran: Apply may have done nothing.
		return res, host.ErrClosed
	}
	sb.publish(host.Event{Kind: EventReloaded})
	return res, nil
}

// WatchOptions adjust [Switchboard.WatchWith].
type WatchOptions struct {
	// Also are more files whose change reloads (a gateway's auth file).
	Also func() []string
	// Before runs on each reload, before the configuration is read.
	Before func()
	// After runs after each reload with its result or error.
	After func(host.ApplyResult, error)
	// Logger gets the watcher's own problems (a folder it cannot watch).
	Logger *slog.Logger
}

// Watch follows the configuration and settings files in force until ctx
// is done, and [Switchboard.Reload]s, debounced, after each change that
// can matter: a file created later, in a folder created later, is picked
// up too. A file that reads empty where it held servers keeps them until
// it has settled (no change for 2 s): most programs truncate a file before
// they write it, and a reload in between would have restarted every server
// it defines; still empty then, it applies. It returns ctx's error,
// host.ErrClosed once the Switchboard closes (at once after Close), or at
// once the error of files that cannot be watched.
func (sb *Switchboard) Watch(ctx context.Context) error {
	return sb.WatchWith(ctx, nil)
}

// WatchWith is Watch with options.
func (sb *Switchboard) WatchWith(ctx context.Context, wo *WatchOptions) error {
	if err := sb.closedErr(); err != nil {
		// Nothing runs to reload: not a watch until ctx is done.
		return err
	}
	var w WatchOptions
	if wo != nil {
		w = *wo
	}
	if w.Logger == nil {
		w.Logger = sb.opts.Logger
	}
	if w.Logger == nil {
		w.Logger = slog.New(slog.DiscardHandler)
	}
	files := func() []watch.File {
		fs := watch.Files(sb.cfg.Load(), sb.opts.Home, sb.opts.HomeDir)
		if w.Also != nil {
			for _, p := range w.Also() {
				fs = watch.With(fs, p, sb.opts.HomeDir)
			}
		}
		return fs
	}
	stop, err := watch.Start(files, w.Logger, func(settled bool) bool {
		if w.Before != nil {
			w.Before()
		}
		res, err := sb.reload(settled)
		if w.After != nil {
			w.After(res, err)
		}
		// Read again once settled, if it can then be taken as written.
		return err == nil && len(sb.Config().Files.Unsettled) > 0 && sb.lastGood() != nil
	})
	if err != nil {
		return err
	}
	defer stop()
	// Closed, every reload would fail, and the embedder's goroutine would
	// wait on until ctx is done.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for s := sb; s.view != nil; s = s.view.parent {
		unhook := context.AfterFunc(s.view.ctx, cancel)
		defer unhook()
	}
	select {
	case <-wctx.Done():
		if err := sb.viewClosed(); err != nil {
			return err
		}
		return ctx.Err()
	case <-sb.root.Done():
		return host.ErrClosed
	}
}

// MaybeRunSupervisor must be the first call in main of a program that
// opens a Switchboard: every stdio server then runs under a small
// supervisor, a second copy of the program, which stops the server and
// everything it started even when the program is killed, and which runs
// the sandbox of servers that have one (host.MaybeRunSupervisor). In such
// a copy it does that work and exits; otherwise it returns at once.
func MaybeRunSupervisor() { host.MaybeRunSupervisor() }

// Close stops every server (each gets its grace, then is killed) and
// returns when they are gone; a call still waiting for its server, or
// for the Prompter's answer to a permission question, then ends with an
// error wrapping host.ErrClosed (a background call's Wait too), and a
// running Watch returns host.ErrClosed. The ctx of every question still
// put to the Prompter (AskPermission, Elicit) is done. After Close, on the
// Switchboard and on every view and session of it, what can fail (Call,
// Start, Tools, ListTools, Reload, Watch, View, OpenSession, AcceptTools,
// AskToolChanges, AcceptPrompts, AcceptPromptChange) fails at once with
// host.ErrClosed and starts nothing;
// Ready reports false; Status shows the servers that ran as stopped;
// Config and the other accessors keep what was in force; Close again
// returns nil. The supervisor that MaybeRunSupervisor sets up is the
// program's, shared by every Switchboard it opens: it stays, idle, until
// the program exits. Closing a view (View) closes it and the views made
// from it, which then refuse as above (the error wraps host.ErrClosed),
// and stops only the servers it and the sessions opened from it added
// (OpenSession); the others run on for the Switchboard it views. The
// Switchboard Open returned for Options.Profile closes all.
func (sb *Switchboard) Close() error {
	if v := sb.view; v != nil && !v.owner {
		return v.close()
	}
	return sb.root.Close()
}

// storeSecrets is the host.SecretSource of a secret store: the user's own
// values (its namespace ""). Open uses it on the store of Options.Home
// when Options.Secrets is nil.
func storeSecrets(s *secretstore.Store) host.SecretSource {
	return host.SecretFunc(func(ctx context.Context, _, name string) (string, error) { return s.Get(ctx, name) })
}
