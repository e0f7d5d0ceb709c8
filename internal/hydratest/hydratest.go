// Package hydratest runs ORY Hydra — a real OAuth 2.1 and OpenID Connect
// server, written in Go — for the tests of the gateway as an OAuth
// resource server: tokens come from a real identity provider, never from a
// minter written for the test.
//
// [Binary] builds Hydra (Version, from the Go module proxy, with SQLite
// for its in-memory database) once into the user cache directory; a file
// lock serializes test packages that build it at once, and later runs find
// it there. [Start] runs an instance on loopback ports with JWT access
// tokens; its methods register clients, take tokens by the client
// credentials grant, and play the user of an authorization code flow
// (accepting the login and consent through Hydra's admin API, as a login
// app does).
//
// Without a Go toolchain and a C compiler that can build Hydra the calling
// test is skipped, except under CI=true, where it fails.
package hydratest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/filelock"
)

// Version is the Hydra release the tests run.
const Version = "v2.3.0"

// popReplace is Hydra's own replace directive for its database layer: a
// build that depends on Hydra as a module does not inherit it.
const popReplace = "github.com/gobuffalo/pop/v6 => github.com/ory/pop/v6 v6.2.1-0.20241121111754-e5dfc0f3344b"

// BuildTimeout bounds building Hydra (the first time, with cgo SQLite).
const BuildTimeout = 20 * time.Minute

// skipOrFail skips, or fails under CI=true: CI must run the test.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: the OAuth tests must run against a real Hydra)", args...)
	}
	t.Skipf(format, args...)
}

// Binary returns the path of the Hydra program, building it first if this
// machine has not.
func Binary(t testing.TB) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "switchboard-test", "hydra-"+Version)
	bin := filepath.Join(dir, "hydra")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := filelock.Lock(filepath.Join(dir, "build"), BuildTimeout)
	if err != nil {
		skipOrFail(t, "waiting for another build of Hydra: %v", err)
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin // another package built it while we waited
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		skipOrFail(t, "no go tool to build Hydra: %v", err)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	gomod := "module hydrabuild\n\ngo 1.24\n\nreplace " + popReplace + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()
	start := time.Now()
	// Outside this module: its go.mod and go.work must not apply. SQLite
	// (cgo) is what Hydra's in-memory DSN runs on.
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=1")
	for _, args := range [][]string{
		{"get", "-tool", "github.com/ory/hydra/v2@" + Version},
		{"build", "-tags", "sqlite,sqlite_omit_load_extension", "-o", filepath.Join(tmp, "hydra"), "github.com/ory/hydra/v2"},
	} {
		cmd := exec.CommandContext(ctx, goTool, args...)
		cmd.Dir, cmd.Env = tmp, env
		if out, err := cmd.CombinedOutput(); err != nil {
			skipOrFail(t, "building Hydra %s (go %s): %v\n%s", Version, args[0], err, out)
		}
	}
	t.Logf("built Hydra %s in %v", Version, time.Since(start).Round(time.Second))
	if err := os.Rename(filepath.Join(tmp, "hydra"), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Options configure an instance. A nil *Options is the zero Options.
type Options struct {
	// Issuer, if set, is the issuer the instance names in its metadata and
	// tokens instead of its own public URL: a second instance given the
	// first one's issuer signs tokens that claim to be the first one's,
	// with keys of its own.
	Issuer string
	// TopLevelClaims are the claims of a consent session's access token
	// extras that also appear at the token's top level (Hydra's
	// oauth2.allowed_top_level_claims), e.g. "groups".
	TopLevelClaims []string
}

// Server is a running Hydra.
type Server struct {
	// Public and Admin are the base URLs of the public and admin APIs
	// (no trailing slash).
	Public, Admin string
	// Issuer is the issuer URL, as the tokens' iss holds it.
	Issuer string

	http *http.Client
}

// Start runs Hydra until the test ends.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	bin := Binary(t)
	if opts == nil {
		opts = &Options{}
	}
	var lastErr error
	// The ports are picked free and handed to Hydra, which binds them a
	// moment later; another process may take one in between: then again.
	for range 3 {
		s, err := start(t, bin, opts)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("starting Hydra: %v", lastErr)
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func start(t testing.TB, bin string, opts *Options) (*Server, error) {
	pub, err := freePort()
	if err != nil {
		return nil, err
	}
	adm, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Public: fmt.Sprintf("http://127.0.0.1:%d", pub),
		Admin:  fmt.Sprintf("http://127.0.0.1:%d", adm),
		// A new connection per request: Hydra closes idle ones, and a
		// POST (the token request) on one it has just closed fails with
		// EOF, which net/http does not retry for a POST — on a loaded
		// machine, where the test's steps are far apart, it did.
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
	}
	s.Issuer = opts.Issuer
	if s.Issuer == "" {
		// No trailing slash: a client (the Go SDK's among them) would
		// insert the well-known path before it, and Hydra answers
		// /.well-known/…/ with a redirect such a client refuses.
		s.Issuer = s.Public
	}
	top := opts.TopLevelClaims
	if top == nil {
		top = []string{}
	}
	cfg := map[string]any{
		"dsn": "memory",
		"log": map[string]any{"level": "warn", "leak_sensitive_values": false},
		"serve": map[string]any{
			"public": map[string]any{"host": "127.0.0.1", "port": pub},
			"admin":  map[string]any{"host": "127.0.0.1", "port": adm},
		},
		"urls": map[string]any{
			"self": map[string]any{"issuer": s.Issuer, "public": s.Public + "/"},
			// Never fetched: Authorize stops at these redirects and
			// answers them through the admin API, as a login app would.
			"login":   "http://127.0.0.1:9/login",
			"consent": "http://127.0.0.1:9/consent",
		},
		"secrets":    map[string]any{"system": []string{"hydratest-system-secret-0123456789"}},
		"strategies": map[string]any{"access_token": "jwt"},
		"oauth2":     map[string]any{"allowed_top_level_claims": top},
		"oidc":       map[string]any{"dynamic_client_registration": map[string]any{"enabled": true}},
		// Advertised, so that an MCP client registers itself (RFC 7591).
		"webfinger": map[string]any{"oidc_discovery": map[string]any{"client_registration_url": s.Public + "/oauth2/register"}},
	}
	dir := t.TempDir()
	b, _ := json.Marshal(cfg)
	cfgFile := filepath.Join(dir, "hydra.json")
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		return nil, err
	}
	// --dev allows the http issuer on loopback.
	cmd := exec.Command(bin, "serve", "all", "--dev", "--sqa-opt-out", "-c", cfgFile)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		killGroup(cmd)
		<-exited
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			return nil, fmt.Errorf("hydra exited (%v):\n%s", err, out.String())
		default:
		}
		resp, err := s.http.Get(s.Admin + "/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("hydra not ready within 90s:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("hydra output:\n%s", out.String())
		}
	})
	return s, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 1<<20 {
		return len(p), nil
	}
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Client is an OAuth client to register.
type Client struct {
	// ID and Secret are filled in by CreateClient.
	ID, Secret string
	// GrantTypes: if empty, client_credentials.
	GrantTypes []string
	// Audience lists the audiences the client may ask tokens for.
	Audience []string
	// Scope is the space-separated scopes it may ask for.
	Scope string
	// RedirectURIs, for the authorization code grant.
	RedirectURIs []string
	// AuthMethod is how it authenticates at the token endpoint: if empty,
	// client_secret_basic (the Go SDK's OAuth client wants
	// client_secret_post).
	AuthMethod string
}

// CreateClient registers c through the admin API and returns it with its
// id and secret.
func (s *Server) CreateClient(t testing.TB, c Client) Client {
	t.Helper()
	if len(c.GrantTypes) == 0 {
		c.GrantTypes = []string{"client_credentials"}
	}
	if c.AuthMethod == "" {
		c.AuthMethod = "client_secret_basic"
	}
	body := map[string]any{
		"grant_types":                c.GrantTypes,
		"audience":                   c.Audience,
		"scope":                      c.Scope,
		"redirect_uris":              c.RedirectURIs,
		"token_endpoint_auth_method": c.AuthMethod,
	}
	var got struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	s.admin(t, http.MethodPost, "/admin/clients", body, &got)
	c.ID, c.Secret = got.ID, got.Secret
	return c
}

// SetAccessTokenLifespan makes the access tokens Hydra issues to client
// id by the client credentials grant last d.
func (s *Server) SetAccessTokenLifespan(t testing.TB, id string, d time.Duration) {
	t.Helper()
	s.admin(t, http.MethodPut, "/admin/clients/"+url.PathEscape(id)+"/lifespans",
		map[string]any{"client_credentials_grant_access_token_lifespan": d.String()}, nil)
}

// RotateAccessTokenKey adds a new signing key, named kid, to the key set
// Hydra signs access tokens with; the tokens it issues from then on are
// signed by it.
func (s *Server) RotateAccessTokenKey(t testing.TB, kid string) {
	t.Helper()
	s.admin(t, http.MethodPost, "/admin/keys/hydra.jwt.access-token", map[string]any{"alg": "RS256", "use": "sig", "kid": kid}, nil)
}

// Token takes an access token for c by the client credentials grant, for
// the audiences given.
func (s *Server) Token(t testing.TB, c Client, audience ...string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(audience) > 0 {
		form.Set("audience", strings.Join(audience, " "))
	}
	req, err := http.NewRequest(http.MethodPost, s.Public+"/oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token request: %s: %s", resp.Status, b)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(b, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token response %s: %v", b, err)
	}
	return tok.AccessToken
}

func (s *Server) admin(t testing.TB, method, path string, body, out any) {
	t.Helper()
	if err := s.adminDo(context.Background(), method, path, body, out); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) adminDo(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.Admin+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("hydra admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("hydra admin %s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("hydra admin %s %s: %w (%s)", method, path, err, b)
		}
	}
	return nil
}

// User is who logs in during Authorize, and what the consent grants.
type User struct {
	// Subject is the user's id: the token's sub.
	Subject string
	// Claims go into the access token (under ext, and at the top level
	// for Options.TopLevelClaims).
	Claims map[string]any
	// Audience is granted to the access token (its aud).
	Audience []string
}

// Authorize plays the user's browser for authURL (an authorization
// request of a client, as an MCP client opens it): it follows Hydra's
// redirects, accepts the login as u.Subject and the consent with u's
// claims and audience through the admin API, and returns the query of the
// final redirect to the client's redirect URI (code, state, maybe iss).
func (s *Server) Authorize(ctx context.Context, authURL string, u User) (url.Values, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	browser := &http.Client{
		Jar:     jar,
		Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	next := authURL
	for range 20 {
		nu, err := url.Parse(next)
		if err != nil {
			return nil, err
		}
		switch {
		case nu.Query().Get("login_challenge") != "":
			var acc struct {
				RedirectTo string `json:"redirect_to"`
			}
			ch := url.QueryEscape(nu.Query().Get("login_challenge"))
			if err := s.adminDo(ctx, http.MethodPut, "/admin/oauth2/auth/requests/login/accept?login_challenge="+ch,
				map[string]any{"subject": u.Subject}, &acc); err != nil {
				return nil, err
			}
			next = acc.RedirectTo
			continue
		case nu.Query().Get("consent_challenge") != "":
			ch := url.QueryEscape(nu.Query().Get("consent_challenge"))
			var creq struct {
				Scope    []string `json:"requested_scope"`
				Audience []string `json:"requested_access_token_audience"`
			}
			if err := s.adminDo(ctx, http.MethodGet, "/admin/oauth2/auth/requests/consent?consent_challenge="+ch, nil, &creq); err != nil {
				return nil, err
			}
			aud := append(append([]string{}, creq.Audience...), u.Audience...)
			claims := u.Claims
			if claims == nil {
				claims = map[string]any{}
			}
			var acc struct {
				RedirectTo string `json:"redirect_to"`
			}
			if err := s.adminDo(ctx, http.MethodPut, "/admin/oauth2/auth/requests/consent/accept?consent_challenge="+ch, map[string]any{
				"grant_scope":                 creq.Scope,
				"grant_access_token_audience": aud,
				"session":                     map[string]any{"access_token": claims},
			}, &acc); err != nil {
				return nil, err
			}
			next = acc.RedirectTo
			continue
		case nu.Query().Get("code") != "" || nu.Query().Get("error") != "":
			if e := nu.Query().Get("error"); e != "" {
				return nil, fmt.Errorf("authorization refused: %s: %s", e, nu.Query().Get("error_description"))
			}
			return nu.Query(), nil
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, err
		}
		resp, err := browser.Do(req)
		if err != nil {
			return nil, err
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode/100 != 3 || loc == "" {
			return nil, fmt.Errorf("GET %s: %s, no redirect: %s", next, resp.Status, b)
		}
		lu, err := resp.Request.URL.Parse(loc)
		if err != nil {
			return nil, err
		}
		next = lu.String()
	}
	return nil, errors.New("authorization: too many redirects")
}
