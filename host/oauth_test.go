package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// oauthServer is a real loopback MCP server (the echo test server over
// Streamable HTTP and SSE) behind bearer tokens, with its own small
// authorization server: metadata, dynamic registration, an authorize
// endpoint that approves at once, PKCE-checked code exchange and refresh.
type oauthServer struct {
	URL, SSEURL, base string
	// resource, if set, is what the protected-resource metadata claims.
	resource string
	// expiresIn is the tokens' lifetime in seconds (0: 3600).
	expiresIn int

	mu         sync.Mutex
	codes      map[string]string // code → PKCE challenge
	tokens     map[string]bool   // valid access tokens
	refresh    map[string]bool   // valid refresh tokens
	n          int
	authorizes int
	refreshes  int
	tokenReqs  int
	seen       []string // Authorization headers the MCP endpoint saw
	resources  []string // resource parameters of authorization and token requests
}

func startOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{codes: map[string]string{}, tokens: map[string]bool{}, refresh: map[string]bool{}}
	mcpSrv := testserver.NewServer("echo")
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	o.base, o.URL, o.SSEURL = ts.URL, ts.URL+"/mcp", ts.URL+"/sse"
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if !o.tokens[tok] {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	protect := func(path string, h http.Handler) {
		guarded := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: ts.URL + "/.well-known/oauth-protected-resource" + path})(h)
		mux.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.mu.Lock()
			o.seen = append(o.seen, r.Header.Get("Authorization"))
			o.mu.Unlock()
			guarded.ServeHTTP(w, r)
		}))
	}
	protect("/mcp", streamable)
	protect("/sse", sse)
	for _, path := range []string{"/mcp", "/sse"} {
		mux.HandleFunc("/.well-known/oauth-protected-resource"+path, func(w http.ResponseWriter, r *http.Request) {
			res := ts.URL + path
			if o.resource != "" {
				res = o.resource
			}
			writeJSON(w, 200, map[string]any{"resource": res, "authorization_servers": []string{ts.URL}})
		})
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{
			"issuer": ts.URL, "authorization_endpoint": ts.URL + "/authorize", "token_endpoint": ts.URL + "/token",
			"registration_endpoint": ts.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		_ = json.NewDecoder(r.Body).Decode(&md)
		md["client_id"] = "client-1"
		writeJSON(w, 201, md)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("resource") == "" {
			http.Error(w, "PKCE S256 and resource are required", 400)
			return
		}
		o.mu.Lock()
		o.resources = append(o.resources, q.Get("resource"))
		o.authorizes++
		o.n++
		code := fmt.Sprintf("code-%d", o.n)
		o.codes[code] = q.Get("code_challenge")
		o.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := back.Query()
		bq.Set("code", code)
		bq.Set("state", q.Get("state"))
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		o.tokenReqs++
		o.resources = append(o.resources, r.PostForm.Get("resource"))
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			challenge, ok := o.codes[r.PostForm.Get("code")]
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
				writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(o.codes, r.PostForm.Get("code"))
		case "refresh_token":
			if !o.refresh[r.PostForm.Get("refresh_token")] {
				writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
				return
			}
			o.refreshes++
		default:
			writeJSON(w, 400, map[string]any{"error": "unsupported_grant_type"})
			return
		}
		o.n++
		at, rt := fmt.Sprintf("at-%d", o.n), fmt.Sprintf("rt-%d", o.n)
		o.tokens[at], o.refresh[rt] = true, true
		exp := o.expiresIn
		if exp == 0 {
			exp = 3600
		}
		writeJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "expires_in": exp})
	})
	return o
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (o *oauthServer) counts() (authorizes, refreshes, tokenReqs int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.authorizes, o.refreshes, o.tokenReqs
}

func TestOAuthLoginStoresTokensAndReusesThem(t *testing.T) {
	srv := startOAuthServer(t)
	dir := filepath.Join(t.TempDir(), "oauth")
	for _, typ := range []config.Type{config.TypeHTTP, config.TypeSSE} {
		t.Run(string(typ), func(t *testing.T) {
			u := map[config.Type]string{config.TypeHTTP: srv.URL, config.TypeSSE: srv.SSEURL}[typ]
			name := "remote-" + string(typ)
			// The login: the authorization server approves on its own.
			h := newHost(t, cfgOf(remote(name, typ, u)), &host.Options{OAuth: &host.OAuthOptions{Dir: dir, NoBrowser: true}})
			res := mustCall(t, h, "mcp__"+name+"__echo", map[string]any{"text": "authorized"})
			if !strings.Contains(textOf(res), "authorized") {
				t.Fatalf("echo = %q", textOf(res))
			}
			h.Close()
			file := host.TokenFile(dir, name)
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatalf("token file: %v", err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("token file mode = %v, want 0600", fi.Mode().Perm())
			}
			if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
				t.Errorf("token dir mode = %v, want 0700", di.Mode().Perm())
			}
			before, _, _ := srv.counts()

			// A later run that cannot ask anyone uses the stored token.
			h2 := newHost(t, cfgOf(remote(name, typ, u)), &host.Options{OAuth: &host.OAuthOptions{Dir: dir}})
			mustCall(t, h2, "mcp__"+name+"__echo", map[string]any{"text": "again"})
			if after, _, _ := srv.counts(); after != before {
				t.Errorf("the stored token was not used: %d new authorizations", after-before)
			}
		})
	}
}

func TestOAuthWithoutTokenNamesLogin(t *testing.T) {
	srv := startOAuthServer(t)
	h := newHost(t, cfgOf(remote("locked", config.TypeHTTP, srv.URL)), &host.Options{OAuth: &host.OAuthOptions{Dir: t.TempDir()}})
	st := waitState(t, h, "locked", host.StateError, 30*time.Second)
	if !strings.Contains(st.Reason, "switchboard mcp login locked") {
		t.Errorf("reason = %q, want it to name `switchboard mcp login locked`", st.Reason)
	}
	if a, _, _ := srv.counts(); a != 0 {
		t.Errorf("a host that cannot ask anyone started %d authorizations", a)
	}
}

func TestOAuthRefreshesAndSavesTheNewToken(t *testing.T) {
	srv := startOAuthServer(t)
	// Tokens that are already within oauth2's expiry margin when issued:
	// every use needs a refresh.
	srv.expiresIn = 2
	dir := t.TempDir()
	h := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), &host.Options{OAuth: &host.OAuthOptions{Dir: dir, NoBrowser: true}})
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "x"})
	h.Close()
	first, err := os.ReadFile(host.TokenFile(dir, "r"))
	if err != nil {
		t.Fatal(err)
	}
	authBefore, _, _ := srv.counts()

	h2 := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), &host.Options{OAuth: &host.OAuthOptions{Dir: dir}})
	mustCall(t, h2, "mcp__r__echo", map[string]any{"text": "y"})
	authAfter, refreshes, _ := srv.counts()
	if refreshes == 0 {
		t.Errorf("no refresh grant was made")
	}
	if authAfter != authBefore {
		t.Errorf("the refresh token was not used: %d new authorizations", authAfter-authBefore)
	}
	second, _ := os.ReadFile(host.TokenFile(dir, "r"))
	if string(first) == string(second) {
		t.Errorf("the refreshed token was not saved")
	}
}

// Metadata naming another resource must never get a token asked for that
// resource: the host ignores it (the SDK then treats the server as a
// 2025-03-26 one, whose own origin is its authorization server).
func TestOAuthRefusesResourceMismatch(t *testing.T) {
	srv := startOAuthServer(t)
	const foreign = "https://elsewhere.example/mcp"
	srv.resource = foreign
	h := newHost(t, cfgOf(remote("m", config.TypeHTTP, srv.URL)), &host.Options{OAuth: &host.OAuthOptions{Dir: t.TempDir(), NoBrowser: true}})
	h.WaitReady(ctxFor(t, 30*time.Second))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, r := range srv.resources {
		if r != srv.URL {
			t.Errorf("a request asked for resource %q; only the server's own URL %q may be asked for", r, srv.URL)
		}
	}
}

func TestOAuthTokenIsNotSentToAnotherURL(t *testing.T) {
	a := startOAuthServer(t)
	b := startOAuthServer(t)
	dir := t.TempDir()
	h := newHost(t, cfgOf(remote("s", config.TypeHTTP, a.URL)), &host.Options{OAuth: &host.OAuthOptions{Dir: dir, NoBrowser: true}})
	mustCall(t, h, "mcp__s__echo", map[string]any{"text": "x"})
	h.Close()
	// The same name now points elsewhere: the stored token must stay home.
	h2 := newHost(t, cfgOf(remote("s", config.TypeHTTP, b.URL)), &host.Options{OAuth: &host.OAuthOptions{Dir: dir}})
	waitState(t, h2, "s", host.StateError, 30*time.Second)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, got := range b.seen {
		if got != "" {
			t.Errorf("server b got Authorization %q, a token issued for server a", got)
		}
	}
}

func TestLogout(t *testing.T) {
	srv := startOAuthServer(t)
	dir := t.TempDir()
	h := newHost(t, cfgOf(remote("s", config.TypeHTTP, srv.URL)), &host.Options{OAuth: &host.OAuthOptions{Dir: dir, NoBrowser: true}})
	mustCall(t, h, "mcp__s__echo", map[string]any{"text": "x"})
	h.Close()
	if had, err := host.Logout(dir, "s"); !had || err != nil {
		t.Fatalf("Logout = %v, %v; want true, nil", had, err)
	}
	if _, err := os.Stat(host.TokenFile(dir, "s")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("token file still there: %v", err)
	}
	if had, err := host.Logout(dir, "s"); had || err != nil {
		t.Errorf("second Logout = %v, %v; want false, nil", had, err)
	}
}

func TestLoopbackReceivesTheRedirect(t *testing.T) {
	var shown string
	lb, err := host.NewLoopback(func(u string) {
		shown = u
		// The "browser": the authorization server redirects it back.
		go func() {
			resp, err := http.Get(lbRedirect(u))
			if err == nil {
				resp.Body.Close()
			}
		}()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	if !strings.HasPrefix(lb.RedirectURL, "http://127.0.0.1:") {
		t.Fatalf("RedirectURL = %q, want a loopback URL", lb.RedirectURL)
	}
	authURL := "https://as.example/authorize?redirect_uri=" + url.QueryEscape(lb.RedirectURL) + "&state=s1"
	back, err := lb.Authorize(ctxFor(t, 10*time.Second), "srv", authURL)
	if err != nil {
		t.Fatal(err)
	}
	if shown != authURL {
		t.Errorf("shown %q, want %q", shown, authURL)
	}
	if back.Query().Get("code") != "c1" || back.Query().Get("state") != "s1" {
		t.Errorf("redirect = %s, want code=c1 state=s1", back)
	}
}

// lbRedirect is where an approving authorization server sends the browser.
func lbRedirect(authURL string) string {
	u, _ := url.Parse(authURL)
	back, _ := url.Parse(u.Query().Get("redirect_uri"))
	back.RawQuery = url.Values{"code": {"c1"}, "state": {u.Query().Get("state")}}.Encode()
	return back.String()
}
