package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// runtimeOptions is what the runtime commands (status, tools, call,
// prompts, prompt, resources, read, demo) share: how to load the
// configuration, how to start a host on it and how long to wait for it.
// Commands embed it in their own Options.
type runtimeOptions struct {
	IO *IOStreams
	// Config loads the resolved configuration (Factory.LoadConfig).
	Config func() (*config.Resolved, error)
	// Wait bounds how long one-shot commands wait for servers still
	// connecting (--wait).
	Wait time.Duration
	// Home is the Switchboard directory; logs go to Home/logs when Home
	// exists.
	Home string
	// LogLevel is --log-level.
	LogLevel string
	// Now is the clock used for elapsed times.
	Now func() time.Time
	// ErrTTY reports that IO.ErrOut is a terminal whose TERM is not
	// "dumb": progress is drawn there, redrawn in place. When false
	// nothing is drawn.
	ErrTTY bool
	// Tilde shortens paths under the home directory for people.
	Tilde func(string) string
	// Policy loads the per-call permission rules (see permit.go) for a
	// configuration. If nil, calls are not checked.
	Policy func(*config.Resolved) *policy.Policy
	// SessionRules are permission rules a command adds for its own run.
	SessionRules []policy.Rule
	// Tools is --tools: the session's tool-loading modifiers.
	Tools string
	// HostOptions, if set, adjusts the host options before the host is
	// built (tests use it for timeouts).
	HostOptions func(*host.Options)
	// Trust builds the launch-trust gate of a run (see trust.go). If
	// nil, host.DefaultGate holds every project server.
	Trust func(*config.Resolved) (*launchTrust, error)
	// Permit, if set, builds the per-call check from the policy in force
	// in place of the session's own (serve routes asks to the client).
	Permit func(*policy.Policy) host.Permit
	// Front returns the front door's options of the global flags (the
	// Switchboard directory, the managed folder, --settings): the session
	// is a switchboard.Switchboard built on them.
	Front func() switchboard.Options
	// Sandbox returns the per-scope sandbox defaults of the user's and
	// managed settings (see sandbox.go). If nil, the built-in ones.
	Sandbox func() config.SandboxDefaults
	// SecretStore returns the user's secret store, which servers'
	// ${secret:NAME} references are read from (on a terminal, a missing
	// one is asked for and stored: see secret.go). If nil, the front
	// door's default.
	SecretStore func() *secretstore.Store
	// Importable names the other tools' servers on this machine
	// (importableSources), for the listings' "no servers" message. If
	// nil, none.
	Importable func() []string
}

// newRuntimeOptions fills runtimeOptions from f. Call it when the command
// runs (after flag parsing), not when it is built: it reads the global flags.
func newRuntimeOptions(f *Factory) runtimeOptions {
	g := f.global()
	return runtimeOptions{
		IO:       f.IO,
		Config:   f.LoadConfig,
		Wait:     g.Wait,
		Home:     f.Home(),
		LogLevel: g.LogLevel,
		Now:      f.Now,
		ErrTTY:   stderrIsTerminal(f.IO),
		Tilde:    f.tilde,
		Trust:    f.launchTrust,
		Tools:    g.Tools,
		Policy:   f.permissionPolicy,
		Front:    f.switchboardOptions,
		Sandbox:  f.sandboxDefaults,

		SecretStore: f.secretStore,
		Importable:  func() []string { return importableLines(f) },
	}
}

// stderrIsTerminal reports whether s.ErrOut is a terminal. IOStreams knows
// this only for Out, and progress belongs on stderr.
func stderrIsTerminal(s *IOStreams) bool {
	if s == nil {
		return false
	}
	if f, ok := s.ErrOut.(*os.File); ok {
		// A dumb terminal (Emacs shell, some CI consoles) cannot move the
		// cursor back: a redrawn line would pile up as \r-joined text.
		return isTerminal(f) && os.Getenv("TERM") != "dumb"
	}
	return false
}

func (o *runtimeOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *runtimeOptions) tilde(p string) string {
	if o.Tilde != nil {
		return o.Tilde(p)
	}
	return p
}

// session is one running host for one command: the configuration it was
// built from, the host, and the live line on stderr.
type session struct {
	opts *runtimeOptions
	cfg  *config.Resolved
	sb   *switchboard.Switchboard
	h    *host.Host // sb.Host()
	line *liveLine
	// diags are the configuration diagnostics to report when the command
	// ends, after what it printed.
	diags []config.Diagnostic
	keep  func(name string) bool
	// reading marks a reading command (status, tools, prompts,
	// resources): a configuration error is exit 2 even when valid
	// servers were listed, as mcp list has it.
	reading bool
	// runnersWait makes snapshot wait on, at a terminal, for servers a
	// package runner is still fetching (waitForRunners): doctor's.
	runnersWait bool
	// outside makes statuses list, under --profile, the servers the
	// profile leaves out, as disabled (status's; doctor checks only the
	// profile's).
	outside  bool
	logClose func()
	trust    *launchTrust // nil when the run builds no launch trust

	mu       sync.Mutex
	launched map[string]time.Time // servers that started connecting, and when
	in       *lineReader          // see input
	asking   int                  // questions open now (see question)
	answered chan struct{}        // closed when asking drops to 0
}

// startSession loads the configuration, keeps the servers keep accepts
// (all when keep is nil) and starts a host on them in the background. The
// caller must call close.
func startSession(ctx context.Context, o *runtimeOptions, keep func(config.ResolvedServer) bool) (*session, error) {
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	return startSessionWith(ctx, o, cfg, keep)
}

// startSessionWith is startSession on a configuration already resolved.
func startSessionWith(ctx context.Context, o *runtimeOptions, cfg *config.Resolved, keep func(config.ResolvedServer) bool) (*session, error) {
	mods, err := toolsurface.ParseToolModifiers(o.Tools)
	if err != nil {
		return nil, UsageErr(err, `e.g. --tools "default,Defer(mcp__github__*),NoDefer(mcp__time__now)"`)
	}
	s := &session{
		opts:     o,
		line:     newLiveLine(o.IO.ErrOut, o.ErrTTY),
		launched: map[string]time.Time{},
	}
	if keep != nil {
		kept := *cfg
		kept.Servers = nil
		names := map[string]bool{}
		for _, rs := range cfg.Servers {
			if keep(rs) {
				kept.Servers = append(kept.Servers, rs)
				names[rs.Name] = true
			}
		}
		cfg = &kept
		s.keep = func(name string) bool { return names[name] }
	}
	s.cfg = cfg
	s.diags = cfg.Diagnostics

	logger, closeLog := o.logger()
	s.logClose = closeLog
	front := switchboard.Options{}
	if o.Front != nil {
		front = o.Front()
	}
	front.Workspace = cfg.Workspace
	if cfg.Files.Managed != "" {
		front.ManagedDir = filepath.Dir(cfg.Files.Managed)
	}
	first := true
	front.Load = func() (*config.Resolved, error) {
		if first { // the configuration this command already loaded
			first = false
			return cfg, nil
		}
		return o.Config()
	}
	front.Logger = logger
	front.Permit = s.permitFor
	if o.SecretStore != nil {
		front.Secrets = s.secretSource(o.SecretStore())
	}
	if o.Permit != nil {
		front.Permit = o.Permit
	}
	if s.opts.IO.CanPrompt {
		// Project servers that need approval are asked about at the
		// terminal before anything starts; headless, they stay held.
		front.Prompter = &sessionPrompter{s: s}
	}
	front.Host = func(hopts *host.Options) {
		// The clientInfo servers see: as `switchboard version` says.
		hopts.ClientVersion = buildVersion()
		hopts.Prompter = s.prompter()
		// The command does its own bounded wait, with progress, before it
		// asks for lists; whatever is still connecting then is reported,
		// not waited for again.
		hopts.ToolsWait = -1
		// permitFor's host.PolicyPermit decodes a call's arguments only
		// when a rule could read them; another Permit gets them decoded.
		hopts.LazyPermitArgs = o.Permit == nil
		hopts.OnEvent = s.onEvent
		hopts.ToolModifiers = mods
		if o.Home == "" {
			hopts.Authorizer = nil // no token store to read
		}
		// What to run when a server needs a login (`mcp login`).
		hopts.ErrorHint = func(_ string, err error) string {
			if h := secretHint(err); h != "" {
				return h
			}
			return authHint(err)
		}
		if o.HostOptions != nil {
			o.HostOptions(hopts)
		}
	}
	sb, err := switchboard.Open(ctx, front)
	if err != nil {
		if re := (*switchboard.RepoSettingsError)(nil); errors.As(err, &re) {
			return nil, ConfigErr(err, "")
		}
		return nil, err
	}
	s.sb = sb
	s.h = sb.Host()
	if o.Trust != nil {
		s.trust = &launchTrust{LaunchTrust: sb.Trust(), settings: sb.Settings(), environ: os.Environ, now: o.now}
		if hasRepoServers(cfg) {
			s.trust.warnings = sb.Trust().Warnings()
			s.diags = append(append([]config.Diagnostic(nil), s.diags...), s.trust.warnings...)
		}
	}
	return s, nil
}

// sessionPrompter asks about project servers at the session's terminal
// (the review, then yes or no); permission questions and elicitation have
// their own (permit.go, prompter.go).
type sessionPrompter struct {
	switchboard.Headless
	s *session
}

func (p *sessionPrompter) ApproveServer(ctx context.Context, r switchboard.Review) (bool, error) {
	return p.reviewer().ApproveServer(ctx, r)
}

func (p *sessionPrompter) Approved(rs *config.ResolvedServer, err error) {
	p.reviewer().Approved(rs, err)
}

func (p *sessionPrompter) reviewer() *reviewPrompter {
	return &reviewPrompter{environ: os.Environ, in: p.s.input(), w: p.s.opts.IO.ErrOut}
}

// logger returns the host's logger: a JSON log in Home/logs at info level
// when the Switchboard directory exists (it is never created just to log),
// and text on stderr at --log-level when that asks for debug or info. Never
// stdout: a command's stdout is its data.
func (o *runtimeOptions) logger() (*slog.Logger, func()) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		level = slog.LevelWarn
	}
	var handlers []slog.Handler
	closeLog := func() {}
	if o.Home != "" {
		if fi, err := os.Stat(o.Home); err == nil && fi.IsDir() {
			dir := filepath.Join(o.Home, "logs")
			if err := os.MkdirAll(dir, 0o700); err == nil {
				f, err := os.OpenFile(filepath.Join(dir, "switchboard.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				if err == nil {
					handlers = append(handlers, slog.NewJSONHandler(f, &slog.HandlerOptions{Level: min(level, slog.LevelInfo)}))
					closeLog = func() { f.Close() }
				}
			}
		}
	}
	if level < slog.LevelWarn && o.IO != nil {
		handlers = append(handlers, slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: level}))
	}
	switch len(handlers) {
	case 0:
		return slog.New(slog.DiscardHandler), closeLog
	case 1:
		return slog.New(redact.Handler(handlers[0])), closeLog
	}
	return slog.New(redact.Handler(slog.NewMultiHandler(handlers...))), closeLog
}

func (s *session) onEvent(ev host.Event) {
	if ev.Kind != host.EventState || ev.State != host.StateConnecting {
		return
	}
	s.mu.Lock()
	if _, ok := s.launched[ev.Server]; !ok {
		s.launched[ev.Server] = s.opts.now()
	}
	s.mu.Unlock()
}

// wait waits until no server is connecting, for at most bound (no bound
// when bound < 0), drawing "connecting 2/5: github (1.2s)…" on a terminal.
// It reports whether every server settled.
//
// A question put to the person meanwhile (a missing secret) does not eat
// the bound: when the bound ends while one is open, the wait goes on
// until it is answered, then waits the bound again.
func (s *session) wait(ctx context.Context, bound time.Duration) bool {
	s.line.Start(s.connectingLine)
	defer s.line.Stop()
	for {
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if bound >= 0 {
			wctx, cancel = context.WithTimeout(ctx, bound)
		}
		ok := s.h.WaitReady(wctx)
		cancel()
		if ok || ctx.Err() != nil {
			return ok
		}
		done := s.questionsAnswered()
		if done == nil {
			return false
		}
		select {
		case <-done:
		case <-ctx.Done():
			return false
		}
	}
}

// question marks a question to the person as open until end is called
// (see wait).
func (s *session) question() (end func()) {
	s.mu.Lock()
	if s.asking == 0 {
		s.answered = make(chan struct{})
	}
	s.asking++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.asking--; s.asking == 0 {
				close(s.answered)
			}
			s.mu.Unlock()
		})
	}
}

// questionsAnswered is closed when no question is open any more; nil when
// none is open now.
func (s *session) questionsAnswered() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asking == 0 {
		return nil
	}
	return s.answered
}

// connectingLine renders the progress of the servers that are starting.
func (s *session) connectingLine() string {
	var connecting []host.ServerStatus
	total, done := 0, 0
	s.mu.Lock()
	launched := len(s.launched)
	s.mu.Unlock()
	for _, st := range s.h.Status() {
		switch st.State {
		case host.StateConnecting:
			connecting = append(connecting, st)
			total++
		case host.StateConnected, host.StateError, host.StateCircuitOpen:
			total++
			done++
		}
	}
	total = max(total, launched)
	if len(connecting) == 0 {
		return ""
	}
	sort.Slice(connecting, func(i, j int) bool { return connecting[i].Since.Before(connecting[j].Since) })
	first := connecting[0]
	who := first.Name
	if n := len(connecting) - 1; n > 0 {
		who += fmt.Sprintf(" +%d more", n)
	}
	return fmt.Sprintf("connecting %d/%d: %s (%s)…", done, total, who, formatElapsed(s.opts.now().Sub(first.Since)))
}

// fatalConfig returns the config error to exit with when the configuration
// had errors and not one server could be loaded from it; nil otherwise.
func (s *session) fatalConfig() error {
	if !s.cfg.HasErrors() {
		return nil
	}
	for _, rs := range s.cfg.Servers {
		if rs.Availability != config.Invalid {
			return nil
		}
	}
	return silentExit(ExitUsage)
}

// close stops the live line and the host and reports the configuration
// diagnostics, one line each on stderr. It returns err, or, when err is
// nil and the configuration has an error, the config error (exit 2): for a
// reading command whatever the error, for the others (call, prompt, read)
// only when it left nothing to load.
func (s *session) close(err error) error {
	s.line.Stop()
	s.h.Close()
	s.logClose()
	if rerr := reportDiagnostics(s.opts.IO.ErrOut, s.diags, s.keep); rerr != nil && err == nil {
		if s.reading || s.fatalConfig() != nil {
			return rerr
		}
	}
	return err
}

// warn prints the host's warnings (servers still connecting, lists that
// failed) on stderr, one line each.
func (s *session) warn(warnings []string) {
	for _, msg := range warnings {
		fmt.Fprintf(s.opts.IO.ErrOut, "warning: %s\n", termsafe.Line(msg))
	}
}

// formatElapsed renders a duration for people: 850ms, 1.2s, 12s, 2m5s.
func formatElapsed(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return d.Truncate(time.Second).String()
}

// liveLine is one line of progress on a terminal's stderr, redrawn in
// place while something runs. On anything but a terminal it draws
// nothing. Hold lets a prompt take the terminal without the line
// overwriting it.
type liveLine struct {
	w       io.Writer
	enabled bool

	mu     sync.Mutex
	render func() string
	drawn  bool
	held   int
	stop   chan struct{}
	done   chan struct{}
}

const liveLineTick = 100 * time.Millisecond

func newLiveLine(w io.Writer, enabled bool) *liveLine {
	return &liveLine{w: w, enabled: enabled}
}

// Start begins drawing render's text every tick, replacing any renderer.
// An empty text clears the line.
func (l *liveLine) Start(render func() string) {
	if !l.enabled {
		return
	}
	l.mu.Lock()
	l.render = render
	running := l.stop != nil
	if !running {
		l.stop, l.done = make(chan struct{}), make(chan struct{})
	}
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if running {
		return
	}
	go func() {
		defer close(done)
		t := time.NewTicker(liveLineTick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				l.draw()
			}
		}
	}()
}

func (l *liveLine) draw() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held > 0 || l.render == nil {
		return
	}
	text := l.render()
	if text == "" {
		l.clearLocked()
		return
	}
	fmt.Fprintf(l.w, "\r\x1b[K%s", termsafe.Line(text)) // server names, progress messages
	l.drawn = true
}

func (l *liveLine) clearLocked() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}

// Stop stops drawing and clears the line. It is idempotent.
func (l *liveLine) Stop() {
	if !l.enabled {
		return
	}
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop, l.done, l.render = nil, nil, nil
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	l.mu.Lock()
	l.clearLocked()
	l.mu.Unlock()
}

// Hold clears the line and keeps it from drawing until the returned
// function is called: for prompts and messages that need the terminal.
func (l *liveLine) Hold() (release func()) {
	if !l.enabled {
		return func() {}
	}
	l.mu.Lock()
	l.held++
	l.clearLocked()
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.held--
			l.mu.Unlock()
		})
	}
}

// serverOnly keeps the one server named name.
func serverOnly(name string) func(config.ResolvedServer) bool {
	return func(rs config.ResolvedServer) bool { return rs.Name == name }
}

// unknownServer reports the configuration diagnostics (a file that failed
// to parse may be why) and returns the error for a server name that no
// scope defines: a failure, exit 1, as for every name that names nothing
// (README, The CLI: the command line was right, the server is not there);
// exit 2 only when a file has an error of its own (or the name's own
// definition has one), since the server may be in a file that did not
// load (as mcp get says).
func unknownServer(w io.Writer, cfg *config.Resolved, name string) error {
	onlyThis := func(server string) bool { return server == name }
	if err := reportDiagnostics(w, cfg.Diagnostics, onlyThis); err != nil {
		return Configf("fix the configuration errors above; the server may be defined in a file that did not load",
			"no server named %q is configured", name)
	}
	var names []string
	for _, rs := range cfg.Servers {
		names = append(names, rs.Name)
	}
	hint := "no servers are configured; add one with `switchboard mcp add`, or try `switchboard demo`"
	if near := nearestNames(name, cfg); len(near) > 0 {
		hint = "did you mean " + strings.Join(near, ", ") + "?"
	} else if len(names) > 0 {
		hint = "configured servers: " + strings.Join(names, ", ")
	}
	return Failuref(hint, "no server named %q is configured", name)
}
