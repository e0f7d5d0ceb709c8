package host

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/jsonl"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/tasks"
	"github.com/switchboard-mcp/switchboard/trust"
)

// headersHelperTimeout bounds a headersHelper command.
const headersHelperTimeout = 10 * time.Second

// spawnWithin is spawn, bounded by ctx: looking up the program and its
// directory waits for ever on a network mount that stopped answering, and
// the kernel cannot be interrupted there. A process that starts after all
// is closed.
func (s *server) spawnWithin(ctx context.Context, timeout time.Duration, def config.Server) (*proc.Process, error) {
	type started struct {
		p   *proc.Process
		err error
	}
	ch := make(chan started, 1)
	go func() {
		p, err := s.spawn(def)
		ch <- started{p, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			if errors.Is(r.err, exec.ErrNotFound) {
				// Said once, and kept in the chain for a front end's hint.
				return nil, fmt.Errorf("%w %q: %w", errSpawn, def.Command, exec.ErrNotFound)
			}
			return nil, fmt.Errorf("%w %q: %v", errSpawn, def.Command, r.err)
		}
		return r.p, nil
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			// Hung (a mount that stopped answering): stop it whenever
			// its start returns.
			go func() {
				if r := <-ch; r.p != nil {
					s.stopUnserved(r.p)
				}
			}()
			return nil, fmt.Errorf("%w: %q did not start within %s (is its program or cwd on a network mount that stopped answering?)", errStartupTimeout, def.Command, timeout)
		}
		// The host stops it (Close, a reload) while its start is under
		// way — often a start slowed by load, whose process already runs.
		// Stopped here, as any server stopped before it served, and not
		// behind the caller's back: a Close that returned while the
		// process still ran let the program exit and leave it unsignalled
		// (npx's cache lock left behind), or SIGTERMed after Close.
		select {
		case r := <-ch:
			if r.p != nil {
				s.stopUnserved(r.p)
			}
		case <-s.h.clock.After(killBound):
			go func() {
				if r := <-ch; r.p != nil {
					s.stopUnserved(r.p)
				}
			}()
		}
		return nil, ctx.Err()
	}
}

// stopUnserved stops a process that never served (terminateUnserved) and
// releases its pipes once it is gone — or, should the kernel hold it past
// killBound, whenever it ends.
func (s *server) stopUnserved(p *proc.Process) {
	if s.terminateUnserved(p) {
		_ = p.Close(0)
	} else {
		go p.Close(0)
	}
}

// terminateUnserved stops a process that never served: SIGTERM first (a
// package runner stopped while it starts — the host closing, as when a
// client lists a gateway's tools and leaves — cleans its cache's lock up
// on SIGTERM only), SIGKILL after startingGrace. It reports whether the
// process is gone within killBound: SIGKILL does not free a process the
// kernel holds (a read on a mount whose server is gone).
func (s *server) terminateUnserved(p *proc.Process) (gone bool) {
	_ = p.Terminate(startingGrace)
	select {
	case <-p.Done():
		return true
	case <-s.h.clock.After(killBound):
		return false
	}
}

// stdioTransport is the transport to a stdio server's process: the one
// place the host picks internal/jsonl or, with sdk, the SDK's own.
func stdioTransport(p *proc.Process, sdk bool) mcp.Transport {
	return jsonl.New(p.Stdout(), p.Stdin(), jsonl.Options{SDK: sdk})
}

// dial starts (for stdio) and initializes one session, bounded by timeout.
// When it fails, probed says whether the 2026-07-28 server/discover probe
// may be what failed it (see probeMayHaveFailed): only then can
// connecting pinned to an older revision help.
func (s *server) dial(ctx context.Context, timeout time.Duration, protocol string) (_ *conn, probed bool, _ error) {
	// Before the startup timeout runs: a SecretSource may ask a person,
	// and bounds its own store calls.
	def, err := s.definition(ctx)
	if err != nil {
		return nil, false, err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &conn{grace: s.h.opts.CloseGrace, clock: s.h.clock}
	// Task tools are followed under the SDK (internal/tasks), for the
	// connection's life.
	ta := tasks.New(&tasks.Options{Optional: def.Tasks == config.TasksOptional, Logger: s.h.log.With("server", s.name)})
	c.tasks = ta
	var transport mcp.Transport
	var stdin *stdinWatch
	switch def.Type {
	case config.TypeStdio, "":
		p, err := s.spawnWithin(cctx, timeout, def)
		if err != nil {
			return nil, false, err
		}
		c.proc = p
		c.recordsWrites = true
		s.mu.Lock()
		s.starting = c
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if s.starting == c {
				s.starting = nil
			}
			s.mu.Unlock()
		}()
		stdin = watchStdin(p.Stdin())
		defer stdin.close()
		c.raw = newRawCalls()
		transport = probeTransport{inner: tasks.Wrap(stdioTransport(p, s.h.opts.SDKStdioTransport), ta), progress: s.h.progress, server: s.name,
			badFrame: &c.badFrame, firstWrite: &c.firstWrite, raw: c.raw}
	case config.TypeSSE, config.TypeHTTP:
		streamable := def.Type == config.TypeHTTP
		var hta *tasks.Adapter // under the Streamable HTTP client: see tasks.Adapter.RoundTripper
		if streamable {
			hta = ta
		}
		hc, err := s.httpClient(cctx, def, hta)
		if err != nil {
			return nil, false, err
		}
		hc.Transport = answerWitness{base: hc.Transport, answered: &c.answered}
		if streamable {
			transport = &mcp.StreamableClientTransport{Endpoint: def.URL, HTTPClient: hc, MaxRetries: 2}
		} else {
			transport = tasks.Wrap(&mcp.SSEClientTransport{Endpoint: def.URL, HTTPClient: hc}, ta)
		}
		// The SSE stream lives as long as the connection, not the handshake.
		life, endLife := context.WithCancel(ctx)
		c.endLife = func() { endLife(); ta.Close() }
		transport = lifetimeTransport{inner: transport, life: life}
	default:
		return nil, false, fmt.Errorf("unknown transport %q", def.Type)
	}

	client := s.newClient(c)
	// A process that dies during the handshake must fail the connect at
	// once, not at the startup timeout.
	if c.proc != nil {
		go func() {
			select {
			case <-c.proc.Done():
				select { // let a last answer be read
				case <-s.h.clock.After(50 * time.Millisecond):
				case <-cctx.Done():
				}
				cancel()
			case <-cctx.Done():
			}
		}()
	}
	session, err := client.Connect(cctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		// The deadline, not the cancel that a death during the handshake
		// makes (below): a server that hangs in initialize often exits
		// once the SDK gives up and closes its stdin, and must still be
		// reported as too slow, not as exited.
		timedOut := errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		died := false
		if c.proc != nil {
			// The handshake may fail on the closed pipe a moment before the
			// exit is reaped; wait briefly so the report can say why. Not
			// when it timed out, nor when the host stopped it (Close, a
			// reload): no report is made then.
			wait := 500 * time.Millisecond
			if timedOut || ctx.Err() != nil {
				wait = 0
			}
			select {
			case <-c.proc.Done():
				died = true
			case <-s.h.clock.After(wait):
			}
			// Its pipes stay open for the report below (its stderr);
			// conn.close releases them. One the kernel holds is not
			// waited for again: Close releases its pipes whenever it
			// ends, and the host's Close skips it.
			if !s.terminateUnserved(c.proc) {
				c.abandoned.Store(true)
				go c.proc.Close(0)
			}
			s.mu.Lock()
			s.lastConn = c // keep its stderr for status
			s.mu.Unlock()
		}
		if msg, ok := strayStdout(c.badFrame.Load()); ok {
			return nil, false, strayStdoutError(msg)
		}
		switch {
		case died && !timedOut:
			probed := c.probeRead(stdin)
			c.proc.WaitStderr(stderrDrain)
			msg := processExit(c.proc).Error() + " during initialize"
			tail := c.proc.StderrTail(reasonTailLines)
			if folder := s.repairNpx(tail); folder != "" {
				if l := stderrReason(tail); l != "" {
					msg += ": " + l
				}
				return nil, false, &npxRepairedError{err: errors.New(msg), folder: folder}
			}
			if l := reasonLine(tail); l != "" {
				msg += ": " + l
			}
			return nil, probed, errors.New(msg)
		case timedOut:
			if c.endLife != nil {
				c.endLife()
			}
			return nil, false, fmt.Errorf("%w: no answer to initialize within %s", errStartupTimeout, timeout)
		}
		if c.endLife != nil {
			c.endLife()
		}
		// The server ended the handshake: the probe may be what it could
		// not take, if it took it in.
		probed := c.answered.Load()
		if c.proc != nil {
			probed = c.probeRead(stdin)
		}
		return nil, probed, initFailed(err)
	}
	c.session = session
	if res := session.InitializeResult(); res != nil {
		c.protocol = res.ProtocolVersion
		if res.ServerInfo != nil {
			c.serverInfo = strings.TrimSpace(res.ServerInfo.Name + " " + res.ServerInfo.Version)
		}
	}
	c.watch()
	// Servers send log messages only once a level is set (their logging is
	// surfaced): per session before 2026-07-28, per request after.
	c.logging = c.serves(func(caps *mcp.ServerCapabilities) bool { return caps.Logging != nil })
	if c.logging && c.protocol < "2026-07-28" {
		_ = session.SetLoggingLevel(cctx, &mcp.SetLoggingLevelParams{Level: s.h.opts.LogLevel})
	}
	return c, false, nil
}

// shownCommandLine renders what a server runs for status: the command and
// args quoted as a shell would need them (trust.CommandLine: $'…' escapes
// for what a terminal would act on or hide, as the approval prompt shows
// it), each argument redacted on its own (redact.CommandArgs: known secret
// values, and inert secret-named values), or the URL as written, scrubbed.
func shownCommandLine(rs config.ResolvedServer, secrets *redact.Set) string {
	def := rs.Effective
	if def.Type == config.TypeSSE || def.Type == config.TypeHTTP {
		return shownURL(rs, secrets)
	}
	if def.Command == "" {
		return "" // nothing to run (a missing or invalid server)
	}
	return trust.CommandLine(secrets.String(def.Command), secrets.CommandArgs(def.Args))
}

// shownURL is a server's URL as it may be printed or logged: as written,
// with its ${VAR} references (as `mcp get` shows it, and Claude Code does):
// an expanded value is a secret whatever its variable's name. Userinfo
// passwords, secret-named parameters and known values are redacted too.
func shownURL(rs config.ResolvedServer, secrets *redact.Set) string {
	u := rs.Written.URL
	if u == "" {
		u = rs.Effective.URL // an embedder's server may hold only what runs
	}
	return secrets.String(redact.URL(u))
}

// initFailed is a handshake's error. For an HTTP server it is said once,
// as the request's own error ("dial tcp …: connection refused"), not under
// the SDK's "calling "initialize": sending "initialize": rejected by
// transport:"; the whole chain stays for errors.Is and As.
func initFailed(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &saidOnce{msg: "initialize failed: " + withoutURLs(ue), err: err}
	}
	return fmt.Errorf("initialize failed: %w", err)
}

// withoutURLs is err's text without the URLs net/http's *url.Errors put in
// it (`Post "https://host/mcp?key=…": `): a server's URL may hold a
// credential (in its query or path) in a form no scrubbing recognizes, and
// the error is about a server that its status, log line or message names
// already, with its URL shown redacted where one is shown. The outermost
// request, the server's own, loses its "Op "URL": " prefix; a request
// inside it (an OAuth metadata or token request) keeps its method and
// origin, which say which server failed and are not secret (they travel in
// DNS and TLS in clear).
func withoutURLs(err error) string {
	msg := err.Error()
	outer := true
	for e := range errorChain(err) {
		ue, ok := e.(*url.Error)
		if !ok {
			continue
		}
		quoted := fmt.Sprintf("%s %q: ", ue.Op, ue.URL)
		with := ""
		if !outer {
			with = ue.Op + " " + originOf(ue.URL) + ": "
		}
		outer = false
		msg = strings.ReplaceAll(msg, quoted, with)
	}
	return msg
}

// errorChain yields err and every error it wraps, depth first.
func errorChain(err error) func(yield func(error) bool) {
	return func(yield func(error) bool) {
		var walk func(error) bool
		walk = func(e error) bool {
			if e == nil {
				return true
			}
			if !yield(e) {
				return false
			}
			switch u := e.(type) {
			case interface{ Unwrap() error }:
				return walk(u.Unwrap())
			case interface{ Unwrap() []error }:
				for _, inner := range u.Unwrap() {
					if !walk(inner) {
						return false
					}
				}
			}
			return true
		}
		walk(err)
	}
}

// originOf is a URL's scheme://host[:port], or "a URL" when it does not
// parse as one.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "a URL"
	}
	return u.Scheme + "://" + u.Host
}

// saidOnce is err with a shorter text of its own.
type saidOnce struct {
	msg string
	err error
}

func (e *saidOnce) Error() string { return e.msg }
func (e *saidOnce) Unwrap() error { return e.err }
