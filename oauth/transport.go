package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/netguard"
	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// LoginRequiredError: a remote server asks for OAuth authorization and
// the Client has no usable token and no way to ask the user (no
// Options.Authorize), or the stored tokens cannot be used until the user
// logs in again. An application tells its user how to log in (the CLI
// names `switchboard mcp login`); errors.As finds it under the transport's
// wrapping.
type LoginRequiredError struct {
	// Server names the MCP server that needs a login.
	Server string
	// Why, if set, says why the stored tokens cannot be used.
	Why string
}

// Error says which server needs a login, and why when Why is set.
func (e *LoginRequiredError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("%s needs a new OAuth login: %s", e.Server, e.Why)
	}
	return fmt.Sprintf("%s asks for OAuth authorization, and there is no usable token", e.Server)
}

// KeyFileError: the stored tokens of Server are bound to a DPoP key
// (RFC 9449) whose file cannot be trusted or read. The Client never makes
// a new key for them and never sends them without their proof, so every
// request fails with it until the user removes the stored tokens (Logout)
// and logs in again.
type KeyFileError struct {
	// Server names the MCP server; File is the key file (DPoPKeyFile).
	Server, File string
	// Problem says what is wrong with the file ("is missing", …).
	Problem string
}

// Error names the file and what is wrong with it.
func (e *KeyFileError) Error() string {
	// No "key:" in the text: redaction would take what follows for a secret.
	return fmt.Sprintf("DPoP key file %s %s; the stored tokens of %s are bound to that key", e.File, e.Problem, e.Server)
}

// ErrHeaderRequired: a remote server refuses access (HTTP 401) and
// publishes no OAuth metadata, so no login can help: it wants a
// credential the user has (an API key, a personal token) in a header of
// the server's definition. Errors wrapping it say so.
var ErrHeaderRequired = errors.New("it publishes no OAuth metadata, so logging in cannot help: it wants a credential (an API key or token) in a header")

// Grant types for Options.Grant.
const (
	// GrantAuthorizationCode is the user's flow: a browser (or
	// Options.Authorize) approves, PKCE protects the code.
	GrantAuthorizationCode = "authorization_code"
	// GrantClientCredentials is the service flow (SEP-1046): a
	// pre-registered confidential client authenticates with a secret or a
	// private-key JWT; no user is involved.
	GrantClientCredentials = "client_credentials"
)

// Options configure a Client. The zero value (or nil) is a Client that
// keeps tokens in memory, uses dynamic client registration and cannot ask
// a user: a server that needs a new authorization fails with a
// *LoginRequiredError.
type Options struct {
	// Dir holds one token file per server (mode 0600, directory 0700). If
	// "", tokens are kept in memory for the Client's life only.
	Dir string
	// Grant is GrantAuthorizationCode (if ""), GrantClientCredentials,
	// GrantJWTBearer or GrantEnterprise.
	Grant string
	// ClientID and ClientSecret name a pre-registered client. If ClientID
	// is "", the Client uses ClientMetadataURL when
	// the authorization server accepts client ID metadata documents, and
	// dynamic client registration otherwise. A client ID stored by an
	// earlier login is used when these are empty.
	ClientID, ClientSecret string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// describing this client. If "", that registration method is not used.
	ClientMetadataURL string
	// RedirectURL is where the authorization server sends the user back
	// with the code (a loopback URL, see Loopback). If "",
	// "http://127.0.0.1/callback" is registered; it only matters when
	// Authorize is set.
	RedirectURL string
	// Authorize is the user's part of the authorization code flow: it is
	// given the authorization URL and returns the URL the authorization
	// server redirected back to (holding code, state and iss). If nil, a
	// server that needs a new authorization fails with a
	// *LoginRequiredError; stored tokens are still used and refreshed.
	Authorize AuthorizeFunc
	// NoBrowser, when Authorize is nil, makes the Client fetch the
	// authorization URL itself (through the same address checks as the
	// server's traffic) and take the redirect as the answer: for
	// authorization servers that approve without a person, such as test
	// servers. See FollowRedirect.
	NoBrowser bool
	// Fresh ignores stored tokens, so the server's first refusal starts a
	// new authorization (a login); the stored file is replaced only
	// once a new token is obtained.
	Fresh bool
	// PrivateKeyPEM, if set with GrantClientCredentials, authenticates the
	// client with a signed JWT (private_key_jwt, RFC 7523) instead of a
	// secret. PKCS#8 or SEC 1 EC keys (ES256/384/512) and RSA keys (RS256).
	PrivateKeyPEM []byte
	// SigningAlg is the JWT algorithm; if "", it is picked from the key.
	SigningAlg string
	// Assertion supplies the workload identity JWT of GrantJWTBearer.
	Assertion AssertionFunc
	// IdP is the enterprise identity provider of GrantEnterprise.
	IdP *EnterpriseIdP
	// HTTPClient makes OAuth's own requests (metadata, registration,
	// tokens). If nil, a client on the outbound transport the host gives
	// for each server (Client.Transport) is used.
	HTTPClient *http.Client
	// ClientName is the client_name of dynamic client registration. If "",
	// "switchboard".
	ClientName string
	// Secrets, if set, keeps the tokens in a SecretStore (the OS
	// credential store) instead of Dir's token files; a token file found
	// while it answers is moved into it once. Where it has no store to use
	// (ErrNoSecretStore), or fails, the files are used as without it. Dir
	// must still be set: it keys the entries and holds the DPoP keys.
	Secrets SecretStore
	// Logger receives warnings (a token file not used, a token not saved).
	// If nil, nothing is logged. Values the Client knows to be secret (its
	// DPoP private keys) are scrubbed from what it logs.
	Logger *slog.Logger
}

// AuthorizeFunc shows the user the authorization URL and returns the
// redirect back from the authorization server. server names the MCP
// server being authorized.
type AuthorizeFunc func(ctx context.Context, server, authURL string) (*url.URL, error)

// FollowRedirect returns an AuthorizeFunc that fetches the authorization
// URL with client (nil: a plain client) instead of opening a browser and
// takes the first redirect as the answer: for authorization servers that
// approve without a person, such as test servers.
func FollowRedirect(client *http.Client) AuthorizeFunc {
	return func(ctx context.Context, _, authURL string) (*url.URL, error) {
		c := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if client != nil {
			c.Transport, c.Jar, c.Timeout = client.Transport, client.Jar, client.Timeout
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		return redirectTarget(resp.StatusCode, resp.Header.Get("Location"), req.URL)
	}
}

// redirectTarget reads where an authorization endpoint sent the user.
func redirectTarget(status int, location string, base *url.URL) (*url.URL, error) {
	if status < 300 || status > 399 {
		return nil, fmt.Errorf("authorization endpoint answered %d, not a redirect", status)
	}
	if location == "" {
		return nil, errors.New("authorization endpoint redirected without a Location")
	}
	u, err := base.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("authorization endpoint redirected to a bad URL: %v", err)
	}
	return u, nil
}

// Client does OAuth 2.1 for the remote servers of a host: it wraps each
// server's transport (Transport) so requests carry the server's token and
// a refusal runs the authorization flow and retries. It keeps each
// server's state (tokens, DPoP key) across reconnects. A Client is safe
// for concurrent use; a *Client is a host.Authorizer.
type Client struct {
	opts    Options
	log     *slog.Logger
	secrets *redact.Set // DPoP private keys and tokens, scrubbed from logs and errors

	mu sync.Mutex
	m  map[string]*serverAuth

	shareMu sync.Mutex
	sharers []func(...string)
	learned []string
}

// ShareSecrets implements host.SecretSharer: add is called with every
// token and client secret the Client holds now and learns later (a login,
// a refresh), so that the host scrubs them from logs and errors and keeps
// them from every tool result (docs/security.md, What the model reads).
func (c *Client) ShareSecrets(add func(values ...string)) {
	c.shareMu.Lock()
	c.sharers = append(c.sharers, add)
	known := append([]string(nil), c.learned...)
	c.shareMu.Unlock()
	if len(known) > 0 {
		add(known...)
	}
}

// learn records credentials the Client holds: scrubbed from its own logs
// and handed to the sharers.
func (c *Client) learn(values ...string) {
	var fresh []string
	for _, v := range values {
		if len(v) >= redact.MinSecretLen {
			fresh = append(fresh, v)
		}
	}
	if len(fresh) == 0 {
		return
	}
	c.secrets.Add(fresh...)
	c.shareMu.Lock()
	sharers := append([]func(...string){}, c.sharers...)
	seen := map[string]bool{}
	for _, v := range c.learned {
		seen[v] = true
	}
	var added []string
	for _, v := range fresh {
		if !seen[v] {
			c.learned = append(c.learned, v)
			added = append(added, v)
		}
	}
	c.shareMu.Unlock()
	if len(added) == 0 {
		return
	}
	for _, add := range sharers {
		add(added...)
	}
}

// New returns a Client configured by opts (nil: the zero Options).
func New(opts *Options) *Client {
	c := &Client{secrets: &redact.Set{}, m: map[string]*serverAuth{}}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.ClientName == "" {
		c.opts.ClientName = "switchboard"
	}
	l := c.opts.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	c.log = slog.New(redact.HandlerWith(l.Handler(), c.secrets))
	return c
}

// Transport returns next with the requests of server (an MCP server
// named so, at URL resource) authorized: they carry its token (and DPoP
// proof), and a 401 (or a 403 asking for more scope) runs the
// authorization flow and retries. outbound carries OAuth's own requests
// (metadata, registration, tokens) unless Options.HTTPClient is set: the
// host passes a transport held to the server's address policy, without
// the server's headers.
//
// ctx bounds what the Client does outside a request for this server
// (token refreshes run under it): a host passes its own lifetime. The
// server's state is made at the first call and reused by later ones for
// the same name and URL while ctx lasts; a changed URL starts afresh (a
// token is never sent to another server).
func (c *Client) Transport(ctx context.Context, server, resource string, outbound, next http.RoundTripper) http.RoundTripper {
	return &oauthTransport{base: next, a: c.serverAuthFor(ctx, server, resource, outbound), origin: netguard.OriginOf(resource)}
}

// keepBodyHome wraps an http.Client's CheckRedirect (nil: net/http's)
// for OAuth's own requests. A 307 or 308 answer makes net/http send a
// POST's body again to the new location, and a token request's body
// holds the authorization code and its verifier, a refresh token or the
// client's secret: it is not sent to another origin than the one it was
// written for. net/http drops an Authorization header on such a redirect,
// but not the body.
func keepBodyHome(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && req.Method != http.MethodGet && req.Method != http.MethodHead &&
			netguard.Origin(req.URL) != netguard.Origin(via[0].URL) {
			return fmt.Errorf("%s redirected a %s to another origin (%s); its body, which can hold a code, a refresh token or the client's secret, is not sent there",
				via[0].URL.Redacted(), req.Method, req.URL.Scheme+"://"+req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// maxAuthTries bounds authorizations in a row that did not lead to an
// accepted request (scope step-up included), so a server that never
// accepts cannot loop the host.
const maxAuthTries = 3

// serverAuth is one server's OAuth state. It outlives connections so a
// reconnect reuses the token.
type serverAuth struct {
	c        *Client
	life     context.Context
	name     string
	resource string
	opts     *Options
	log      *slog.Logger
	client   *http.Client // OAuth's own requests

	authMu sync.Mutex // one authorization flow at a time

	mu      sync.Mutex
	handler auth.OAuthHandler
	stored  oauth2.TokenSource // from an earlier login, until handler exists
	tries   int                // authorizations since a request was last accepted
	dpop    *dpopKey           // the key the current tokens are bound to
	// pendingDPoP is the key a running authorization binds its tokens to.
	pendingDPoP *dpopKey
	// unusable, if set, is why the stored tokens cannot be used (their
	// DPoP key file is missing, exposed or corrupt): every request fails
	// with it until the user logs out and in again.
	unusable error
	legacy   legacyFlow // the running flow's discovery (legacy.go)
	// fresh is the access token the last authorization obtained, until a
	// request carrying it is accepted: refused, it is not worth another
	// authorization (see authorize).
	fresh string
	// kept is the login stored before that authorization (kept.read: it
	// could be read; kept.st nil: there was none), put back if the server
	// refuses the fresh token: a failed login keeps the last one.
	kept keptLogin
}

// keptLogin is a stored login and its DPoP key, as read before an
// authorization replaced them.
type keptLogin struct {
	read bool
	st   *storedAuth
	key  *jwsSigner
}

// serverAuthFor returns the server's OAuth state, made on first use; a
// changed URL, or a ctx that has ended, starts afresh.
func (c *Client) serverAuthFor(ctx context.Context, name, resource string, base http.RoundTripper) *serverAuth {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.m[name]; a != nil && a.resource == resource && a.life.Err() == nil {
		return a
	}
	o := &c.opts
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{Transport: base}
	}
	a := &serverAuth{c: c, life: ctx, name: name, resource: resource, opts: o, log: c.log}
	// OAuth's own requests carry DPoP proofs once the server asks for them.
	inner := client.Transport
	if inner == nil {
		inner = http.DefaultTransport
	}
	cl := *client
	cl.Transport = &legacyIssuerTransport{a: a, base: &dpopClientTransport{a: a, base: inner}}
	cl.CheckRedirect = keepBodyHome(client.CheckRedirect)
	a.client = &cl
	switch st, err := a.tokens().load(name); {
	case o.Fresh:
	case err != nil:
		a.log.Warn("ignoring an unreadable OAuth token file", "server", name, "error", err.Error())
	case st == nil || st.Resource != resource:
		// A token is bound to the URL it was issued for.
	case !tokenIsDPoP(st.Token):
		c.learnStored(st)
		a.stored = a.persisting(st.tokenSource(a.ctx(), a.client), st)
	case st.DPoPJKT == "":
		// Stored by a version that kept the key in memory only: the key
		// is gone, so the token cannot be used.
		a.log.Info("ignoring a DPoP-bound OAuth token stored without its key", "server", name)
	default:
		// A DPoP-bound token is used with the key it is bound to, or not
		// at all: a key file that cannot be trusted fails every request.
		s, err := loadDPoPKey(o.Dir, name, st.DPoPJKT)
		if err != nil {
			a.unusable = err
			break
		}
		a.dpop = newDPoPKey(s)
		c.secrets.Add(a.dpop.secret())
		c.learnStored(st)
		a.stored = a.persisting(st.tokenSource(a.ctx(), a.client), st)
	}
	c.m[name] = a
	return a
}

// learnStored learns the credentials of a stored login.
func (c *Client) learnStored(st *storedAuth) {
	if st.Token != nil {
		c.learn(st.Token.AccessToken, st.Token.RefreshToken)
	}
	c.learn(st.ClientSecret)
}

// ctx is the context token refreshes run under: the host's life.
func (a *serverAuth) ctx() context.Context { return a.life }

type oauthTransport struct {
	base http.RoundTripper
	a    *serverAuth
	// origin is the server's (netguard.Origin of its URL): only requests
	// there are authorized.
	origin string
}

// RoundTrip sends req authorized. Its errors never hold the Client's
// secrets.
func (t *oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	return resp, t.a.c.secrets.Error(err)
}

func (t *oauthTransport) roundTrip(req *http.Request) (*http.Response, error) {
	if o := netguard.Origin(req.URL); o == "" || o != t.origin {
		// Another origin (a redirect, an SSE endpoint event naming
		// another host, https turned http): the token was issued for the
		// server's URL and goes nowhere else, as its headers do not.
		return t.base.RoundTrip(req)
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	authTries, nonceTries := 0, 0
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		used, err := t.a.sign(r)
		if err != nil {
			return nil, err
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		if n := challengeSize(resp); n > maxChallenge {
			drain(resp)
			return nil, fmt.Errorf("server %s answered %d with an authentication challenge (WWW-Authenticate) of %d bytes, over the %d KiB limit, so it was not read",
				t.a.name, resp.StatusCode, n, maxChallenge>>10)
		}
		if !needsAuth(resp) {
			t.a.accepted(resp)
			return resp, nil
		}
		if !replayable {
			return resp, nil
		}
		if nonceTries < 2 && t.a.dpopNonceRetry(resp) {
			nonceTries++
			drain(resp)
			continue
		}
		if authTries >= 2 {
			return resp, nil // authorized and still refused: let the caller see it
		}
		authTries++
		if err := t.a.authorize(r, resp, used); err != nil {
			return nil, err
		}
	}
}

// maxChallenge bounds the WWW-Authenticate values of a refusal that are
// read. Real challenges take a few hundred bytes; the parser's time grows
// with the square of their length (it looks ahead at every comma), so a
// server sending megabytes of commas would hold a core for hours.
const maxChallenge = 16 << 10

// challengeSize is the length of the WWW-Authenticate values of a
// refusal (401, 403), the only answers whose challenge is parsed.
func challengeSize(resp *http.Response) int {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return 0
	}
	n := 0
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		n += len(v)
	}
	return n
}

// needsAuth reports a refusal the authorization flow can answer: a 401,
// or a 403 whose challenge asks for more scope (step-up).
func needsAuth(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		for _, c := range cs {
			if c.Params["error"] == "insufficient_scope" {
				return true
			}
		}
	}
	return false
}

// challengedWith reports a WWW-Authenticate challenge of that scheme
// (lower case).
func challengedWith(resp *http.Response, scheme string) bool {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Scheme == scheme {
			return true
		}
	}
	return false
}

// challengeError is what a refusal's Bearer or DPoP challenge says of
// why (RFC 6750 §3: error, error_description), as " (…)", or "".
func challengeError(resp *http.Response) string {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		code, desc := c.Params["error"], c.Params["error_description"]
		if code == "" && desc == "" {
			continue
		}
		why := code
		if desc != "" {
			if why != "" {
				why += ": "
			}
			why += desc
		}
		if r := []rune(why); len(r) > 200 {
			why = string(r[:200]) + "…"
		}
		return " (" + why + ")"
	}
	if resp.StatusCode == http.StatusForbidden {
		return " (403)"
	}
	return " (401)"
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// accepted notes a request the server let through.
func (a *serverAuth) accepted(resp *http.Response) {
	a.mu.Lock()
	a.tries = 0
	a.fresh, a.kept = "", keptLogin{}
	a.mu.Unlock()
	a.noteDPoPNonce(resp)
}

// sign adds the Authorization header (and a DPoP proof) when there is a
// token, and returns the access token it sent.
func (a *serverAuth) sign(req *http.Request) (string, error) {
	a.mu.Lock()
	unusable := a.unusable
	a.mu.Unlock()
	if unusable != nil {
		return "", unusable
	}
	ts, err := a.tokenSource(req.Context())
	if err != nil || ts == nil {
		return "", err
	}
	tok, err := ts.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// A refused refresh means the grant is gone: send the request
			// bare, so the 401 starts a new authorization.
			a.log.Info("OAuth token refresh refused", "server", a.name, "error", re.ErrorCode)
			a.mu.Lock()
			a.stored = nil
			a.handler = nil
			a.mu.Unlock()
			return "", nil
		}
		return "", fmt.Errorf("oauth token for %s: %v", a.name, err)
	}
	if tok == nil || tok.AccessToken == "" {
		return "", nil
	}
	a.c.learn(tok.AccessToken, tok.RefreshToken)
	scheme := "Bearer"
	if tokenIsDPoP(tok) {
		k := a.dpopKey()
		if k == nil {
			// Never send a bound token without its proof.
			return "", &LoginRequiredError{Server: a.name, Why: "its token is DPoP-bound, but the key is gone"}
		}
		scheme = "DPoP"
		proof, err := k.proof(req.Method, req.URL, tok.AccessToken, k.nonce(req.URL))
		if err != nil {
			return "", err
		}
		req.Header.Set("DPoP", proof)
	}
	req.Header.Set("Authorization", scheme+" "+tok.AccessToken)
	return tok.AccessToken, nil
}

func (a *serverAuth) tokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	a.mu.Lock()
	h, stored := a.handler, a.stored
	a.mu.Unlock()
	if h != nil {
		ts, err := h.TokenSource(ctx)
		if ts != nil || err != nil {
			return ts, err
		}
	}
	return stored, nil
}

// authorize runs the flow for a refused request, at most maxAuthTries
// times until a request is accepted. used is the access token the request
// carried. Flows run one at a time: a request refused while another
// request's flow ran retries with the new token instead of starting its
// own (one browser prompt, not one per request).
//
// A 401 to the token the last authorization just obtained, before any
// request with it was accepted, ends there: the authorization server
// issues tokens this server does not take, and authorizing again (another
// browser approval) would get one more of them. A 403 asking for more
// scope (step-up) and a first demand for DPoP still authorize again.
func (a *serverAuth) authorize(req *http.Request, resp *http.Response, used string) error {
	a.authMu.Lock()
	defer a.authMu.Unlock()
	if ts, _ := a.tokenSource(req.Context()); ts != nil {
		if tok, err := ts.Token(); err == nil && tok.AccessToken != "" && tok.AccessToken != used {
			drain(resp)
			return nil
		}
	}
	a.mu.Lock()
	fresh := a.fresh
	a.mu.Unlock()
	if used != "" && used == fresh && resp.StatusCode == http.StatusUnauthorized &&
		!(challengedWith(resp, "dpop") && a.dpopKey() == nil) {
		why := challengeError(resp)
		drain(resp)
		a.restoreKept()
		return &TokenRefusedError{Server: a.name, Why: why}
	}
	a.mu.Lock()
	a.tries++
	tries := a.tries
	a.mu.Unlock()
	if tries > maxAuthTries {
		why := challengeError(resp)
		drain(resp)
		return fmt.Errorf("server %s refused each of the %d tokens it was given in a row%s: it may ask for a scope or audience its authorization server does not grant", a.name, maxAuthTries, why)
	}
	if challengedWith(resp, "dpop") {
		if err := a.enableDPoP(); err != nil {
			drain(resp)
			return err
		}
	}
	h, err := a.ensureHandler()
	if err != nil {
		drain(resp)
		return err
	}
	// The flow fetches metadata and tokens on its own client, bounded by
	// the request that needs it.
	a.beginFlow(resp)
	defer a.endFlow()
	a.keepStored()
	// The SDK takes the request's URL, query and all, as the resource: its
	// protected-resource metadata then does not match (it names the server
	// without the query), the 2025-03-26 fallback takes "<origin>?query"
	// for the issuer, and the query — which may hold a key — would be sent
	// to the authorization server as the resource parameter. The resource
	// is the canonical server URI, scheme, host and path, as discover has it.
	areq := req.Clone(req.Context())
	areq.URL.RawQuery, areq.URL.ForceQuery, areq.URL.Fragment, areq.URL.RawFragment = "", false, "", ""
	if err := h.Authorize(req.Context(), areq, resp); err != nil {
		if errors.As(err, new(*LoginRequiredError)) {
			return err
		}
		return fmt.Errorf("authorizing with %s: %w", a.name, err)
	}
	if ts, _ := a.tokenSource(req.Context()); ts != nil {
		if tok, err := ts.Token(); err == nil && tok != nil {
			a.mu.Lock()
			a.fresh = tok.AccessToken
			a.mu.Unlock()
		}
	}
	return nil
}

// keepStored reads the stored login (and its DPoP key) before an
// authorization saves another over it. A login that cannot be read is not
// kept: it could not be put back as it was.
func (a *serverAuth) keepStored() {
	k := keptLogin{}
	if a.opts.Dir != "" {
		st, err := a.tokens().load(a.name)
		k.read, k.st = err == nil, st
		if k.read && st != nil && st.DPoPJKT != "" {
			key, err := loadDPoPKey(a.opts.Dir, a.name, st.DPoPJKT)
			k.read, k.key = err == nil, key
		}
	}
	a.mu.Lock()
	a.kept = k
	a.mu.Unlock()
}

// restoreKept puts back the login stored before the last authorization,
// whose token the server refused: or, if there was none, forgets the
// refused one. A login since accepted, or one not read, is left alone.
func (a *serverAuth) restoreKept() {
	a.mu.Lock()
	k := a.kept
	a.kept = keptLogin{}
	a.mu.Unlock()
	if !k.read {
		return
	}
	var err error
	switch {
	case k.st == nil:
		_, err = LogoutStore(a.opts.Dir, a.opts.Secrets, a.name)
	case k.key != nil:
		err = saveLogin(a.tokens(), a.name, k.st, newDPoPKey(k.key))
	default:
		err = saveLogin(a.tokens(), a.name, k.st, nil)
	}
	if err != nil {
		a.log.Warn("could not put back the OAuth tokens of the last login", "server", a.name, "error", err.Error())
	}
}

// TokenRefusedError is a server that refused the token its authorization
// server had just issued, before it accepted any request with it: the
// authorization is not tried again, since it would get one more such
// token (and ask the user to approve once more for nothing).
//
// Its message names no URL: a server's address may carry a secret.
type TokenRefusedError struct {
	Server string
	Why    string // what the server's challenge said, as " (…)"
}

func (e *TokenRefusedError) Error() string {
	return fmt.Sprintf("server %s refused the token its authorization server had just issued%s, so it was not authorized again: "+
		"check that the authorization server grants the scopes the server asks for and tokens for the server's address (the resource), "+
		"and that the server accepts that authorization server's tokens", e.Server, e.Why)
}

// ensureHandler builds the grant's handler on first need.
func (a *serverAuth) ensureHandler() (auth.OAuthHandler, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.handler != nil {
		return a.handler, nil
	}
	h, err := a.newHandler()
	if err != nil {
		return nil, err
	}
	a.handler = h
	return h, nil
}

func (a *serverAuth) newHandler() (auth.OAuthHandler, error) {
	o := a.opts
	switch o.Grant {
	case GrantClientCredentials, GrantJWTBearer, GrantEnterprise:
		if o.Grant == GrantClientCredentials && (o.ClientID == "" || o.ClientSecret == "" && len(o.PrivateKeyPEM) == 0) {
			return nil, fmt.Errorf("client credentials for %s need a client ID and a secret or private key", a.name)
		}
		return &grantHandler{a: a}, nil
	case "", GrantAuthorizationCode:
	default:
		return nil, fmt.Errorf("unknown OAuth grant %q", o.Grant)
	}
	authorize := o.Authorize
	if authorize == nil && o.NoBrowser {
		authorize = FollowRedirect(a.client)
	}
	if authorize == nil {
		return loginRequired{name: a.name, client: a.client}, nil
	}
	clientID, secret := o.ClientID, o.ClientSecret
	if clientID == "" {
		if st, _ := a.tokens().load(a.name); st != nil && st.Resource == a.resource && st.PreRegistered {
			clientID, secret = st.ClientID, st.ClientSecret
		}
	}
	redirect := o.RedirectURL
	if redirect == "" {
		redirect = "http://127.0.0.1/callback"
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if err := checkAuthURL(args.URL); err != nil {
				return nil, err
			}
			back, err := authorize(ctx, a.name, args.URL)
			if err != nil {
				return nil, err
			}
			q := back.Query()
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("authorization refused: %s", oneLine(e+" "+q.Get("error_description")))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: a.legacyIss(q.Get("iss"))}, nil
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{redirect},
				ClientName:   a.opts.ClientName,
				GrantTypes:   []string{"authorization_code", "refresh_token"},
			},
		},
		RequestRefreshToken: true,
		Client:              a.client,
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			st := newStoredAuth(a.resource, cfg, tok)
			st.PreRegistered = cfg.ClientID == clientID && clientID != ""
			if err := saveLogin(a.tokens(), a.name, st, a.commitDPoP(tok)); err != nil {
				a.log.Warn("could not save the OAuth token", "server", a.name, "error", err.Error())
			}
			return a.persisting(cfg.TokenSource(context.WithValue(a.ctx(), oauth2.HTTPClient, a.client), tok), st), nil
		},
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if clientID != "" {
		creds := &oauthex.ClientCredentials{ClientID: clientID}
		if secret != "" {
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
		}
		cfg.PreregisteredClient = creds
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}

// checkAuthURL refuses an authorization URL that is not http or https
// with a host. Authorize opens it in the browser through the platform's
// opener, which would start a local file (file:) or another protocol's
// handler just as readily; the SDK lets any scheme through on a loopback
// host.
func checkAuthURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("the authorization server's authorization endpoint is not a URL, so it was not opened")
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" || u.Host == "" {
		return fmt.Errorf("the authorization server's authorization endpoint is not an http or https URL (scheme %q), so it was not opened", u.Scheme)
	}
	return nil
}

// loginRequired is the handler of a Client that cannot ask the user.
type loginRequired struct {
	name   string
	client *http.Client // to look for the server's OAuth metadata
}

func (loginRequired) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }

func (l loginRequired) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer drain(resp)
	// A login needs OAuth metadata to find an authorization server. A
	// server without any (no Bearer challenge, or one naming no
	// resource_metadata with nothing at the well-known URLs) wants a
	// credential the user already has — an API key or personal token —
	// sent as a header: `mcp login` would only fail.
	if !challengedWith(resp, "bearer") && !challengedWith(resp, "dpop") || !hasOAuthMetadata(ctx, l.client, resp, req.URL) {
		return fmt.Errorf("server refused access (HTTP %d): %w", resp.StatusCode, ErrHeaderRequired)
	}
	return &LoginRequiredError{Server: l.name}
}

// hasOAuthMetadata reports whether the server of u publishes OAuth
// metadata a login could start from: protected-resource metadata (the
// challenge's resource_metadata, then the path-based and root well-known
// URLs, as discover looks) or, for 2025-03-26 servers, authorization-server
// metadata at the origin.
func hasOAuthMetadata(ctx context.Context, client *http.Client, resp *http.Response, u *url.URL) bool {
	if client == nil || u == nil {
		return true // cannot tell: keep the login advice
	}
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Params["resource_metadata"] != "" {
			return true
		}
	}
	resource := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	root := &url.URL{Scheme: u.Scheme, Host: u.Host}
	candidates := []string{root.String() + "/.well-known/oauth-protected-resource"}
	if p := strings.TrimSuffix(u.Path, "/"); p != "" {
		candidates = append([]string{root.String() + "/.well-known/oauth-protected-resource" + p}, candidates...)
	}
	for _, c := range candidates {
		if m, err := oauthex.GetProtectedResourceMetadata(ctx, c, resource, client); err == nil && m != nil {
			return true
		}
	}
	asm, err := auth.GetAuthServerMetadata(ctx, root.String(), client)
	return err == nil && asm != nil
}
