package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/policy"

	"github.com/switchboard-mcp/switchboard/internal/lazyre"
	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// AuthFileName is the gateway auth file's name in the Switchboard
// directory: ~/.switchboard/gateway-auth.json.
const AuthFileName = "gateway-auth.json"

// SharedTokenPrincipal is the principal of a caller that presents the
// single shared token (SWITCHBOARD_GATEWAY_TOKEN or --token-file). Rules
// scoped to "token" in the auth file apply to it.
const SharedTokenPrincipal = "token"

// KeyPrefix begins every API key the gateway issues: sbk_<id>_<secret>.
const KeyPrefix = "sbk_"

// ErrUnauthorized is returned (wrapped) by [Auth.Authenticate] for a
// missing, unknown or revoked credential.
var ErrUnauthorized = errors.New("unauthorized")

// errNoToken is the refusal of a request without a credential.
var errNoToken = fmt.Errorf("%w: no bearer token", ErrUnauthorized)

// Principal is who makes a call through an HTTP gateway with
// authentication: a named holder of API keys, the bearer of an OAuth
// access token, or the shared token.
type Principal struct {
	// Name is the principal's name in the auth file, the name an access
	// token's claim gives it (JWTOptions.PrincipalClaim), or
	// SharedTokenPrincipal. Rules and limits of the auth file entry of
	// that name apply to it.
	Name string
	// Groups are the principal's groups, sorted.
	Groups []string
	// KeyID is the id of the key that authenticated it ("" for the shared
	// token and access tokens).
	KeyID string
	// Issuer is the issuer of the access token that authenticated it (""
	// for keys and the shared token).
	Issuer string
}

// Keyed reports whether p is one of the team's principals — it holds a key
// of the auth file or an access token — as opposed to the shared token,
// which stands for the person who runs the gateway.
func (p *Principal) Keyed() bool { return p != nil && (p.KeyID != "" || p.Issuer != "") }

// principalExtra is the TokenInfo.Extra key under which the *Principal
// travels to the tool handler.
const principalExtra = "switchboard.principal"

// TokenInfo is the SDK's token info for p: the SDK binds an HTTP session
// to UserID (a request for another principal's session is refused with
// 403), and the gateway finds p again in the call's RequestExtra.
func (p *Principal) TokenInfo() *auth.TokenInfo {
	return &auth.TokenInfo{
		UserID: p.Name,
		// The middleware wants an expiry; a key lasts until revoked, and
		// every request is authenticated afresh.
		Expiration: time.Now().Add(24 * time.Hour),
		Extra:      map[string]any{principalExtra: p},
	}
}

// PrincipalFromTokenInfo returns the principal that ti was made for, or
// nil.
func PrincipalFromTokenInfo(ti *auth.TokenInfo) *Principal {
	if ti == nil {
		return nil
	}
	p, _ := ti.Extra[principalExtra].(*Principal)
	return p
}

// AuthOptions configure an Auth. A nil *AuthOptions means no file and no
// shared token.
type AuthOptions struct {
	// File is the auth file. If empty, no file is read.
	File string
	// SharedToken, if set, authenticates as SharedTokenPrincipal.
	SharedToken string
	// Logger receives reload warnings. If nil, they are discarded.
	Logger *slog.Logger
	// Now is the clock of rate limits. If nil, time.Now.
	Now func() time.Time
	// Verify, if set, authenticates a bearer token that is neither a key
	// of the auth file nor the shared token — the seam for OAuth access
	// tokens (a JWT verified against an issuer's JWKS, its claims mapped
	// to a Principal's name and groups). It returns an error wrapping
	// ErrUnauthorized for a token it refuses. Setting it makes every
	// request authenticate. [JWTVerifier.Verify] is one.
	Verify func(ctx context.Context, token string) (*Principal, error)
	// ResourceMetadataURL, if set, is the URL of the gateway's OAuth
	// protected resource metadata (RFC 9728; [JWTVerifier.MetadataURL]):
	// Challenge names it, so that a client refused with 401 finds the
	// authorization server to log in with.
	ResourceMetadataURL string
	// FailuresPerMinute is how many refused credentials one client
	// address may present in a minute before its requests are refused
	// (429, AuthenticateRequest) without their credential being checked.
	// If 0, DefaultAuthFailures; if negative, no limit.
	FailuresPerMinute int
}

// Auth knows the callers of an HTTP gateway: the principals and hashed
// keys of the auth file, and the shared token. Reload re-reads the file
// (the serve watcher calls it), so a revoked key is refused from the next
// request on. It is safe for concurrent use.
//
// Once any credential exists — the shared token, or an auth file, broken
// or not — every request must carry one, for the life of the Auth: taking
// the file away does not open the gateway.
type Auth struct {
	file   string
	shared [sha256.Size]byte
	log    *slog.Logger
	now    func() time.Time

	verify  func(ctx context.Context, token string) (*Principal, error)
	metaURL string

	state    atomic.Pointer[authState]
	required atomic.Bool
	reloadMu sync.Mutex

	limits limiters
	fails  *failLimit // nil: no limit
}

// authState is one load of the auth file.
type authState struct {
	keys       map[string]keyEntry // key id → key
	principals map[string]*Principal
	scoped     *policy.Scoped
	rates      map[string]compiledRate // principal or "group:<g>" → limits
	perMember  map[string]PerMember    // server → its per-member entry
	err        error                   // why the file cannot be used
}

type keyEntry struct {
	principal *Principal
	sum       [sha256.Size]byte
}

// NewAuth loads opts.File (a file that does not exist holds nobody) and
// returns the Auth. A file that cannot be used is not an error here: it
// accepts no key until it is fixed (LoadErr says why).
func NewAuth(opts *AuthOptions) *Auth {
	a := &Auth{}
	perMinute := DefaultAuthFailures
	if opts != nil {
		if opts.FailuresPerMinute != 0 {
			perMinute = opts.FailuresPerMinute
		}
		a.file = opts.File
		a.log = opts.Logger
		a.now = opts.Now
		a.verify = opts.Verify
		a.metaURL = opts.ResourceMetadataURL
		if a.verify != nil {
			a.required.Store(true)
		}
		if opts.SharedToken != "" {
			a.shared = sha256.Sum256([]byte(opts.SharedToken))
			a.required.Store(true)
		}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.limits.init()
	if perMinute > 0 {
		a.fails = newFailLimit(perMinute, a.now, func(addr string) {
			a.log.Warn("refusing requests from a client address for a while: it presented too many credentials that were refused",
				"remote", addr, "per_minute", perMinute)
		})
	}
	_ = a.Reload()
	return a
}

// File returns the auth file's path ("" for none).
func (a *Auth) File() string { return a.file }

// Keys reports how many API keys the auth file held at its last load.
func (a *Auth) Keys() int {
	if a == nil {
		return 0
	}
	if st := a.state.Load(); st != nil {
		return len(st.keys)
	}
	return 0
}

// Required reports whether requests must authenticate.
func (a *Auth) Required() bool { return a != nil && a.required.Load() }

// LoadErr returns why the auth file last failed to load, or nil.
func (a *Auth) LoadErr() error { return a.state.Load().err }

// Reload re-reads the auth file. A file that does not parse, has keys of
// the wrong shape or can be written by other users accepts no key (fail
// closed: a revocation half-saved must not leave the key working) until
// it is fixed; the error is returned and logged.
func (a *Auth) Reload() error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	st, exists := loadAuthFile(a.file)
	if prev := a.state.Load(); st.err != nil && prev != nil {
		// A half-saved edit never turns a per-member server into one
		// every caller reaches with the gateway's credentials (access
		// tokens are still accepted meanwhile).
		st.perMember = prev.perMember
	}
	if exists {
		a.required.Store(true)
	}
	a.state.Store(st)
	if st.err != nil {
		a.log.Warn("gateway auth file cannot be used; no key is accepted until it is fixed", "file", a.file, "error", st.err)
	} else if a.file != "" && exists {
		a.log.Info("gateway auth file loaded", "file", a.file, "principals", len(st.principals), "keys", len(st.keys))
	}
	return st.err
}

// Authenticate returns the principal whose credential token is: a key of
// the auth file, the shared token, or a token AuthOptions.Verify accepts.
// Keys and the shared token are compared by their SHA-256 in constant
// time.
func (a *Auth) Authenticate(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, errNoToken
	}
	sum := sha256.Sum256([]byte(token))
	if id, ok := keyID(token); ok {
		st := a.state.Load()
		if k, found := st.keys[id]; found && subtle.ConstantTimeCompare(sum[:], k.sum[:]) == 1 {
			return k.principal, nil
		}
	}
	var zero [sha256.Size]byte
	if a.shared != zero && subtle.ConstantTimeCompare(sum[:], a.shared[:]) == 1 {
		return &Principal{Name: SharedTokenPrincipal}, nil
	}
	if _, isKey := keyID(token); a.verify != nil && !isKey {
		return a.verify(ctx, token)
	}
	return nil, fmt.Errorf("%w: unknown or revoked key", ErrUnauthorized)
}

// Challenge is the WWW-Authenticate header of a 401 answer to a request
// that Authenticate refused with err (RFC 6750 §3, RFC 9728 §5.1): it
// names the resource metadata, if there is any, and for a credential that
// was presented and refused says invalid_token and which check failed —
// never the credential.
func (a *Auth) Challenge(err error) string {
	var b strings.Builder
	b.WriteString(`Bearer realm="switchboard"`)
	if a != nil && a.metaURL != "" {
		fmt.Fprintf(&b, `, resource_metadata="%s"`, a.metaURL)
	}
	if err != nil && !errors.Is(err, errNoToken) {
		desc := "unknown or revoked key or token"
		for _, r := range []error{ErrTokenMalformed, ErrTokenSignature, ErrTokenIssuer, ErrTokenAudience, ErrTokenExpired, ErrTokenClaims, ErrIssuerUnavailable} {
			if errors.Is(err, r) {
				desc = r.Error()
				break
			}
		}
		fmt.Fprintf(&b, `, error="invalid_token", error_description="%s"`, desc)
	}
	return b.String()
}

// Scoped returns the permission rules of the auth file's principals and
// groups (nil when there are none).
func (a *Auth) Scoped() *policy.Scoped {
	if a == nil {
		return nil
	}
	return a.state.Load().scoped
}

// Verifier is a TokenVerifier for auth.RequireBearerToken. Its requests
// are held to the refused-credential limit as the gateway's own are
// (AuthenticateRequest; AuthOptions.FailuresPerMinute): an address over
// it is refused, its token unchecked — with 401, as that middleware
// answers every refusal.
func (a *Auth) Verifier() auth.TokenVerifier {
	return func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		var p *Principal
		var err error
		if r != nil {
			p, err = a.AuthenticateRequest(r.WithContext(ctx), token)
		} else {
			p, err = a.Authenticate(ctx, token)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		return p.TokenInfo(), nil
	}
}

// keyID returns the id part of sbk_<id>_<secret>.
func keyID(token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, KeyPrefix)
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, "_")
	return id, ok && id != ""
}

// NewKey returns a new API key, sbk_<id>_<secret> with 256 random bits of
// secret, and its id.
func NewKey() (key, id string, err error) {
	b := make([]byte, 4+32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("no randomness for a key: %w", err)
	}
	id = hex.EncodeToString(b[:4])
	return KeyPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(b[4:]), id, nil
}

// KeyHash is the hex SHA-256 the auth file keeps of a key. A fast hash is
// enough: the key is 256 random bits, so there is nothing to guess.
func KeyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// AuthFile is the auth file's content (JSON with comments):
//
//	{"principals": {
//	  "alice": {"groups": ["eng"], "keys": [{"id": "…", "sha256": "…", "created": "…"}],
//	            "allow": ["mcp__github"], "rateLimit": {"perMinute": 60}},
//	  "group:eng": {"deny": ["mcp__prod_db"], "rateLimit": {"tools": {"mcp__github": 10}}}}}
//
// An entry named group:<g> holds the rules and limits of group g; it has
// no keys. PerMember names the upstream servers each principal calls with
// its own credentials (see [PerMember]):
//
//	"perMember": {"github": {}, "jira": {"fallback": "shared"}}
type AuthFile struct {
	Principals map[string]*AuthEntry `json:"principals"`
	PerMember  map[string]*PerMember `json:"perMember,omitempty"`
}

// AuthEntry is one principal (or group:<g>) of the auth file.
type AuthEntry struct {
	Groups []string  `json:"groups,omitempty"`
	Keys   []AuthKey `json:"keys,omitempty"`
	// Allow, Ask and Deny are permission rules (see package policy; argument rules
	// included) for this principal's (or group's) calls, on top of the
	// rules of every settings file; a deny anywhere still wins.
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// RateLimit bounds the principal's calls (each member's, for a
	// group).
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
}

// AuthKey is one hashed key.
type AuthKey struct {
	ID      string    `json:"id"`
	SHA256  string    `json:"sha256"`
	Created time.Time `json:"created"`
}

// RateLimit is a budget of calls per minute. Tools bounds calls of a
// server (mcp__<server>) or of one tool (mcp__<server>__<tool>) more
// tightly; every limit that applies must have room.
type RateLimit struct {
	PerMinute int            `json:"perMinute,omitempty"`
	Tools     map[string]int `json:"tools,omitempty"`
}

var (
	principalName = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)
	keyIDShape    = lazyre.New(`^[0-9a-f]{8}$`)
	sha256Shape   = lazyre.New(`^[0-9a-f]{64}$`)
)

// GroupPrefix begins the auth file entry of a group.
const GroupPrefix = "group:"

// ReservedName reports why name, valid or not, cannot be given keys: it
// is the shared token's caller ([SharedTokenPrincipal]), whose rules are
// the shared token's, or a group's entry (GroupPrefix), which holds no
// keys. It returns nil for any other name.
func ReservedName(name string) error {
	switch {
	case name == SharedTokenPrincipal:
		return fmt.Errorf("%q is the shared token's caller: a key of it would get the rules written for the shared token", name)
	case strings.HasPrefix(name, GroupPrefix):
		return fmt.Errorf("%q is a group, which holds no keys", name)
	}
	return nil
}

// ValidName reports why name cannot be a principal or group name, or nil.
func ValidName(name string) error {
	if !principalName().MatchString(name) {
		return fmt.Errorf("invalid name %q: use letters, digits, '.', '_', '@' and '-' (at most 64, starting with a letter or digit)", name)
	}
	return nil
}

// ReadAuthFile reads and checks the auth file at path. exists is false when
// there is no file (then f is empty and err nil).
func ReadAuthFile(path string) (f *AuthFile, exists bool, err error) {
	f = &AuthFile{Principals: map[string]*AuthEntry{}}
	if path == "" {
		return f, false, nil
	}
	data, fi, err := safefile.Read(path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if fi != nil && fi.IsDir() {
		return f, true, fmt.Errorf("%s is a directory", path)
	}
	if reason, fix, ok := safefile.Refused(err); ok {
		return f, true, fmt.Errorf("%s cannot be read: %s; %s", path, reason, fix)
	}
	if err != nil {
		return f, true, fmt.Errorf("reading %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return f, true, fmt.Errorf("%s can be written by other users (mode %#o), who could add keys; run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return f, true, fmt.Errorf("%s: %w", path, err)
	}
	if len(strings.TrimSpace(string(std))) == 0 {
		return f, true, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(std)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil {
		return f, true, fmt.Errorf("%s: %w", path, err)
	}
	if f.Principals == nil {
		f.Principals = map[string]*AuthEntry{}
	}
	ids := map[string]string{}
	for name, e := range f.Principals {
		if e == nil {
			return f, true, fmt.Errorf("%s: principal %q is null", path, name)
		}
		group, isGroup := strings.CutPrefix(name, GroupPrefix)
		if err := ValidName(strings.TrimPrefix(name, GroupPrefix)); err != nil {
			return f, true, fmt.Errorf("%s: %w", path, err)
		}
		if isGroup && (len(e.Keys) > 0 || len(e.Groups) > 0) {
			return f, true, fmt.Errorf("%s: %q is a group: it holds rules and limits, not keys or groups", path, GroupPrefix+group)
		}
		for _, g := range e.Groups {
			if err := ValidName(g); err != nil {
				return f, true, fmt.Errorf("%s: principal %q: group: %w", path, name, err)
			}
		}
		for _, k := range e.Keys {
			if !keyIDShape().MatchString(k.ID) || !sha256Shape().MatchString(k.SHA256) {
				return f, true, fmt.Errorf("%s: principal %q: a key needs an id of 8 hex digits and a sha256 of 64", path, name)
			}
			if other, dup := ids[k.ID]; dup {
				return f, true, fmt.Errorf("%s: key id %s is held by %q and %q", path, k.ID, other, name)
			}
			ids[k.ID] = name
		}
		if r := e.RateLimit; r != nil {
			if r.PerMinute < 0 {
				return f, true, fmt.Errorf("%s: principal %q: rateLimit.perMinute must not be negative", path, name)
			}
			for t, n := range r.Tools {
				if n <= 0 {
					return f, true, fmt.Errorf("%s: principal %q: rateLimit.tools[%q] must be a positive number of calls per minute", path, name, t)
				}
			}
		}
	}
	if err := checkPerMember(f.PerMember); err != nil {
		return f, true, fmt.Errorf("%s: %w", path, err)
	}
	return f, true, nil
}

func loadAuthFile(path string) (*authState, bool) {
	st := &authState{keys: map[string]keyEntry{}, principals: map[string]*Principal{}, rates: map[string]compiledRate{}}
	f, exists, err := ReadAuthFile(path)
	if err != nil {
		st.err = err
		return st, exists
	}
	if e := f.Principals[SharedTokenPrincipal]; e != nil && len(e.Keys) > 0 {
		// Written by hand, or by a version that let `gateway key add
		// token` through: its holder would get the rules written for
		// the shared token's caller.
		st.err = fmt.Errorf("%s: principal %q holds keys, but %q is the shared token's caller and its rules are the shared token's; "+
			"remove them with `switchboard gateway key revoke %s` and give the key's holder a name of its own", path, SharedTokenPrincipal, SharedTokenPrincipal, SharedTokenPrincipal)
		return st, exists
	}
	lists := map[string]policy.Lists{}
	for name, e := range f.Principals {
		lists[name] = policy.Lists{Allow: e.Allow, Ask: e.Ask, Deny: e.Deny}
		if e.RateLimit != nil {
			st.rates[name] = compileRate(*e.RateLimit)
		}
		if strings.HasPrefix(name, GroupPrefix) {
			continue
		}
		groups := append([]string(nil), e.Groups...)
		sort.Strings(groups)
		for _, k := range e.Keys {
			p := &Principal{Name: name, Groups: groups, KeyID: k.ID}
			var sum [sha256.Size]byte
			_, _ = hex.Decode(sum[:], []byte(k.SHA256))
			st.keys[k.ID] = keyEntry{principal: p, sum: sum}
		}
		st.principals[name] = &Principal{Name: name, Groups: groups}
	}
	st.scoped = policy.NewScoped(policy.Source{Scope: policy.ScopePrincipal, File: path}, lists)
	st.perMember = perMemberOf(f.PerMember)
	return st, exists
}
