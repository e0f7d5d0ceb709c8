package gateway

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// DefaultHTTPPath is where Handler serves the MCP endpoint unless
// HTTPOptions.Path says otherwise.
const DefaultHTTPPath = "/mcp"

// HTTPOptions configure the gateway's HTTP handler (Handler, Endpoint).
// A nil *HTTPOptions uses every default.
type HTTPOptions struct {
	// Guard checks every request's Origin, repeated headers and
	// credentials before the MCP endpoint or /metrics sees it, and hands
	// the caller's principal on (NewHTTPGuard). Share one Guard between
	// the endpoints of one listener, and wrap what else it serves (a
	// console, say) with Guard.Wrap. If nil, a guard of the gateway's
	// Options.Auth (nil: no credentials) that accepts no browser Origin.
	Guard *HTTPGuard
	// Path is where Handler serves the MCP endpoint. If empty,
	// DefaultHTTPPath.
	Path string
	// Stateless serves every request on its own, without sessions (serve
	// --stateless), so instances can sit behind a load balancer. If
	// false, a client that initializes gets a session and one on protocol
	// 2026-07-28 is served per request, on the same endpoint. Either
	// way the gateway is served as if its Options.Stateless were true.
	Stateless bool
	// ScaleOut, if set, is for instances behind a load balancer (serve
	// --stateless --session-key-file): it gives the clients that need a
	// session one whose ID names this instance, sealed with the shared
	// keys, serves the others per request, and passes any request of a
	// session another instance holds on to it, at the same path. The
	// gateway's Options.SessionID and Instance must come from it
	// (ScaleOut.SessionID, ScaleOut.Instance).
	ScaleOut *ScaleOut
	// MaxSessions caps the live sessions of each endpoint: a new one past
	// it ends the one idle longest, or is refused (503) when every one is
	// busy. If <= 0, DefaultMaxSessions.
	MaxSessions int
	// MaxSessionsPerPrincipal caps the live sessions of one team member
	// (a principal of a gateway key or an OAuth access token) on each
	// endpoint, so that one member whose sessions all hold a stream open
	// cannot fill MaxSessions and lock the others out: past it, that
	// member's new session ends its own session idle longest, or is
	// refused (503) when every one of its own is busy. The shared
	// token's holder and callers of a gateway without credentials are
	// not capped below MaxSessions. If <= 0, half of MaxSessions (at
	// least 1).
	MaxSessionsPerPrincipal int
	// SessionIdleTimeout ends a session with no request for this long. If
	// <= 0, DefaultSessionIdleTimeout.
	SessionIdleTimeout time.Duration
	// BodyTimeout bounds the reading of a request's body (a client that
	// trickles it gets 408). If <= 0, DefaultBodyTimeout. Bound the
	// headers with the http.Server's ReadHeaderTimeout.
	BodyTimeout time.Duration
	// MaxCalls caps the POSTs of each endpoint in flight at once (a
	// tools/call is one until its answer is written): past it, a POST is
	// answered 429 with Retry-After and a JSON-RPC error. If <= 0,
	// DefaultMaxCalls.
	MaxCalls int
	// MaxCallsPerPrincipal caps the POSTs in flight of one team member (a
	// principal of a gateway key or an OAuth access token), so that one
	// member's client that never reads its answers cannot take the
	// others' calls: past it, that member's POST is answered 429. The
	// shared token's holder and callers of a gateway without credentials
	// have no share below MaxCalls. If <= 0, half of MaxCalls (at least 1).
	MaxCallsPerPrincipal int
	// WriteTimeout bounds one write of an answer (a JSON answer, an SSE
	// event, a stream's event) to its client: a client that stops reading
	// loses it, and its connection, instead of holding them and its
	// session busy. A call or stream with nothing to write has no bound.
	// If <= 0, DefaultWriteTimeout.
	WriteTimeout time.Duration
	// OAuth, if set, is the verifier of the access tokens the Guard's Auth
	// accepts: Handler serves its protected resource metadata (RFC 9728)
	// without auth.
	OAuth *JWTVerifier
	// Logger receives the handler's logs. If nil, the gateway's.
	Logger *slog.Logger
	// SDKOnly sends every request to the SDK's Streamable HTTP handler.
	// By default a session's plain tools/call is answered without it, in
	// the same bytes (http_fast.go), through the receiving middleware
	// New gave the gateway's Server: set SDKOnly if you add receiving
	// middleware of your own to Server(), which that path does not run.
	SDKOnly bool
}

// httpDefaults returns a copy of opts with every default filled in.
func (g *Gateway) httpDefaults(opts *HTTPOptions) *HTTPOptions {
	o := &HTTPOptions{}
	if opts != nil {
		*o = *opts
	}
	if o.Logger == nil {
		o.Logger = g.log
	}
	if o.Guard == nil {
		a := g.opts.Auth
		if a == nil {
			a = NewAuth(&AuthOptions{})
		}
		o.Guard = &HTTPGuard{auth: a, origins: map[string]bool{}, log: o.Logger}
	}
	if o.Path == "" {
		o.Path = DefaultHTTPPath
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessionsPerPrincipal <= 0 {
		o.MaxSessionsPerPrincipal = max(o.MaxSessions/2, 1)
	}
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.MaxCallsPerPrincipal <= 0 {
		o.MaxCallsPerPrincipal = max(o.MaxCalls/2, 1)
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = DefaultSessionIdleTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	return o
}

// Handler returns the gateway's whole HTTP surface: the MCP endpoint at
// opts.Path (Endpoint), /healthz (Healthz, without auth: counts only), the
// protected resource metadata of opts.OAuth (RFC 9728, without auth, at
// /.well-known/oauth-protected-resource and under it) and, when the
// gateway has Metrics, /metrics behind the Guard; a request's body on any
// of them must arrive within opts.BodyTimeout (BodyDeadline). Mount it at "/" of a
// mux to add more; more gateways (one per profile, say) mount their
// Endpoint beside it. Over HTTP a request without a session is always
// served on its own, so a gateway made without Options.Stateless is
// served from then on as if it were set (serve such a gateway over HTTP
// only, not on stdio too, where a client has no session ID).
func (g *Gateway) Handler(opts *HTTPOptions) http.Handler {
	o := g.httpDefaults(opts)
	mux := http.NewServeMux()
	mux.Handle(o.Path, g.endpoint(o))
	mux.HandleFunc("/healthz", Healthz(g.h, o.Stateless))
	if v := o.OAuth; v != nil {
		h := v.MetadataHandler()
		mux.Handle("/.well-known/oauth-protected-resource", h)
		mux.Handle("/.well-known/oauth-protected-resource/", h)
	}
	if m := g.opts.Metrics; m != nil {
		// Behind the same auth as /mcp: the counts name servers and tools.
		mux.Handle("/metrics", o.Guard.Wrap(m.Handler()))
	}
	return BodyDeadline(mux, o.BodyTimeout)
}

// Endpoint returns the MCP endpoint alone, behind opts.Guard, to mount at
// any path: the session cap and body timeout, calls tied to their
// requests (a client that drops its connection or ends its session has
// its calls cancelled), both protocol revisions on one endpoint or
// stateless only, and, with opts.ScaleOut, the sealed-session routing.
// Each call returns an endpoint with sessions of its own. As Handler
// does, it sets what Options.Stateless sets.
func (g *Gateway) Endpoint(opts *HTTPOptions) http.Handler {
	return g.endpoint(g.httpDefaults(opts))
}

func (g *Gateway) endpoint(o *HTTPOptions) http.Handler {
	g.servesHTTP.Store(true)
	log := o.Logger
	var life http.Handler = newHTTPLife(g, g.sdkHandler(true, o), true, o, log)
	switch s := o.ScaleOut; {
	case s != nil:
		// Scale-out with sessions (http_scale.go): sessions here,
		// 2026-07-28 requests per request.
		s.bind(g)
		life = &scaleRouter{
			ScaleOut:  s,
			stateful:  newHTTPLife(g, g.sdkHandler(false, o), false, o, log),
			stateless: life,
			body:      o.BodyTimeout,
			log:       log,
		}
		log.Info("sessions are sealed with the session keys and name this instance", "advertise", s.self)
	case !o.Stateless:
		// Both protocol revisions on one endpoint: sessions for the
		// clients that initialize one, each request on its own for
		// those on 2026-07-28, which have no sessions.
		life = &revisionRouter{stateful: newHTTPLife(g, g.sdkHandler(false, o), false, o, log), stateless: life, body: o.BodyTimeout, log: log}
	}
	return g.refuseSelf(o.Guard.Wrap(newCallLimit(life, o)))
}

// refuseSelf refuses, before any credential is asked for, a request of
// the gateway's own host (host.GatewayHeader carrying its GatewayID): the
// gateway's URL is among the servers it reads, and serving itself would
// serve its tools again under one more prefix at every sync. The answer,
// 508 with the header echoed, tells the host to stop trying.
func (g *Gateway) refuseSelf(next http.Handler) http.Handler {
	id := g.h.GatewayID()
	if id == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(host.GatewayHeader) != id {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set(host.GatewayHeader, id)
		http.Error(w, "loop detected: this request comes from this Switchboard gateway itself (its own URL is among the servers it reads); a gateway never serves itself", http.StatusLoopDetected)
	})
}

// sdkHandler is the SDK's Streamable HTTP handler of the gateway's server:
// the one place it is made.
func (g *Gateway) sdkHandler(stateless bool, o *HTTPOptions) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.srv }, &mcp.StreamableHTTPOptions{
		Stateless: stateless,
		Logger:    o.Logger,
		// Idle sessions of clients that vanished are closed: by the
		// session cap's timer (http_life.go), which also sees the calls
		// the SDK does not (the fast path).
		SessionTimeout: 0,
	})
}
