package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// serveHTTP serves the gateway at /mcp and a health check at /healthz
// until ctx is done, then shuts down within ShutdownGrace.
func serveHTTP(ctx context.Context, opts *ServeOptions, g *gateway.Gateway, log *slog.Logger) error {
	ln, err := opts.listen()
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	mux, stop, err := httpHandler(ctx, opts, g, addr, log)
	if err != nil {
		return err
	}
	defer stop()
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		// A keep-alive connection with no request on it is closed (SSE
		// streams are requests, and stay).
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("gateway listening", "addr", addr, "stateless", opts.Stateless, "token", opts.Token != "")
	// One line for the person (or script) who started it: where to point
	// clients. Never a token.
	fmt.Fprintf(opts.IO.ErrOut, "switchboard: gateway serving http://%s/mcp (health: /healthz)\n", addr)
	if opts.Listening != nil {
		opts.Listening(addr)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return FailureErr(fmt.Errorf("serving HTTP: %w", err), "")
	case <-ctx.Done():
	}
	// Stop accepting; give the calls in flight the grace, then cancel
	// them (notifications/cancelled upstream) and cut what is still open
	// — a client's GET stream never ends by itself.
	sctx, cancel := context.WithTimeout(context.Background(), opts.shutdownGrace())
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		_ = srv.Shutdown(sctx)
		close(stopped)
	}()
	g.Shutdown(sctx)
	t := time.NewTimer(250 * time.Millisecond) // for the last answers to be written
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
	}
	srv.Close()
	return nil
}

// httpHandler builds the gateway's whole HTTP surface — /mcp behind the
// guard (Origin/Host, auth, session cap, body timeout, both protocol
// revisions or stateless, scale-out routing), /healthz, the RFC 9728
// metadata and /metrics behind the same auth — apart from listening and
// serving, so it can be mounted where the caller wants (the first step of
// issue 32.2: one handler, later in package gateway). addr is the
// listener's actual address (for the own-origin set); stop ends what the
// handler started besides itself (a separate --metrics listener).
func httpHandler(ctx context.Context, opts *ServeOptions, g *gateway.Gateway, addr string, log *slog.Logger) (_ *http.ServeMux, stop func(), _ error) {
	stop = func() {}
	a := opts.auth
	if a == nil {
		a = gateway.NewAuth(&gateway.AuthOptions{SharedToken: opts.Token})
	}
	guard := gateway.NewHTTPGuard(a, opts.HTTP, addr, opts.AllowOrigins, log)
	mux := http.NewServeMux()
	mountMCP(mux, "/mcp", guard, mcpEndpoint(opts, g, log))
	mux.HandleFunc("/healthz", gateway.Healthz(g.Host(), opts.Stateless))
	if opts.memberSecrets != nil {
		mux.Handle(MemberSecretsPath, guard.Wrap(opts.memberSecrets)) // serve_member_secrets.go
	}
	mountOAuth(ctx, mux, opts, log) // RFC 9728 metadata (serve_jwt.go)
	if opts.console != nil {
		// Its own login and session cookie, not the bearer guard: a
		// browser cannot send a key (serve_console.go).
		mux.Handle(ConsolePath+"/", opts.console)
		opts.consoleAddr.Store(addr)
	}
	if opts.metrics != nil {
		// Behind the same auth as /mcp: the counts name servers and tools.
		mux.Handle("/metrics", guard.Wrap(opts.metrics.Handler()))
		if opts.MetricsAddr != "" {
			s, err := serveMetrics(opts.MetricsAddr, guard, opts.metrics, log)
			if err != nil {
				return nil, nil, err
			}
			stop = s
		}
	}
	return mux, stop, nil
}

// mountMCP mounts an MCP endpoint at path behind the guard. Each path
// gets its own endpoint (a later /mcp/<profile> is one more call), all
// behind the same guard, as a /ui mount would be.
func mountMCP(mux *http.ServeMux, path string, guard *gateway.HTTPGuard, endpoint http.Handler) {
	mux.Handle(path, guard.Wrap(endpoint))
}

// mcpEndpoint is the MCP endpoint without the guard: the session cap and
// body timeout (httpLife), both protocol revisions on one endpoint or
// stateless only, and, with session keys, the sealed-session scale-out
// routing (serve_scale.go).
func mcpEndpoint(opts *ServeOptions, g *gateway.Gateway, log *slog.Logger) http.Handler {
	idle := opts.SessionIdleTimeout
	if idle <= 0 {
		idle = DefaultSessionIdleTimeout
	}
	sdkHandler := func(stateless bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.Server() }, &mcp.StreamableHTTPOptions{
			Stateless: stateless,
			Logger:    log,
			// Idle sessions of clients that vanished are closed.
			SessionTimeout: idle,
		})
	}
	body := opts.BodyTimeout
	if body <= 0 {
		body = DefaultBodyTimeout
	}
	var life http.Handler = newHTTPLife(g, sdkHandler(true), true, opts, log)
	switch s := opts.scale; {
	case s != nil:
		// Scale-out with sessions (serve_scale.go): sessions here,
		// 2026-07-28 requests per request.
		s.stateful = newHTTPLife(g, sdkHandler(false), false, opts, log)
		s.stateless = life
		s.body, s.log = body, log
		life = s
		log.Info("sessions are sealed with the session keys and name this instance", "advertise", s.self)
	case !opts.Stateless:
		// Both protocol revisions on one endpoint: sessions for the
		// clients that initialize one, each request on its own for
		// those on 2026-07-28, which have no sessions.
		life = &revisionRouter{stateful: newHTTPLife(g, sdkHandler(false), false, opts, log), stateless: life, body: body, log: log}
	}
	return life
}

// listen returns the gateway's listener: the one made early for
// scale-out (whose own address goes into session IDs), else a new one.
func (opts *ServeOptions) listen() (net.Listener, error) {
	if ln := opts.listener; ln != nil {
		opts.listener = nil
		return ln, nil
	}
	ln, err := net.Listen("tcp", opts.HTTP)
	if err != nil {
		return nil, FailureErr(fmt.Errorf("listening on %s: %w", opts.HTTP, err), "pick a free port, or stop what holds it")
	}
	if s := opts.scale; s != nil && s.self == "" {
		s.self = "http://" + ln.Addr().String()
	}
	return ln, nil
}

// serveMetrics serves /metrics alone on addr (serve --metrics), behind
// the guard, until stop is called.
func serveMetrics(addr string, guard *gateway.HTTPGuard, m *gateway.Metrics, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, FailureErr(fmt.Errorf("listening on %s for metrics: %w", addr, err), "pick a free port for --metrics")
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", guard.Wrap(m.Handler()))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() { _ = srv.Serve(ln) }()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
