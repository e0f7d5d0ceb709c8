package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/host"
)

// HTTPGuard enforces the gateway's HTTP rules (docs/md, Streamable
// HTTP) on every /mcp request: a foreign browser Origin is
// refused (403) and, once any credential exists (the shared token, the
// gateway auth file), a request without a valid one is refused (401),
// and one from an address that presented too many refused credentials
// lately is refused unchecked (429, Auth.AuthenticateRequest).
// The caller's principal reaches the SDK as its TokenInfo, which binds an
// HTTP session to it and the gateway's rules and limits to its calls.
type HTTPGuard struct {
	auth    *Auth
	origins map[string]bool
	log     *slog.Logger
}

// principalKey carries the authenticated principal from the guard to the
// SDK's bearer-token middleware.
type principalKey struct{}

// sdkAuth hands the principal the guard found to the SDK.
var sdkAuth = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	if p == nil {
		return nil, auth.ErrInvalidToken
	}
	return p.TokenInfo(), nil
}, nil)

// LoopbackHostOnly returns next behind the DNS-rebinding check the SDK's
// handler applies to the MCP endpoint: a request that reached a loopback
// address under a Host that is not a loopback name (localhost, 127.0.0.1,
// [::1]) is refused with 421, as a page of another site whose name was
// rebound to 127.0.0.1 reaches the port but must not reach next. For what
// a gateway serves beside its endpoint (a console, an index page).
func LoopbackHostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rebound(r) {
			http.Error(w, "this Host is not the gateway's (a page of another site reached it through DNS rebinding?)", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// rebound reports a request that reached a loopback address under a Host
// that is not a loopback name.
func rebound(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la != nil && loopbackAddr(la) && !loopback(strings.ToLower(r.Host))
}

// Wrap returns next behind the guard: a request it refuses never reaches
// next, and one it lets through carries its caller's principal.
func (g *HTTPGuard) Wrap(next http.Handler) http.Handler {
	withPrincipal := sdkAuth(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Host names are case-insensitive: the SDK's DNS-rebinding check
		// behind us knows "localhost" only in lower case.
		r.Host = strings.ToLower(r.Host)
		// DNS rebinding, for all the guard serves (/metrics too, not
		// only the SDK's endpoint, which checks it again): a page of
		// another site whose name was rebound to 127.0.0.1 sends its
		// same-origin GETs without an Origin, and a gateway that asks
		// for no credential would answer them.
		if rebound(r) {
			g.log.Warn("refused a request to a loopback address under another Host")
			http.Error(w, "forbidden: invalid Host header: this gateway listens on loopback and answers only to localhost, 127.0.0.1 or [::1] (a page of another site reached it through DNS rebinding?)", http.StatusForbidden)
			return
		}
		// Every Origin header is judged, not the first: a request with an
		// empty or allowed one first and a foreign one after is foreign.
		origins := r.Header.Values("Origin")
		for _, o := range origins {
			if o != "" && !g.origins[normalizeOrigin(o)] {
				g.log.Warn("refused a request from a foreign origin", "origin", o)
				http.Error(w, "forbidden: origin not allowed (start serve with --allow-origin to allow it)", http.StatusForbidden)
				return
			}
		}
		if len(origins) == 1 && origins[0] != "" {
			// An allowed page of another origin (--allow-origin) reads the
			// answers: CORS, whose preflight comes without credentials.
			allowCORS(w.Header(), origins[0])
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				w.WriteHeader(http.StatusNoContent)
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
			// Compared by digest, in constant time (Auth); not at all
			// for an address that presented too many refused ones.
			p, err := g.auth.AuthenticateRequest(r, got)
			var tooMany *TooManyFailuresError
			if errors.As(err, &tooMany) {
				secs := RetryAfterSeconds(tooMany.RetryAfter)
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				http.Error(w, fmt.Sprintf("too many requests: this address presented too many credentials that were refused; try again in %ds", secs), http.StatusTooManyRequests)
				return
			}
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

// allowCORS lets the page of an allowed origin make MCP requests and
// read their answers, as a browser's CORS asks: the methods and request
// headers of Streamable HTTP, and the answer headers a client reads (the
// session, the protocol, an auth challenge). No credentials in the CORS
// sense: the gateway's are a bearer token the page sends itself, never a
// cookie, so a page of any other origin still gets nothing.
func allowCORS(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-Id")
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
	h.Set("Access-Control-Max-Age", "600")
}

// NewHTTPGuard returns the guard for a gateway bound to bind (the
// --http address as given) and listening on actual (its real address):
// its own origins on that port, plus allowed, are the browser origins it
// accepts; an auth that requires credentials makes it ask for them. Its
// refusals are logged to log (nil: discarded).
func NewHTTPGuard(a *Auth, bind, actual string, allowed []string, log *slog.Logger) *HTTPGuard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &HTTPGuard{auth: a, origins: ownOrigins(bind, actual, allowed), log: log}
}

// IsLoopbackAddr reports whether a host:port names the loopback
// interface (localhost, 127.0.0.0/8, ::1).
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
	case IsLoopbackAddr(bind):
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
	// No host name (":443" alone) is no origin to shorten: left as
	// written, it stays what it normalizes to.
	if err != nil || u.Scheme == "" || u.Hostname() == "" {
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

// Healthz is the /healthz handler. It answers a load balancer: 200 with
// counts, never names, commands or errors (no auth is asked, so nothing in it may be secret).
func Healthz(h *host.Host, stateless bool) http.HandlerFunc {
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
