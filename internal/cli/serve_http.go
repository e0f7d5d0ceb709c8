package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
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
		// Every body within --body-timeout, not only /mcp's: the
		// console's login, or a POST to / or /healthz, would otherwise
		// hold a connection for as long as its client trickles it.
		Handler:           gateway.BodyDeadline(mux, opts.BodyTimeout),
		ReadHeaderTimeout: 10 * time.Second,
		// A keep-alive connection with no request on it is closed (SSE
		// streams are requests, and stay).
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("gateway listening", "addr", addr, "stateless", opts.Stateless, "token", opts.Token != "")
	// One line for the person (or script) who started it: where to point
	// clients. Never a token.
	shown, wildcard := servingAddr(opts.HTTP, addr)
	where := ""
	if wildcard {
		where = " on every network interface of this machine"
	}
	fmt.Fprintf(opts.IO.ErrOut, "switchboard: gateway serving http://%s/mcp%s (health: /healthz)\n", shown, where)
	fmt.Fprintf(opts.IO.ErrOut, "switchboard: %s\n", opts.callersLine())
	for _, pg := range opts.profileGateways {
		fmt.Fprintf(opts.IO.ErrOut, "switchboard: profile %s at http://%s/mcp/%s\n", pg.name, shown, pg.name)
		if len(pg.left) > 0 {
			// Served within --profile: a server it leaves out is not
			// there, which a client of the endpoint would not be told.
			fmt.Fprintf(opts.IO.ErrOut, "switchboard: warning: /mcp/%s serves profile %s within --profile %s: not served, as not in profile %q: %s\n",
				pg.name, pg.name, pg.within, pg.within, termsafe.Line(strings.Join(pg.left, ", ")))
		}
	}
	for _, d := range opts.profileErrors {
		fmt.Fprintf(opts.IO.ErrOut, "switchboard: a profile definition dropped: %s\n", d.Error())
	}
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
	for _, pg := range opts.profileGateways {
		pg.g.Shutdown(sctx)
	}
	t := time.NewTimer(250 * time.Millisecond) // for the last answers to be written
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
	}
	srv.Close()
	return nil
}

// httpHandler builds the gateway's whole HTTP surface — the gateway's
// handler (gateway.Handler: /mcp behind the guard with every HTTP
// protection, /healthz, the RFC 9728 metadata, /metrics behind the same
// auth) and the members' own secrets behind the same guard — apart from
// listening and serving. addr is the listener's actual address (for the
// own-origin set); stop ends what the handler started besides itself (a
// separate --metrics listener).
func httpHandler(ctx context.Context, opts *ServeOptions, g *gateway.Gateway, addr string, log *slog.Logger) (_ http.Handler, stop func(), _ error) {
	stop = func() {}
	a := opts.auth
	if a == nil {
		a = gateway.NewAuth(&gateway.AuthOptions{SharedToken: opts.Token})
	}
	guard := gateway.NewHTTPGuard(a, opts.HTTP, addr, opts.AllowOrigins, log)
	mux := http.NewServeMux()
	hopts := &gateway.HTTPOptions{
		Guard:                   guard,
		Stateless:               opts.Stateless,
		ScaleOut:                opts.scale,
		MaxSessions:             opts.MaxSessions,
		MaxSessionsPerPrincipal: opts.MaxSessionsPerPrincipal,
		SessionIdleTimeout:      opts.SessionIdleTimeout,
		BodyTimeout:             opts.BodyTimeout,
		MaxCalls:                opts.MaxCalls,
		MaxCallsPerPrincipal:    opts.MaxCallsPerPrincipal,
		WriteTimeout:            opts.WriteTimeout,
		OAuth:                   opts.jwt,
		Logger:                  log,
	}
	root := g.Handler(hopts)
	mux.Handle("/", root)
	// Named too: with /mcp/<profile> mounted, the mux would otherwise
	// redirect /mcp to the /mcp/ subtree.
	mux.Handle(gateway.DefaultHTTPPath, root)
	mountProfiles(mux, opts, a, hopts)
	// The pages beside /mcp refuse a rebinding Host as the SDK's handler
	// does for /mcp.
	mux.Handle("/{$}", gateway.LoopbackHostOnly(gatewayIndex(opts.console != nil, len(opts.profileGateways) > 0)))
	if opts.console != nil {
		// Its own login and session cookie, not the bearer guard: a
		// browser cannot send a key (serve_console.go).
		mux.Handle(ConsolePath+"/", gateway.LoopbackHostOnly(opts.console))
		opts.consoleAddr.Store(addr)
	}
	if opts.memberSecrets != nil {
		mux.Handle(memberPath, guard.Wrap(opts.memberSecrets)) // serve_member_oauth.go
	}
	watchIssuer(ctx, opts.jwt, log) // serve_jwt.go
	if opts.metrics != nil && opts.MetricsAddr != "" {
		s, err := serveMetrics(opts.MetricsAddr, guard, opts.metrics, opts.BodyTimeout, log)
		if err != nil {
			return nil, nil, err
		}
		stop = s
	}
	return mux, stop, nil
}

// mountProfiles mounts each profile's gateway at /mcp/<profile>, behind
// the same guard as /mcp, and answers any other /mcp/<name> with 404,
// naming the profiles served only to a caller that authenticates (on a
// gateway that asks for none, anyone who can reach it may list them, as
// mcp list does); a gateway that serves no profile says which flags
// would.
func mountProfiles(mux *http.ServeMux, opts *ServeOptions, a *gateway.Auth, hopts *gateway.HTTPOptions) {
	if len(opts.profileGateways) == 0 {
		// A client pointed at a profile's endpoint of a gateway that
		// serves none gets told how to serve it, not a bare 404.
		mux.HandleFunc("/mcp/{profile}", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "not found: this gateway serves every server at /mcp and no profile's endpoint; start it with --profiles NAME,… or --all-profiles to serve /mcp/<profile>", http.StatusNotFound)
		})
		return
	}
	// Each profile's endpoint has sessions of its own, behind the same
	// guard (profiles are refused with scale-out: ScaleOut stays /mcp's).
	po := *hopts
	po.ScaleOut = nil
	var names []string
	for _, pg := range opts.profileGateways {
		mux.Handle("/mcp/"+pg.name, pg.g.Endpoint(&po))
		names = append(names, pg.name)
	}
	// Not the subtree "/mcp/": with it registered, ServeMux redirects a
	// request for /mcp itself to /mcp/, and the gateway's own endpoint
	// would answer 404.
	mux.HandleFunc("/mcp/{profile}", func(w http.ResponseWriter, r *http.Request) {
		msg := "not found: no such profile"
		if profilesVisible(r, a) {
			msg += "; the profiles served are: /mcp/" + strings.Join(names, ", /mcp/")
		}
		http.Error(w, msg, http.StatusNotFound)
	})
}

// gatewayIndex answers the gateway's root: a person who opens its address
// in a browser, or a client configured with it instead of /mcp, learns
// where the endpoint is (its paths only: nothing a key would protect).
func gatewayIndex(console, profiles bool) http.HandlerFunc {
	text := "Switchboard MCP gateway.\nMCP endpoint (Streamable HTTP): /mcp\n"
	if profiles {
		text += "Profiles' endpoints: /mcp/<profile>\n"
	}
	if console {
		text += "Console: /ui/\n"
	}
	text += "Health: /healthz\n"
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "not found: the MCP endpoint is /mcp\n")
			return
		}
		fmt.Fprint(w, text)
	}
}

// profilesVisible reports whether r may learn the names of the profiles
// served: no credentials are required, or it carries valid ones.
func profilesVisible(r *http.Request, a *gateway.Auth) bool {
	if !a.Required() {
		return true
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return false
	}
	// Limited as the guard is: the answer tells a good key from a bad one.
	_, err := a.AuthenticateRequest(r, strings.TrimSpace(tok))
	return err == nil
}

// listen returns the gateway's listener: the one made early for
// scale-out (whose own address goes into session IDs), else a new one.
func (opts *ServeOptions) listen() (net.Listener, error) {
	if ln := opts.listener; ln != nil {
		opts.listener = nil
		return rawListen(ln), nil
	}
	ln, err := net.Listen("tcp", opts.HTTP)
	if err != nil {
		return nil, FailureErr(fmt.Errorf("listening on %s: %w", opts.HTTP, err), "pick a free port, or stop what holds it")
	}
	return rawListen(ln), nil
}

// serveMetrics serves /metrics alone on addr (serve --metrics), behind
// the guard, with request bodies bounded by body, until stop is called.
func serveMetrics(addr string, guard *gateway.HTTPGuard, m *gateway.Metrics, body time.Duration, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, FailureErr(fmt.Errorf("listening on %s for metrics: %w", addr, err), "pick a free port for --metrics")
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", guard.Wrap(m.Handler()))
	srv := &http.Server{Handler: gateway.BodyDeadline(mux, body), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() { _ = srv.Serve(ln) }()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// servingAddr is the address the serving lines name: addr, the
// listener's, except that a wildcard bind keeps the host it was asked
// for (net.Listen on 0.0.0.0 makes a socket for IPv6 too and reports
// [::], an address the user never typed). wildcard reports such a bind,
// which the line says in words.
func servingAddr(asked, addr string) (shown string, wildcard bool) {
	h, port, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(h); err != nil || ip == nil || !ip.IsUnspecified() {
		return addr, false
	}
	if ah, _, err := net.SplitHostPort(asked); err == nil && ah != "" {
		h = ah
	}
	return net.JoinHostPort(h, port), true
}

// callersLine says, for the person who started `serve --http`, what a
// client must send, and where the console is: never a token. Whether any
// credential is asked is the guard's own rule (Auth.Required: a token, an
// OAuth issuer, or an auth file, even one holding no usable key yet).
func (opts *ServeOptions) callersLine() string {
	a := opts.auth
	if opts.asksNoCredential() {
		console := ""
		if opts.console != nil {
			console = "; its console signs nobody in: on this machine, run switchboard ui"
		}
		return "callers need no credential (a loopback gateway without a token or keys; switchboard gateway key add NAME adds one)" + console
	}
	var creds []string
	if opts.Token != "" {
		creds = append(creds, "the gateway's token (--token-file or $SWITCHBOARD_GATEWAY_TOKEN)")
	}
	if a != nil && a.File() != "" && a.Keys() > 0 {
		creds = append(creds, "a key of "+opts.tilde(a.File())+" (switchboard gateway key add NAME)")
	}
	if opts.jwt != nil {
		creds = append(creds, "an OAuth access token of --oauth-issuer")
	}
	if len(creds) == 0 && a != nil && a.File() != "" {
		creds = append(creds, "a key of "+opts.tilde(a.File())+", which holds no usable key now (switchboard gateway key add NAME)")
	}
	console := ""
	if opts.console != nil {
		console = "; the console: " + opts.consoleURL() + "/"
	}
	return "callers send Authorization: Bearer with " + strings.Join(creds, ", or ") + console
}

// asksNoCredential reports a gateway whose guard lets every caller in: a
// loopback one with neither token, OAuth issuer nor auth file
// (Auth.Required), as its console and its callers line say.
func (opts *ServeOptions) asksNoCredential() bool { return !opts.auth.Required() }
