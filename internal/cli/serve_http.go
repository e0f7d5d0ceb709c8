package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
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
	guard := &httpGuard{
		auth:    opts.auth,
		origins: ownOrigins(opts.HTTP, addr, opts.AllowOrigins),
		log:     log,
	}
	if guard.auth == nil {
		guard.auth = gateway.NewAuth(&gateway.AuthOptions{SharedToken: opts.Token})
	}
	mux := http.NewServeMux()
	mountMCP(mux, "/mcp", guard, mcpEndpoint(opts, g, log))
	mux.HandleFunc("/healthz", healthz(g.Host(), opts.Stateless))
	mountOAuth(ctx, mux, opts, log) // RFC 9728 metadata (serve_jwt.go)
	if opts.metrics != nil {
		// Behind the same auth as /mcp: the counts name servers and tools.
		mux.Handle("/metrics", guard.wrap(opts.metrics.Handler()))
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
func mountMCP(mux *http.ServeMux, path string, guard *httpGuard, endpoint http.Handler) {
	mux.Handle(path, guard.wrap(endpoint))
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

// httpGuard enforces the gateway's HTTP rules (docs/gateway.md, Streamable
// HTTP) on every /mcp request: a foreign browser Origin is
// refused (403) and, once any credential exists (the shared token, the
// gateway auth file), a request without a valid one is refused (401).
// The caller's principal reaches the SDK as its TokenInfo, which binds an
// HTTP session to it and the gateway's rules and limits to its calls.
type httpGuard struct {
	auth    *gateway.Auth
	origins map[string]bool
	log     *slog.Logger
}

// principalKey carries the authenticated principal from the guard to the
// SDK's bearer-token middleware.
type principalKey struct{}

// sdkAuth hands the principal the guard found to the SDK.
var sdkAuth = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	p, _ := ctx.Value(principalKey{}).(*gateway.Principal)
	if p == nil {
		return nil, auth.ErrInvalidToken
	}
	return p.TokenInfo(), nil
}, nil)

func (g *httpGuard) wrap(next http.Handler) http.Handler {
	withPrincipal := sdkAuth(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Host names are case-insensitive: the SDK's DNS-rebinding check
		// behind us knows "localhost" only in lower case.
		r.Host = strings.ToLower(r.Host)
		// Every Origin header is judged, not the first: a request with an
		// empty or allowed one first and a foreign one after is foreign.
		for _, o := range r.Header.Values("Origin") {
			if o != "" && !g.origins[normalizeOrigin(o)] {
				g.log.Warn("refused a request from a foreign origin", "origin", o)
				http.Error(w, "forbidden: origin not allowed (start serve with --allow-origin to allow it)", http.StatusForbidden)
				return
			}
		}
		// A header that means one thing, sent twice, is read by one reader
		// from its first copy and by another (a proxy, a balancer keyed on
		// the session) from its last: refuse it rather than pick. (Two Host
		// headers net/http already refuses with 400.)
		for _, h := range singleHeaders {
			if len(r.Header.Values(h)) > 1 {
				g.log.Warn("refused a request with a repeated header", "header", h)
				http.Error(w, "bad request: more than one "+h+" header", http.StatusBadRequest)
				return
			}
		}
		if g.auth.Required() {
			got, _ := bearer(r.Header.Get("Authorization"))
			// Compared by digest, in constant time (gateway.Auth).
			p, err := g.auth.Authenticate(r.Context(), got)
			if err != nil {
				w.Header().Set("WWW-Authenticate", g.auth.Challenge(err)) // names the OAuth metadata, if any
				http.Error(w, "unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
				return
			}
			withPrincipal.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveMetrics serves /metrics alone on addr (serve --metrics), behind
// the guard, until stop is called.
func serveMetrics(addr string, guard *httpGuard, m *gateway.Metrics, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, FailureErr(fmt.Errorf("listening on %s for metrics: %w", addr, err), "pick a free port for --metrics")
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", guard.wrap(m.Handler()))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() { _ = srv.Serve(ln) }()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// singleHeaders are the request headers the gateway or the SDK behind it
// reads as one value.
var singleHeaders = []string{"Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id"}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// ownOrigins are the origins a browser page served by the gateway's own
// address would send: the bound host (unless it is a wildcard) and, for
// loopback or wildcard binds, the loopback names — never the request's Host
// header, which a DNS-rebinding attacker controls. Allowed origins are
// added as given.
func ownOrigins(bind, actual string, allowed []string) map[string]bool {
	out := map[string]bool{}
	host, _, _ := net.SplitHostPort(bind)
	_, port, _ := net.SplitHostPort(actual)
	var hosts []string
	ip := net.ParseIP(host)
	switch {
	case host == "" || (ip != nil && ip.IsUnspecified()):
		hosts = []string{"localhost", "127.0.0.1", "[::1]"}
	case isLoopbackAddr(bind):
		hosts = []string{"localhost", "127.0.0.1", "[::1]"}
	case ip != nil && ip.To4() == nil:
		hosts = []string{"[" + host + "]"}
	default:
		hosts = []string{host}
	}
	for _, h := range hosts {
		for _, scheme := range []string{"http", "https"} {
			out[normalizeOrigin(scheme+"://"+h+":"+port)] = true
		}
	}
	for _, a := range allowed {
		out[normalizeOrigin(a)] = true
	}
	return out
}

// normalizeOrigin lowercases scheme and host, drops a trailing slash and a
// default port, so that equal origins compare equal.
func normalizeOrigin(o string) string {
	o = strings.TrimRightFunc(strings.TrimSpace(o), func(r rune) bool { return r == '/' || unicode.IsSpace(r) })
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return strings.ToLower(o)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if h, p, err := net.SplitHostPort(host); err == nil && ((scheme == "http" && p == "80") || (scheme == "https" && p == "443")) {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	return scheme + "://" + host
}

// healthz answers a load balancer: 200 with counts, never names, commands
// or errors (no auth is asked, so nothing in it may be secret).
func healthz(h *host.Host, stateless bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		type status struct {
			Status    string `json:"status"`
			Servers   int    `json:"servers"`
			Connected int    `json:"connected"`
			Stateless bool   `json:"stateless"`
			// CircuitOpen counts servers whose circuit is open (their
			// tools stay listed, calls fail fast); ListFailed connected
			// servers whose tools, prompts or resources list fails.
			CircuitOpen int            `json:"circuit_open"`
			ListFailed  int            `json:"list_failed"`
			States      map[string]int `json:"states"`
		}
		st := status{Status: "ok", Stateless: stateless, States: map[string]int{}}
		for _, s := range h.Status() {
			st.Servers++
			st.States[string(s.State)]++
			switch {
			case s.State == host.StateCircuitOpen:
				st.CircuitOpen++
			case s.State == host.StateConnected && len(s.ListErrors) > 0:
				st.ListFailed++
			case s.State == host.StateConnected:
				st.Connected++
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if err := json.NewEncoder(w).Encode(st); err != nil && !errors.Is(err, net.ErrClosed) {
			return
		}
	}
}
