package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// pinnedProtocol is the revision a server is retried with when the
// 2026-07-28 server/discover probe kills it (go-sdk issue #1177).
const pinnedProtocol = "2025-11-25"

// flapWindow: a connection that dies sooner than this after it was made does
// not refill the reconnect budget, so a server that crashes on every start
// ends in state error instead of reconnecting forever.
const flapWindow = 10 * time.Second

// server is the runtime of one configured server: its state machine and
// its current connection.
type server struct {
	h         *Host
	cfg       config.ResolvedServer
	name      string
	breaker   *breaker
	tools     *listCache[*mcp.Tool]
	prompts   *listCache[*mcp.Prompt]
	resources *listCache[*mcp.Resource]
	templates *listCache[*mcp.ResourceTemplate]
	stats     stats
	calls     inflight   // tool calls in flight, to attribute a question (elicit.go)
	logLines  logLimiter // its log notifications' lines in the host's log (client.go)
	// selfLoop is set once the remote server answered as the gateway over
	// this host itself (GatewayHeader): it is never tried again.
	selfLoop atomic.Bool
	// confine is the host's when the server was made: a change applies
	// by a restart (Apply), never half-way through a run.
	confine confinement

	mu        sync.Mutex
	state     State
	reason    string
	cause     error // the error that put it in StateError (ServerStatus.Err)
	since     time.Time
	conn      *conn
	lastConn  *conn // for the stderr tail after a failure
	starting  *conn // a connection being made: its stderr so far, while it connects
	settled   chan struct{}
	runCancel context.CancelFunc
	runDone   chan struct{}
	// runCtx is the run loop's context, done once it is halted (a stop,
	// a restart, Close): a question of the server's waits no longer.
	runCtx context.Context
	paused bool
	// gateHeld: the last start was refused by Options.Gate (launch trust,
	// a profile), whose answer a reload may change (Apply asks again);
	// gatePassed: it got past the gate and was launched.
	gateHeld, gatePassed bool
	reconnects           int
	// reconnecting: the connection was lost and the run loop is getting
	// it back (StateConnecting). The last lists it gave stay served
	// meanwhile, and calls wait for it within their timeout.
	reconnecting bool
	// stopped: stop ran (Close, or the reload that replaced it); it
	// never launches again.
	stopped bool
	// nextTry is when the run loop tries to connect again after a failed
	// start or a lost connection (zero when no try is due).
	nextTry   time.Time
	pinned    string
	collision string // non-empty: tool names collide; the server is unusable
	// known is the last tool list fetched; status counts it even while the
	// cache is invalidated (list_changed) and not yet fetched again.
	known []*mcp.Tool

	// routes remembers which tool list is registered in the Host's router,
	// so that serverTools (run by every Call) does not rename every tool
	// again while the cached list is unchanged.
	routes routeMemo
	// deferred is how many of its tools the last listing held back.
	deferred int

	// lastFailure is why the last call that counted against the breaker
	// failed, for the circuit-open message.
	lastFailure string
	// watchCancel stops the pings of an open circuit (watchOpen); watching
	// says the server did not answer them in time, so the first answer
	// closes the circuit.
	watchCancel context.CancelFunc
	watching    bool
	// pingClosedAt is when an answered ping last closed the circuit. A
	// circuit that opens again within a cooldown of that is left to its
	// cooldown: pings said it was back, and its calls failed anyway.
	pingClosedAt time.Time
	// protected are the paths its sandbox keeps read-only inside what it
	// may write (config.SandboxPolicy.Protected), as of its last start;
	// nil when it runs unconfined (protectedNote).
	protected atomic.Pointer[[]string]
	// npxCaches are the npm caches its last start was given, for an npx
	// server (nil otherwise); npxRepaired the npx copies repairNpx
	// removed for it, each at most once.
	npxCaches   atomic.Pointer[[]npxCache]
	npxRepaired map[string]bool
	// listErrs holds, per list method ("tools/list", "prompts/list"…), why
	// the last fetch of it failed; a fetch that works clears it, and so
	// does a new connection.
	listErrs map[string]string
}

func newServer(h *Host, rs config.ResolvedServer) *server {
	s := &server{h: h, cfg: rs, name: rs.Name, settled: make(chan struct{}), confine: h.confine}
	s.breaker = newBreaker(h.opts.BreakerThreshold, h.opts.BreakerCooldown, h.opts.BreakerMaxCooldown, h.clock, func(from, to BreakerState, gen uint64) {
		h.log.Info("circuit breaker", "server", rs.Name, "state_from", from.String(), "state_to", to.String())
		if from == BreakerOpen {
			s.stopWatch()
		}
		if to == BreakerOpen {
			s.watchOpen(gen)
		}
		h.emit(Event{Kind: EventState, Server: rs.Name, State: s.publicState(), Reason: s.snapshotReason()})
		if to == BreakerOpen {
			// Once the cooldown is over the state is connected again (the
			// next call is the probe): say so then.
			cooldown := s.breaker.currentCooldown()
			go func() {
				select {
				case <-h.clock.After(cooldown):
					h.emit(Event{Kind: EventState, Server: rs.Name, State: s.publicState(), Reason: s.snapshotReason()})
				case <-h.ctx.Done():
				}
			}()
		}
	})
	s.tools = newListCache[*mcp.Tool](h.opts.CacheTTL, h.clock)
	s.prompts = newListCache[*mcp.Prompt](h.opts.CacheTTL, h.clock)
	s.resources = newListCache[*mcp.Resource](h.opts.CacheTTL, h.clock)
	s.templates = newListCache[*mcp.ResourceTemplate](h.opts.CacheTTL, h.clock)
	s.tools.method, s.prompts.method, s.resources.method, s.templates.method = "tools/list", "prompts/list", "resources/list", "resources/templates/list"
	return s
}

// start decides the initial state from configuration and launch trust and,
// if the server may run, connects it in the background.
func (s *server) start() {
	switch s.cfg.Availability {
	case config.Disabled:
		s.settle(StateDisabled, s.cfg.DisabledReason)
		return
	case config.Missing:
		s.settle(StateMissing, "enabled in this workspace but defined in no scope")
		return
	case config.Invalid:
		reason := "invalid definition"
		if err := s.cfg.Err(); err != nil {
			reason = err.Error()
		}
		s.settle(StateError, reason)
		return
	case config.Available, "": // "": a hand-built ResolvedServer's (config.Availability)
	default:
		// Fail closed: what a value config does not know means is not
		// guessed to be "available".
		s.settle(StateError, fmt.Sprintf("config.ResolvedServer.Availability is %q, not config.Available (or empty), config.Disabled, config.Missing or config.Invalid", string(s.cfg.Availability)))
		return
	}
	if why := unknownTrust(&s.cfg); why != "" {
		// Fail closed: a server whose provenance nobody stated is not
		// guessed to be the user's own (no sandbox, no approval).
		s.settle(StateError, why)
		return
	}
	if IsGatewayServer(&s.cfg) {
		// Before launch trust: nothing to approve in what never runs.
		s.settle(StateDisabled, GatewayEntryReason)
		return
	}
	if why := s.h.nameConflict(s.name); why != "" {
		s.settle(StateError, why)
		return
	}
	st, why := s.h.opts.Gate(&s.cfg)
	s.mu.Lock()
	s.gateHeld, s.gatePassed = st != "", st == ""
	s.mu.Unlock()
	if st != "" {
		s.settle(st, why)
		return
	}
	s.launch()
}

// unknownTrust is why rs may not start for its Trust, which is neither
// config.TrustUser nor config.TrustRepo (a hand-built ResolvedServer that
// left it out), or "".
func unknownTrust(rs *config.ResolvedServer) string {
	switch rs.Trust {
	case config.TrustUser, config.TrustRepo:
		return ""
	case "":
		return "config.ResolvedServer.Trust is empty: set it to config.TrustUser or config.TrustRepo (config.TrustFor(scope) gives a scope's)"
	}
	return fmt.Sprintf("config.ResolvedServer.Trust is %q, not config.TrustUser or config.TrustRepo (config.TrustFor(scope) gives a scope's)", string(rs.Trust))
}

// launch starts the run loop; the caller must not hold s.mu.
func (s *server) launch() {
	ctx, cancel := context.WithCancel(s.h.ctx)
	done := make(chan struct{})
	s.mu.Lock()
	if s.stopped {
		// Stopped before it launched: a Close while the reload that added
		// it stopped other servers. Its process would start after Close
		// returned.
		s.mu.Unlock()
		cancel()
		if s.h.ctx.Err() != nil {
			s.settle(StateDisabled, ClosedReason)
		}
		return
	}
	s.runCancel, s.runDone, s.runCtx = cancel, done, ctx
	s.mu.Unlock()
	s.setState(StateConnecting, "starting")
	go func() {
		defer close(done)
		s.run(ctx)
	}()
}

// halt stops the run loop and closes the connection; it waits for both.
func (s *server) halt() {
	s.mu.Lock()
	cancel, done, c := s.runCancel, s.runDone, s.conn
	s.runCancel, s.runDone = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if c != nil {
		c.close()
	}
	if done != nil {
		<-done
	}
}

func (s *server) stop() {
	s.mu.Lock()
	s.stopped = true // before halt reads runCancel: launch sees one or the other
	s.mu.Unlock()
	s.halt()
	s.mu.Lock()
	c := s.lastConn
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
}

func (s *server) pause() {
	s.mu.Lock()
	if s.paused {
		s.mu.Unlock()
		return
	}
	s.paused = true
	s.mu.Unlock()
	s.halt()
	s.invalidateAll()
	s.settle(StatePaused, "paused for this session")
}

// resume starts a paused server, and tries a failed one again at once (as
// retry does). A server that is running is left alone. It reports why the
// server is not running afterwards, when it is not (disabled, held by
// launch trust, an invalid definition).
func (s *server) resume() error {
	s.mu.Lock()
	paused, st := s.paused, s.state
	s.paused = false
	s.mu.Unlock()
	switch {
	case paused:
		s.start()
	case st == StateConnected || st == StateConnecting:
		return nil
	default:
		s.retry()
	}
	return s.notStarted()
}

// retry rebuilds the server's runtime and starts it at once: any
// connection is closed, the circuit breaker, the budget of quick retries
// and the protocol pin are reset.
func (s *server) retry() {
	s.halt()
	s.mu.Lock()
	s.paused, s.collision, s.pinned = false, "", ""
	s.mu.Unlock()
	s.breaker.reset()
	s.invalidateAll()
	s.start()
}

// notStarted is nil when the server has a run loop (it connects, is
// connected, or failed and is tried again), else why it is not running.
func (s *server) notStarted() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runDone != nil {
		return nil
	}
	return fmt.Errorf("%w: %s %s: %s; it was not started", ErrNotConnected, s.name, s.state.Phrase(), s.reason)
}

func (s *server) invalidateAll() {
	s.tools.invalidate()
	s.prompts.invalidate()
	s.resources.invalidate()
	s.templates.invalidate()
}

// run connects, serves the connection and, after a failed start or an
// unexpected close, tries again until ctx is cancelled: quickly first
// (Backoff: 1 s, 2 s, 4 s, for MaxReconnectAttempts tries), then every
// Options.RetryInterval for as long as the host runs, so that a server that
// missed its startup timeout on a busy machine, or whose backend was down
// for a while, comes back by itself.
//
// A server that lost its connection is connecting while its quick
// reconnects last: its last lists stay served and calls wait for it. A
// start that failed, and a server whose quick retries are spent, are in
// error (the reason says when the next try is), also while a try runs:
// nobody waits for a server that is failing.
func (s *server) run(ctx context.Context) {
	s.selfLoop.Store(false)
	attempt := 0 // tries that failed since the last lasting connection
	lost := ""   // why the last connection ended; "" for a start
	var err error
	for {
		var c *conn
		c, err = s.connect(ctx)
		if ctx.Err() != nil {
			if c != nil {
				c.close()
			}
			return
		}
		sessionLost := false
		if err == nil {
			s.setConnected(c)
			connectedAt := s.h.clock.Now()
			select {
			case <-ctx.Done():
				return // halt closes the connection
			case <-c.done:
			}
			lost = c.dropReason()
			if ctx.Err() == nil {
				// Connecting before the connection is dropped: a call that
				// finds no connection then waits for the reconnect, instead
				// of failing with "srv is connected" in between.
				s.setRetryState(StateConnecting, "connection lost ("+lost+")", nil, time.Time{}, true)
			}
			s.dropConn(c)
			if ctx.Err() != nil {
				return
			}
			sessionLost = c.sessionLost.Load()
			if s.h.clock.Now().Sub(connectedAt) >= flapWindow || sessionLost {
				attempt = 0
			}
			s.mu.Lock()
			s.reconnects++
			s.mu.Unlock()
			s.h.log.Warn("server connection lost", "server", s.name, "reason", lost)
		}
		if s.selfLoop.Load() {
			// Its own endpoint: no retry can make it another server. A
			// reload (another URL) makes a new server.
			s.h.log.Warn("server not served: it is this gateway itself", "server", s.name)
			s.settle(StateDisabled, SelfEndpointReason)
			return
		}
		attempt++
		delay := Backoff(attempt)
		if sessionLost && attempt == 1 {
			delay = 0 // the server forgot our session: start a new one at once
		}
		quick := attempt <= MaxReconnectAttempts
		if !quick {
			delay = s.h.opts.RetryInterval
		}
		var next time.Time
		if delay >= 0 {
			next = s.h.clock.Now().Add(delay)
		}
		switch {
		case lost != "" && quick:
			s.setRetryState(StateConnecting, fmt.Sprintf("connection lost (%s); reconnect %d/%d in %s",
				lost, attempt, MaxReconnectAttempts, delay), nil, next, true)
		case lost != "":
			s.setRetryState(StateError, fmt.Sprintf("connection lost (%s); gave up after %d reconnect attempts: %s",
				lost, MaxReconnectAttempts, s.lastErrOr(err, lost)), err, next, false)
		default:
			if attempt == 1 || !quick {
				s.h.log.Warn("server failed to start", "server", s.name, "error", errorText(err), "next_try_ms", max(delay, 0).Milliseconds())
			}
			s.setRetryState(StateError, s.errorReason(err), err, next, false)
		}
		if delay < 0 {
			return // Options.RetryInterval < 0: no slow retries
		}
		if delay > 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.h.clock.After(delay):
			}
		}
	}
}

func (s *server) lastErrOr(err error, why string) string {
	if err != nil {
		return s.errorReason(err)
	}
	return why
}

// connect makes one connection, bounded by the startup timeout. A server
// that the server/discover probe may have failed (dial's probed: a server
// that read the probe and died, or ended the handshake) is retried once
// pinned to 2025-11-25, and the pin is remembered. Other failures (an
// exit before reading anything, a spawn error, a timeout, DNS, a refused
// connection, a 401) are not: the same failure would only take twice as
// long to report.
func (s *server) connect(ctx context.Context) (*conn, error) {
	timeout := s.startupTimeout()
	s.mu.Lock()
	pinned := s.pinned
	s.mu.Unlock()
	c, probed, err := s.dial(ctx, timeout, pinned)
	if rep := (*npxRepairedError)(nil); errors.As(err, &rep) && ctx.Err() == nil {
		// Said, since the user's npm cache was written: the start takes
		// as long as a first download.
		s.h.log.Warn("npx's copy of the server's packages was incomplete (an earlier download was cut short); removed it, and npx installs it again", "server", s.name, "folder", rep.folder, "error", rep.err)
		c, probed, err = s.dial(ctx, timeout, pinned)
	}
	if err == nil || ctx.Err() != nil || pinned != "" || !probed {
		return c, err
	}
	s.h.log.Info("connect failed; retrying pinned to an older protocol revision", "server", s.name, "protocol", pinnedProtocol, "error", err)
	c2, _, err2 := s.dial(ctx, timeout, pinnedProtocol)
	if err2 != nil {
		return nil, err // the first failure explains more
	}
	s.mu.Lock()
	s.pinned = pinnedProtocol
	s.mu.Unlock()
	return c2, nil
}

func (s *server) startupTimeout() time.Duration {
	if ms := s.cfg.Effective.StartupTimeout; ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	if s.h.startupDefaulted && isPackageRunner(s.cfg.Effective.Command) {
		return DefaultRunnerStartupTimeout
	}
	return s.h.opts.StartupTimeout
}

// IsPackageRunner reports whether command (a stdio server's) is a package
// runner that may download the server's package on its first start (npx,
// uvx, bunx, pnpx, pipx, dnx): such a server gets
// DefaultRunnerStartupTimeout to start.
func IsPackageRunner(command string) bool { return isPackageRunner(command) }

func isPackageRunner(command string) bool {
	base := strings.ToLower(path.Base(strings.ReplaceAll(command, "\\", "/")))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".cmd")
	switch base {
	case "npx", "uvx", "bunx", "pnpx", "pipx", "dnx":
		return true
	}
	return false
}

func (s *server) callTimeout() time.Duration {
	if ms := s.cfg.Effective.Timeout; ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return s.h.opts.CallTimeout
}

func (s *server) setConnected(c *conn) {
	s.mu.Lock()
	s.conn = c
	s.lastConn = c
	s.listErrs = nil
	s.mu.Unlock()
	s.invalidateAll()
	// A new connection that initialized is the server answering again: an
	// open circuit closes at once, instead of failing calls for the rest of
	// its cooldown.
	s.breaker.reset()
	s.setState(StateConnected, "")
}

func (s *server) dropConn(c *conn) {
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.mu.Unlock()
	c.close()
	s.invalidateAll()
}

// setState records a transition, wakes waiters when the server settles and
// reports it.
func (s *server) setState(st State, reason string) { s.setStateCause(st, reason, nil) }

// setStateCause is setState that also records the error that caused st.
func (s *server) setStateCause(st State, reason string, cause error) {
	s.setRetryState(st, reason, cause, time.Time{}, false)
}

// setRetryState is setStateCause for the run loop: next is when it tries
// again (zero: no try is due; ServerStatus.NextTry, apart from the reason,
// which says why), and reconnecting says it is getting a lost connection
// back (its last lists are served meanwhile).
func (s *server) setRetryState(st State, reason string, cause error, next time.Time, reconnecting bool) {
	s.mu.Lock()
	from := s.state
	s.state, s.reason, s.since = st, oneLine(s.h.secrets.String(reason)), s.h.clock.Now()
	s.cause = s.h.secrets.Error(cause)
	s.nextTry, s.reconnecting = next, reconnecting && st == StateConnecting
	if st == StateConnecting {
		select {
		case <-s.settled:
			s.settled = make(chan struct{})
		default:
		}
	} else {
		select {
		case <-s.settled:
		default:
			close(s.settled)
		}
	}
	s.mu.Unlock()
	reason = s.snapshotReason()
	if from != st {
		s.h.log.Info("server state", "server", s.name, "state_from", string(from), "state_to", string(st), "reason", reason)
	}
	s.h.emit(Event{Kind: EventState, Server: s.name, State: st, Reason: reason})
}

func (s *server) settle(st State, reason string) { s.setState(st, reason) }

// waitSettled waits until the server is not connecting.
func (s *server) waitSettled(ctx context.Context) bool {
	for {
		s.mu.Lock()
		ch, st := s.settled, s.state
		s.mu.Unlock()
		if st != StateConnecting && st != "" {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-s.h.ctx.Done(): // closed: it never settles
			return false
		case <-ch:
		}
	}
}

// liveServer is the named server and its connection, once connected
// (live waits for it).
func (h *Host) liveServer(ctx context.Context, name string) (*server, *conn, error) {
	s, err := h.server(name)
	if err != nil {
		return nil, nil, err
	}
	c, err := s.live(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s, c, nil
}

// liveNow returns the connection live would return at once, without
// waiting: the server's state is settled and it is connected. Else nil.
func (s *server) liveNow() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateConnecting && s.state != "" && s.conn != nil && s.collision == "" {
		return s.conn
	}
	return nil
}

// live returns the current connection, waiting (bounded by ctx) while the
// server is connecting.
func (s *server) live(ctx context.Context) (*conn, error) {
	s.waitSettled(ctx)
	if s.h.ctx.Err() != nil {
		return nil, ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && s.collision == "" {
		return s.conn, nil
	}
	st, reason := s.state, s.reason
	if s.collision != "" {
		st, reason = StateError, s.collision
	}
	if st == StateConnecting && s.reconnecting {
		return nil, fmt.Errorf("%w: %s is reconnecting (%s)", ErrNotConnected, s.name, reason)
	}
	if st == StateConnecting {
		return nil, fmt.Errorf("%w: %s is still connecting (%s)", ErrNotConnected, s.name, reason)
	}
	if reason == "" {
		return nil, fmt.Errorf("%w: %s %s", ErrNotConnected, s.name, st.Phrase())
	}
	return nil, fmt.Errorf("%w: %s %s: %s", ErrNotConnected, s.name, st.Phrase(), reason)
}

// isReconnecting reports whether the server lost its connection and is
// getting it back (its last lists are served meanwhile).
func (s *server) isReconnecting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reconnecting
}

// publicState folds the breaker into the state the user sees.
func (s *server) publicState() State {
	s.mu.Lock()
	st := s.state
	collided := s.collision != ""
	s.mu.Unlock()
	if collided {
		return StateError
	}
	if st == StateConnected {
		// Open until its cooldown is over; then the next call is the probe,
		// and the server is listed as connected for it.
		if bs, _, wait := s.breaker.snapshot(); bs == BreakerOpen && wait > 0 {
			return StateCircuitOpen
		}
	}
	return st
}

func (s *server) snapshotReason() string {
	s.mu.Lock()
	r := s.reason
	if s.collision != "" {
		r = s.collision
	}
	st, last, watching := s.state, s.lastFailure, s.watching
	reconnecting, collided := s.reconnecting, s.collision != ""
	listErr := s.listErrorLocked()
	s.mu.Unlock()
	if bs, n, wait := s.breaker.snapshot(); bs == BreakerOpen && st == StateConnected && wait > 0 {
		msg := fmt.Sprintf("%d consecutive failures", n)
		if last != "" {
			msg += " (last: " + last + ")"
		}
		msg += "; its tools stay listed and calls fail fast"
		if watching {
			return msg + fmt.Sprintf("; it does not answer: pinging it, the circuit closes as soon as it answers (a call probes it in %s at the latest)", wait.Round(time.Second))
		}
		return msg + fmt.Sprintf("; next probe in %s", wait.Round(time.Second))
	}
	if r == "" && st == StateConnected {
		return listErr
	}
	if collided {
		return r
	}
	if reconnecting {
		r += "; its last lists stay served and calls wait for it"
	}
	return r
}

// listErrorLocked is one line naming the lists whose last fetch failed,
// or "". The caller holds s.mu.
func (s *server) listErrorLocked() string {
	var parts []string
	for _, method := range listMethods {
		if e, ok := s.listErrs[method]; ok {
			parts = append(parts, method+" failed: "+e)
		}
	}
	return strings.Join(parts, "; ")
}

// setListErr records (err != nil) or clears the failure of one list method.
func (s *server) setListErr(method string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.listErrs, method)
		return
	}
	if s.listErrs == nil {
		s.listErrs = map[string]string{}
	}
	s.listErrs[method] = oneLine(s.h.secrets.String(err.Error()))
}

// stallBound is how long a server whose circuit just opened gets to answer
// a ping. One that answers is alive although its calls failed (a tool that
// hangs on its backend): the cooldown decides, and a call probes it then.
// One that does not has stopped answering altogether (stalled, stopped,
// wedged), so its first answer closes the circuit. A live server answers
// a ping in milliseconds; the bound is short so that a stall that ends
// soon after the circuit opened is still told apart.
const stallBound = 250 * time.Millisecond

// probeGap is the pause before pinging again after a ping's connection
// failed.
const probeGap = 250 * time.Millisecond

// watchOpen starts pinging the server of a circuit that opened in
// generation gen (pingUntilAnswered); stopWatch, called when the breaker
// leaves the open state, ends it.
func (s *server) watchOpen(gen uint64) {
	ctx, cancel := context.WithCancel(s.h.ctx)
	s.mu.Lock()
	if s.watchCancel != nil {
		s.watchCancel()
	}
	s.watchCancel, s.watching = cancel, false
	recent := !s.pingClosedAt.IsZero() && s.h.clock.Now().Sub(s.pingClosedAt) < s.breaker.currentCooldown()
	s.mu.Unlock()
	if recent {
		s.h.log.Info("circuit open again soon after pings closed it; waiting out the cooldown", "server", s.name)
		return
	}
	go s.pingUntilAnswered(ctx, gen)
}

func (s *server) stopWatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchCancel != nil {
		s.watchCancel()
		s.watchCancel = nil
	}
	s.watching = false
}

func (s *server) setWatching() {
	s.mu.Lock()
	changed := !s.watching
	s.watching = true
	s.mu.Unlock()
	if changed {
		s.h.log.Info("circuit open and the server does not answer; pinging it until it does", "server", s.name)
		s.h.emit(Event{Kind: EventState, Server: s.name, State: s.publicState(), Reason: s.snapshotReason()})
	}
}

// pingUntilAnswered keeps one ping in flight on the current connection,
// without a deadline, until the server answers or ctx ends. A stalled
// server (SIGSTOP, a blocked event loop) answers the moment it runs again,
// so the circuit closes within the round trip of its recovery rather than
// at the end of the cooldown. A connection that drops is left to the
// reconnect, which closes the circuit when it succeeds.
func (s *server) pingUntilAnswered(ctx context.Context, gen uint64) {
	first := true
	stalled := false
	for ctx.Err() == nil {
		s.mu.Lock()
		c, st, settled := s.conn, s.state, s.settled
		s.mu.Unlock()
		if c == nil {
			if st != StateConnecting {
				return // error or paused: a reconnect or retry resets the breaker
			}
			stalled, first = true, false
			s.setWatching()
			select {
			case <-ctx.Done():
				return
			case <-settled:
			}
			continue
		}
		answered := make(chan error, 1)
		go func() { answered <- c.session.Ping(ctx, nil) }()
		var bound <-chan time.Time
		if first {
			bound = s.h.clock.After(stallBound)
		}
		first = false
		var err error
	wait:
		for {
			select {
			case err = <-answered:
				break wait
			case <-bound:
				bound, stalled = nil, true
				s.setWatching()
			case <-ctx.Done():
				return
			}
		}
		var rpcErr *jsonrpc.Error
		if err == nil || errors.As(err, &rpcErr) && !transportRejected(rpcErr) { // any answer: it is alive
			if stalled {
				s.mu.Lock()
				s.pingClosedAt = s.h.clock.Now()
				s.mu.Unlock()
				if s.breaker.recover(gen) {
					s.h.log.Info("circuit closed: the server answers again", "server", s.name)
				}
			}
			return
		}
		stalled = true
		s.setWatching()
		select {
		case <-ctx.Done():
			return
		case <-c.done:
		case <-s.h.clock.After(probeGap):
		}
	}
}

func (s *server) status() ServerStatus {
	st := ServerStatus{
		Name:    s.name,
		Type:    s.cfg.Effective.Type,
		Scope:   s.cfg.Scope,
		Trust:   s.cfg.Trust,
		File:    s.cfg.File,
		State:   s.publicState(),
		Reason:  s.snapshotReason(),
		Command: shownCommandLine(s.cfg, s.h.secrets),
		Stats:   s.stats.snapshot(),
	}
	s.mu.Lock()
	st.Since = s.since
	if st.State == StateError && s.collision == "" {
		st.Err = s.cause
	}
	st.Reconnects = s.reconnects
	st.Reconnecting = s.reconnecting && st.State == StateConnecting
	if st.State == StateError || st.Reconnecting {
		st.NextTry = s.nextTry
	}
	if st.State == StateCircuitOpen {
		st.NextTry = s.breaker.probeAt() // as the refusal names it
	}
	if len(s.listErrs) > 0 {
		st.ListErrors = maps.Clone(s.listErrs)
	}
	c, last, starting := s.conn, s.lastConn, s.starting
	s.mu.Unlock()
	if c != nil {
		// serverInfo is the server's own words, shown by status: it may
		// echo its secrets as its stderr may.
		st.Protocol, st.ServerInfo = c.protocol, s.h.secrets.String(c.serverInfo)
	}
	if starting != nil && st.State == StateConnecting {
		// What it says while it starts (a refusal, a retry) is why it is
		// not connected yet: shown at once, not only after it failed.
		if tail := starting.stderrTail(20); len(tail) > 0 {
			last = starting
		}
	}
	if last != nil && st.State != StateConnected {
		st.StderrTail = s.h.secrets.Strings(last.stderrTail(20)) // a server may echo its secrets
	}
	// What the model is offered: the last list served (tool filters
	// applied, held tools left out), kept while a list_changed refetch
	// is pending.
	s.mu.Lock()
	known := s.known
	s.mu.Unlock()
	if known != nil {
		st.Tools = len(known)
		st.Tokens = s.h.blockTokens(s.name, known) // cached: deferral computes it too
	}
	if st.State == StateConnected || st.State == StateCircuitOpen {
		s.mu.Lock()
		st.Deferred = s.deferred
		s.mu.Unlock()
	}
	return st
}

// setCollision marks the server unusable because its tool names collide.
func (s *server) setCollision(msg string) {
	s.mu.Lock()
	changed := s.collision != msg
	s.collision = msg
	s.mu.Unlock()
	if changed {
		s.h.log.Error("tool names collide", "server", s.name, "error", msg)
		s.h.emit(Event{Kind: EventState, Server: s.name, State: StateError, Reason: msg})
	}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
