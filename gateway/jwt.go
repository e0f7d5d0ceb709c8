package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Reasons a JWT access token is refused. Each is returned wrapped
// together with ErrUnauthorized by [JWTVerifier.Verify].
var (
	// ErrTokenMalformed: not a JWS compact token, or an algorithm that is
	// not an asymmetric signature.
	ErrTokenMalformed = errors.New("access token is not a signed JWT")
	// ErrTokenSignature: no key of the issuer's JWKS verifies it.
	ErrTokenSignature = errors.New("access token is not signed by a key of the issuer")
	// ErrTokenIssuer: signed, but iss names another issuer.
	ErrTokenIssuer = errors.New("access token is from another issuer")
	// ErrTokenAudience: aud does not name this gateway.
	ErrTokenAudience = errors.New("access token is for another audience")
	// ErrTokenExpired: exp has passed (or nbf is still to come).
	ErrTokenExpired = errors.New("access token has expired")
	// ErrTokenClaims: the claim naming the principal is missing or unfit.
	ErrTokenClaims = errors.New("access token does not name a principal")
	// ErrIssuerUnavailable: the issuer's metadata or keys cannot be
	// fetched, so no token can be checked (fail closed).
	ErrIssuerUnavailable = errors.New("the authorization server cannot be reached")
)

// MaxTokenSize bounds the access tokens Verify looks at.
const MaxTokenSize = 16 << 10

// JWTOptions configure a JWTVerifier: the gateway as an OAuth 2.1
// resource server (MCP authorization spec, RFC 9068 JWT access tokens).
type JWTOptions struct {
	// Issuer is the authorization server's issuer URL; a token's iss must
	// equal it. It must be https, or http on a loopback host. Required.
	Issuer string
	// Resource is the gateway's own URL as clients reach it (e.g.
	// https://gw.example.com/mcp): the resource of its protected resource
	// metadata (RFC 9728). Required.
	Resource string
	// Audience is what a token's aud must hold. If empty, Resource.
	Audience string
	// JWKSURL is where the issuer's signing keys are. If empty, it is
	// discovered from the issuer's metadata (RFC 8414, else OpenID
	// Connect discovery) on first use.
	JWKSURL string
	// PrincipalClaim names the claim whose string value is the
	// principal's name. If empty, "sub".
	PrincipalClaim string
	// GroupsClaim names the claim whose values (a list of strings, or a
	// string of space-separated names) are the principal's groups; names
	// that cannot be group names are dropped. If empty, "groups". A name
	// with dots that is not a top-level claim is looked up as a path
	// ("realm_access.roles").
	GroupsClaim string
	// Scopes, if set, are advertised as the metadata's scopes_supported,
	// so that a client asks for them when it logs in.
	Scopes []string
	// HTTPClient fetches the issuer's metadata and keys. If nil, a client
	// with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock of expiry and of the limit on fetching the keys
	// again. If nil, time.Now.
	Now func() time.Time
}

// JWTVerifier checks OAuth access tokens that are JWTs: the signature by
// a key of the issuer's JWKS (fetched once, and fetched again for a key id
// it does not know — at most once every 30 seconds, concurrent tokens
// sharing one fetch, the keys it has verifying meanwhile: a token costs
// its sender nothing, so it must not cost the issuer a request), the
// issuer, the audience and the expiry; then it maps
// the claims to a Principal. A token it accepted is accepted again without
// the signature check for up to a minute, never past its expiry. Its
// Verify is AuthOptions.Verify. It is safe for concurrent use.
type JWTVerifier struct {
	opts     JWTOptions
	client   *http.Client
	metaURL  string
	audience string

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	keys     *keySet
	lastTry  time.Time
	lastErr  error

	cacheMu sync.Mutex
	cache   map[[sha256.Size]byte]cachedToken // token digest → principal
}

// retryDiscovery is how long a failed discovery is remembered before the
// issuer is asked again: a dead issuer must not be asked once per request.
const retryDiscovery = 5 * time.Second

// NewJWTVerifier checks opts and returns the verifier. It does not reach
// the issuer: that happens on first use (or [JWTVerifier.Discover]).
func NewJWTVerifier(opts *JWTOptions) (*JWTVerifier, error) {
	if opts == nil || opts.Issuer == "" || opts.Resource == "" {
		return nil, errors.New("an OAuth resource server needs an issuer URL and its own resource URL")
	}
	v := &JWTVerifier{opts: *opts}
	if err := secureURL("issuer", opts.Issuer); err != nil {
		return nil, err
	}
	if opts.JWKSURL != "" {
		if err := secureURL("JWKS URL", opts.JWKSURL); err != nil {
			return nil, err
		}
	}
	ru, err := url.Parse(opts.Resource)
	if err != nil || (ru.Scheme != "https" && ru.Scheme != "http") || ru.Host == "" || ru.Fragment != "" || ru.RawQuery != "" {
		return nil, fmt.Errorf("resource URL %q: want an absolute http(s) URL without query or fragment", opts.Resource)
	}
	if v.opts.PrincipalClaim == "" {
		v.opts.PrincipalClaim = "sub"
	}
	if v.opts.GroupsClaim == "" {
		v.opts.GroupsClaim = "groups"
	}
	v.audience = opts.Audience
	if v.audience == "" {
		v.audience = opts.Resource
	}
	if v.opts.Now == nil {
		v.opts.Now = time.Now
	}
	v.client = opts.HTTPClient
	if v.client == nil {
		v.client = &http.Client{Timeout: 10 * time.Second}
	}
	// RFC 9728 §3.1: the well-known segment goes between host and path.
	meta := *ru
	meta.Path = "/.well-known/oauth-protected-resource" + strings.TrimSuffix(ru.Path, "/")
	meta.RawPath = ""
	v.metaURL = meta.String()
	return v, nil
}

// secureURL refuses an issuer or key URL an attacker on the network could
// answer for: anything but https, or http to a loopback host.
func secureURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute URL", what, raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); h == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("%s %q must be https (http only on a loopback host): the keys that sign tokens must not be open to tampering on the way", what, raw)
}

// Issuer returns the issuer URL.
func (v *JWTVerifier) Issuer() string { return v.opts.Issuer }

// Resource returns the gateway's resource URL.
func (v *JWTVerifier) Resource() string { return v.opts.Resource }

// MetadataURL is where the protected resource metadata is, by
// RFC 9728 §3.1: https://host/.well-known/oauth-protected-resource/<path>.
// Put it in AuthOptions.ResourceMetadataURL.
func (v *JWTVerifier) MetadataURL() string { return v.metaURL }

// Metadata returns the gateway's protected resource metadata (RFC 9728):
// its resource URL and the issuer that grants tokens for it.
func (v *JWTVerifier) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.opts.Resource,
		AuthorizationServers:   []string{v.opts.Issuer},
		BearerMethodsSupported: []string{"header"},
		ScopesSupported:        v.opts.Scopes,
		ResourceName:           "Switchboard gateway",
	}
}

// MetadataHandler serves Metadata as JSON to anyone (it is public: a
// client reads it before it has a token), with CORS for browser clients.
// Mount it at /.well-known/oauth-protected-resource and every path under
// it.
func (v *JWTVerifier) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(v.Metadata())
}

// Discover fetches the issuer's metadata and keys now, to report a
// misconfigured or unreachable issuer at start-up instead of at the first
// request. Verify retries on its own, so an error here is not fatal.
func (v *JWTVerifier) Discover(ctx context.Context) error {
	if _, err := v.ready(ctx, true); err != nil {
		return err
	}
	v.mu.Lock()
	ks := v.keys
	v.mu.Unlock()
	// The keys too: a JWKS that cannot be fetched fails every token. The
	// first token then needs no fetch; one with a key id this fetch did
	// not bring (an issuer that makes its keys on first use) may still
	// fetch at once: the limit counts the fetches tokens cause.
	if _, err := ks.refresh(ctx, false); err != nil {
		return fmt.Errorf("%w: %v", ErrIssuerUnavailable, err)
	}
	return nil
}

// ready returns the go-oidc verifier, discovering the issuer's JWKS URL
// first if need be; force ignores a recent failure.
func (v *JWTVerifier) ready(ctx context.Context, force bool) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	now := time.Now()
	if !force && v.lastErr != nil && now.Sub(v.lastTry) < retryDiscovery {
		return nil, v.lastErr
	}
	v.lastTry = now
	jwks := v.opts.JWKSURL
	if jwks == "" {
		// A request that gives up must not spoil discovery for the
		// others, nor may a slow issuer hold them all for long.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		u, err := discoverJWKS(dctx, v.client, v.opts.Issuer)
		if err != nil {
			v.lastErr = fmt.Errorf("%w: %v", ErrIssuerUnavailable, err)
			return nil, v.lastErr
		}
		jwks = u
		v.opts.JWKSURL = u
	}
	// The key set outlives any request: its fetches use a context of
	// their own.
	v.keys = newKeySet(jwks, v.client, v.opts.Now)
	v.verifier = oidc.NewVerifier(v.opts.Issuer, v.keys, &oidc.Config{
		// Issuer and audience are checked below, to tell which failed.
		SkipClientIDCheck:    true,
		SkipIssuerCheck:      true,
		SupportedSigningAlgs: signingAlgs,
		Now:                  v.opts.Now,
	})
	v.lastErr = nil
	return v.verifier, nil
}

// signingAlgs are the algorithms a token may be signed with: asymmetric
// ones only (never "none", never an HMAC whose key would be public).
var signingAlgs = []string{
	oidc.RS256, oidc.RS384, oidc.RS512,
	oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512,
	oidc.EdDSA,
}

// discoverJWKS reads the issuer's metadata — RFC 8414 first, then OpenID
// Connect discovery — and returns its jwks_uri. The metadata's issuer must
// be the issuer asked for (RFC 8414 §3.3).
func discoverJWKS(ctx context.Context, client *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	path := strings.TrimSuffix(u.Path, "/")
	var tries []string
	for _, wk := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		m := *u
		m.Path, m.RawPath = wk+path, ""
		tries = append(tries, m.String())
	}
	if path != "" {
		// OpenID Connect discovery appends to the issuer's path.
		tries = append(tries, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration")
	}
	var errs []error
	for _, t := range tries {
		jwks, err := fetchMetadata(ctx, client, t, issuer)
		if err == nil {
			return jwks, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func fetchMetadata(ctx context.Context, client *http.Client, metaURL, issuer string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metaURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return "", fmt.Errorf("%s: %s", metaURL, resp.Status)
	}
	var m struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return "", fmt.Errorf("%s: %w", metaURL, err)
	}
	if m.Issuer != issuer {
		return "", fmt.Errorf("%s names issuer %q, not %q", metaURL, m.Issuer, issuer)
	}
	if m.JWKSURI == "" {
		return "", fmt.Errorf("%s has no jwks_uri", metaURL)
	}
	if err := secureURL("jwks_uri", m.JWKSURI); err != nil {
		return "", fmt.Errorf("%s: %w", metaURL, err)
	}
	return m.JWKSURI, nil
}

// Verify checks token and returns its principal: the name from the
// principal claim, the groups from the groups claim, and Issuer set. A
// token refused wraps ErrUnauthorized and one of the ErrToken* reasons
// (or ErrIssuerUnavailable). The token itself is in no error.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if len(token) > MaxTokenSize || strings.Count(token, ".") != 2 {
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, ErrTokenMalformed)
	}
	sum := sha256.Sum256([]byte(token))
	if p := v.cached(sum); p != nil {
		return p, nil
	}
	ov, err := v.ready(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	idt, err := ov.Verify(ctx, token)
	if err != nil {
		// go-oidc checks the signature before the times, so an expired
		// token was signed by the issuer. Its other errors are told apart
		// by their text; a misread one only names the wrong reason: every
		// error refuses the token.
		var exp *oidc.TokenExpiredError
		msg := err.Error()
		switch {
		case errors.As(err, &exp), strings.Contains(msg, "before the nbf"):
			return nil, fmt.Errorf("%w: %w", ErrUnauthorized, ErrTokenExpired)
		case strings.Contains(msg, "malformed jwt"), strings.Contains(msg, "not signed"), strings.Contains(msg, "multiple signatures"):
			return nil, fmt.Errorf("%w: %w", ErrUnauthorized, ErrTokenMalformed)
		case strings.Contains(msg, "fetching keys"):
			return nil, fmt.Errorf("%w: %w: %v", ErrUnauthorized, ErrIssuerUnavailable, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, ErrTokenSignature)
	}
	if idt.Issuer != v.opts.Issuer {
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, ErrTokenIssuer)
	}
	found := false
	for _, a := range idt.Audience {
		if a == v.audience {
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, ErrTokenAudience)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, ErrTokenClaims)
	}
	p, err := PrincipalFromClaims(claims, v.opts.PrincipalClaim, v.opts.GroupsClaim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	p.Issuer = v.opts.Issuer
	v.remember(sum, p, idt.Expiry)
	return p, nil
}

// A token checked once is taken again without its signature being checked
// (an issuer's RSA-4096 signature costs about as much as a tool call) for
// at most cacheTTL and never past its exp: a key the issuer withdraws stops
// a token it signed within that time.
const (
	cacheTTL   = time.Minute
	cacheLimit = 4096
)

type cachedToken struct {
	p     *Principal
	until time.Time
}

func (v *JWTVerifier) cached(sum [sha256.Size]byte) *Principal {
	v.cacheMu.Lock()
	defer v.cacheMu.Unlock()
	c, ok := v.cache[sum]
	if !ok {
		return nil
	}
	if !v.opts.Now().Before(c.until) {
		delete(v.cache, sum)
		return nil
	}
	return c.p
}

func (v *JWTVerifier) remember(sum [sha256.Size]byte, p *Principal, exp time.Time) {
	now := v.opts.Now()
	until := now.Add(cacheTTL)
	if exp.Before(until) {
		until = exp
	}
	v.cacheMu.Lock()
	defer v.cacheMu.Unlock()
	if v.cache == nil {
		v.cache = map[[sha256.Size]byte]cachedToken{}
	}
	if len(v.cache) >= cacheLimit {
		for k, c := range v.cache {
			if !now.Before(c.until) {
				delete(v.cache, k)
			}
		}
		if len(v.cache) >= cacheLimit {
			clear(v.cache) // many live tokens at once: start over
		}
	}
	v.cache[sum] = cachedToken{p: p, until: until}
}

// MaxPrincipalName bounds the name a token's claim may give a principal.
const MaxPrincipalName = 256

// PrincipalFromClaims maps the claims of a verified access token to a
// Principal: Name is the string value of nameClaim, Groups the valid group
// names of groupsClaim (a list of strings, or one string of names split at
// spaces), sorted and without repeats. A name that is empty, longer than
// MaxPrincipalName, not UTF-8, holds control characters, or could be
// mistaken for the shared token or a group entry is refused with
// ErrTokenClaims. It never panics, whatever the claims.
func PrincipalFromClaims(claims map[string]any, nameClaim, groupsClaim string) (*Principal, error) {
	nv, _ := lookupClaim(claims, nameClaim)
	name, ok := nv.(string)
	if !ok || name == "" {
		return nil, fmt.Errorf("%w: no string claim %q", ErrTokenClaims, nameClaim)
	}
	if len(name) > MaxPrincipalName || !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return nil, fmt.Errorf("%w: claim %q is not a usable name", ErrTokenClaims, nameClaim)
	}
	if name == SharedTokenPrincipal || strings.HasPrefix(name, GroupPrefix) {
		return nil, fmt.Errorf("%w: claim %q names %q, which is reserved", ErrTokenClaims, nameClaim, name)
	}
	var raw []string
	gv, _ := lookupClaim(claims, groupsClaim)
	switch g := gv.(type) {
	case string:
		raw = strings.Fields(g)
	case []any:
		for _, e := range g {
			if s, ok := e.(string); ok {
				raw = append(raw, s)
			}
		}
	}
	seen := map[string]bool{}
	groups := []string{}
	for _, g := range raw {
		if ValidName(g) == nil && !seen[g] {
			seen[g] = true
			groups = append(groups, g)
		}
	}
	sort.Strings(groups)
	return &Principal{Name: name, Groups: groups}, nil
}

// lookupClaim finds claim name: a top-level claim of that name (names
// such as "https://example.com/groups" hold dots), else the dotted path
// through nested objects.
func lookupClaim(claims map[string]any, name string) (any, bool) {
	if v, ok := claims[name]; ok {
		return v, true
	}
	if !strings.Contains(name, ".") {
		return nil, false
	}
	var cur any = claims
	for _, part := range strings.Split(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
