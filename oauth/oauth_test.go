package oauth_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
	"github.com/switchboard-mcp/switchboard/oauth"
)

func TestOAuthLoginStoresTokensAndReusesThem(t *testing.T) {
	srv := testoauth.Start(t)
	dir := filepath.Join(t.TempDir(), "oauth")
	for _, typ := range []config.Type{config.TypeHTTP, config.TypeSSE} {
		t.Run(string(typ), func(t *testing.T) {
			u := map[config.Type]string{config.TypeHTTP: srv.URL, config.TypeSSE: srv.SSEURL}[typ]
			name := "remote-" + string(typ)
			// The login: the authorization server approves on its own.
			h := newHost(t, cfgOf(remote(name, typ, u)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
			res := mustCall(t, h, "mcp__"+name+"__echo", map[string]any{"text": "authorized"})
			if !strings.Contains(textOf(res), "authorized") {
				t.Fatalf("echo = %q", textOf(res))
			}
			h.Close()
			file := oauth.TokenFile(dir, name)
			checkStoreModes(t, dir, file, "token file")
			before, _, _ := srv.Counts()

			// A later run that cannot ask anyone uses the stored token.
			h2 := newHost(t, cfgOf(remote(name, typ, u)), opts(&oauth.Options{Dir: dir}, nil))
			mustCall(t, h2, "mcp__"+name+"__echo", map[string]any{"text": "again"})
			if after, _, _ := srv.Counts(); after != before {
				t.Errorf("the stored token was not used: %d new authorizations", after-before)
			}
		})
	}
}

func TestOAuthWithoutTokenAsksForLogin(t *testing.T) {
	srv := testoauth.Start(t)
	h := newHost(t, cfgOf(remote("locked", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: t.TempDir()}, nil))
	st := waitState(t, h, "locked", host.StateError, 30*time.Second)
	if !strings.Contains(st.Reason, "login required for locked") {
		t.Errorf("reason = %q, want a *LoginRequiredError for locked", st.Reason)
	}
	// The status carries the cause itself, for an application to branch on.
	var lr *oauth.LoginRequiredError
	if !errors.As(st.Err, &lr) || lr.Server != "locked" {
		t.Errorf("status Err = %#v, want a *LoginRequiredError for locked", st.Err)
	}
	if strings.Contains(st.Err.Error()+st.Reason, "switchboard mcp") {
		t.Errorf("the library names a CLI command: %q", st.Reason)
	}
	if a, _, _ := srv.Counts(); a != 0 {
		t.Errorf("a host that cannot ask anyone started %d authorizations", a)
	}
}

func TestOAuthRefreshesAndSavesTheNewToken(t *testing.T) {
	srv := testoauth.Start(t)
	// Tokens that are already within oauth2's expiry margin when issued:
	// every use needs a refresh.
	srv.ExpiresIn = 2
	dir := t.TempDir()
	h := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "x"})
	h.Close()
	first, err := os.ReadFile(oauth.TokenFile(dir, "r"))
	if err != nil {
		t.Fatal(err)
	}
	authBefore, _, _ := srv.Counts()

	h2 := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir}, nil))
	mustCall(t, h2, "mcp__r__echo", map[string]any{"text": "y"})
	authAfter, refreshes, _ := srv.Counts()
	if refreshes == 0 {
		t.Errorf("no refresh grant was made")
	}
	if authAfter != authBefore {
		t.Errorf("the refresh token was not used: %d new authorizations", authAfter-authBefore)
	}
	second, _ := os.ReadFile(oauth.TokenFile(dir, "r"))
	if string(first) == string(second) {
		t.Errorf("the refreshed token was not saved")
	}
}

// Metadata naming another resource must never get a token asked for that
// resource: the host ignores it (the SDK then treats the server as a
// 2025-03-26 one, whose own origin is its authorization server).
func TestOAuthRefusesResourceMismatch(t *testing.T) {
	srv := testoauth.Start(t)
	const foreign = "https://elsewhere.example/mcp"
	srv.Resource = foreign
	h := newHost(t, cfgOf(remote("m", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: t.TempDir(), NoBrowser: true}, nil))
	h.WaitReady(ctxFor(t, 30*time.Second))
	for _, r := range srv.Resources() {
		if r != srv.URL {
			t.Errorf("a request asked for resource %q; only the server's own URL %q may be asked for", r, srv.URL)
		}
	}
}

func TestOAuthTokenIsNotSentToAnotherURL(t *testing.T) {
	a := testoauth.Start(t)
	b := testoauth.Start(t)
	dir := t.TempDir()
	h := newHost(t, cfgOf(remote("s", config.TypeHTTP, a.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	mustCall(t, h, "mcp__s__echo", map[string]any{"text": "x"})
	h.Close()
	// The same name now points elsewhere: the stored token must stay home.
	h2 := newHost(t, cfgOf(remote("s", config.TypeHTTP, b.URL)), opts(&oauth.Options{Dir: dir}, nil))
	waitState(t, h2, "s", host.StateError, 30*time.Second)
	for _, got := range b.Seen() {
		if got != "" {
			t.Errorf("server b got Authorization %q, a token issued for server a", got)
		}
	}
}

// Requests refused together run one authorization, not one each.
func TestOAuthOneFlowForConcurrentRefusals(t *testing.T) {
	srv := testoauth.Start(t)
	h := newHost(t, cfgOf(remote("s", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: t.TempDir(), NoBrowser: true}, nil))
	mustCall(t, h, "mcp__s__echo", map[string]any{"text": "x"})
	srv.Revoke()
	before, _, _ := srv.Counts()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.Call(ctxFor(t, 30*time.Second), "mcp__s__echo", map[string]any{"text": fmt.Sprint(i)}); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if after, _, _ := srv.Counts(); after-before != 1 {
		t.Errorf("%d authorizations for one revoked token, want 1", after-before)
	}
}

func TestLogout(t *testing.T) {
	srv := testoauth.Start(t)
	dir := t.TempDir()
	h := newHost(t, cfgOf(remote("s", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	mustCall(t, h, "mcp__s__echo", map[string]any{"text": "x"})
	h.Close()
	if had, err := oauth.Logout(dir, "s"); !had || err != nil {
		t.Fatalf("Logout = %v, %v; want true, nil", had, err)
	}
	if _, err := os.Stat(oauth.TokenFile(dir, "s")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("token file still there: %v", err)
	}
	if had, err := oauth.Logout(dir, "s"); had || err != nil {
		t.Errorf("second Logout = %v, %v; want false, nil", had, err)
	}
}

func TestLoopbackReceivesTheRedirect(t *testing.T) {
	var shown string
	lb, err := oauth.NewLoopback(func(u string) {
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

// An answer that is not the browser's redirect of the authorization shown
// — another state (another local program that found the port first), a
// Host that is not the listener's (DNS rebinding), a POST — is refused
// and does not take the answer's place: the real redirect after it still
// completes the login. Before, the first request of any kind was the
// answer, and the login failed with "state mismatch".
func TestLoopbackIgnoresForeignAnswers(t *testing.T) {
	codes := make(chan []int, 1)
	lb, err := oauth.NewLoopback(func(u string) {
		go func() {
			real := lbRedirect(u)
			forged, _ := url.Parse(real)
			forged.RawQuery = url.Values{"code": {"attacker"}, "state": {"guessed"}}.Encode()
			var got []int
			do := func(req *http.Request) {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					got = append(got, 0)
					return
				}
				resp.Body.Close()
				got = append(got, resp.StatusCode)
			}
			req, _ := http.NewRequest(http.MethodGet, forged.String(), nil)
			do(req)
			req, _ = http.NewRequest(http.MethodGet, real, nil)
			req.Host = "evil.example"
			do(req)
			req, _ = http.NewRequest(http.MethodPost, real, nil)
			do(req)
			req, _ = http.NewRequest(http.MethodGet, real, nil)
			do(req)
			codes <- got
		}()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	authURL := "https://as.example/authorize?redirect_uri=" + url.QueryEscape(lb.RedirectURL) + "&state=s1"
	back, err := lb.Authorize(ctxFor(t, 10*time.Second), "srv", authURL)
	if err != nil {
		t.Fatal(err)
	}
	if back.Query().Get("code") != "c1" || back.Query().Get("state") != "s1" {
		t.Errorf("the answer taken = %s, want the real redirect's (code=c1 state=s1)", back)
	}
	if got := <-codes; fmt.Sprint(got) != "[400 400 400 200]" {
		t.Errorf("statuses of the forged, rebound, posted and real answers = %v, want [400 400 400 200]", got)
	}
}

// lbRedirect is where an approving authorization server sends the browser.
func lbRedirect(authURL string) string {
	u, _ := url.Parse(authURL)
	back, _ := url.Parse(u.Query().Get("redirect_uri"))
	back.RawQuery = url.Values{"code": {"c1"}, "state": {u.Query().Get("state")}}.Encode()
	return back.String()
}

// A 2025-03-26-era server (no protected-resource metadata) whose metadata
// at its origin root names a same-origin issuer with a path: accepted,
// with a warning naming the mismatch.
func TestOAuthLegacySameOriginIssuerAccepted(t *testing.T) {
	srv := testoauth.Start(t)
	srv.NoPRM = true
	issuer := strings.TrimSuffix(srv.URL, "/mcp") + "/oauth"
	srv.Issuer = issuer
	var logs syncBuffer
	h := newHost(t, cfgOf(remote("legacy", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: t.TempDir(), NoBrowser: true}, slog.New(slog.NewTextHandler(&logs, nil))))
	res := mustCall(t, h, "mcp__legacy__echo", map[string]any{"text": "old server"})
	if !strings.Contains(textOf(res), "old server") {
		t.Fatalf("echo = %q", textOf(res))
	}
	if a, _, _ := srv.Counts(); a == 0 {
		t.Error("no authorization ran")
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, issuer) {
		t.Errorf("no warning naming the issuer %s; logs:\n%s", issuer, out)
	}
}

// The refused mismatches: a cross-origin issuer on the legacy path, and
// any mismatch (even same-origin) once protected-resource metadata exists.
func TestOAuthIssuerMismatchRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noPRM  bool
		issuer func(origin string) string
	}{
		{"legacy cross-origin", true, func(string) string { return "https://attacker.example.com" }},
		{"legacy cross-port", true, func(origin string) string { return "http://127.0.0.1:1/oauth" }},
		{"PRM same-origin", false, func(origin string) string { return origin + "/oauth" }},
		{"PRM cross-origin", false, func(string) string { return "https://attacker.example.com" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testoauth.Start(t)
			srv.NoPRM = tc.noPRM
			srv.Issuer = tc.issuer(strings.TrimSuffix(srv.URL, "/mcp"))
			h := newHost(t, cfgOf(remote("m", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: t.TempDir(), NoBrowser: true}, nil))
			st := waitState(t, h, "m", host.StateError, 30*time.Second)
			if !strings.Contains(st.Reason, "issuer") {
				t.Errorf("reason = %q, want it to name the issuer mismatch", st.Reason)
			}
			if a, _, tok := srv.Counts(); a != 0 || tok != 0 {
				t.Errorf("metadata with issuer %q was used: %d authorizations, %d token requests", srv.Issuer, a, tok)
			}
		})
	}
}

// A token file others may read is not used: the host asks for a login
// instead, as with no token at all, and the warning names the file and its
// mode. A login then writes it 0600 again.
func TestOAuthTokenFileReadableByOthersIsNotUsed(t *testing.T) {
	srv := testoauth.Start(t)
	dir := filepath.Join(t.TempDir(), "oauth")
	h := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "authorized"})
	h.Close()
	file := oauth.TokenFile(dir, "r")
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	h2 := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir}, logger))
	st := waitState(t, h2, "r", host.StateError, 30*time.Second)
	if !strings.Contains(st.Reason, "login required for r") {
		t.Errorf("reason = %q, want it to ask for a login", st.Reason)
	}
	mu.Lock()
	got := logs.String()
	mu.Unlock()
	if !strings.Contains(got, "mode 0644") {
		t.Errorf("the log does not say why the token file was not used:\n%s", got)
	}
	h2.Close()

	h3 := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true, Fresh: true}, nil))
	mustCall(t, h3, "mcp__r__echo", map[string]any{"text": "again"})
	h3.Close()
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after a new login the token file is %v (%v), want mode 0600", fi.Mode(), err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// checkStoreModes checks that file of the OAuth store (what names it) is
// 0600 in a 0700 directory.
func checkStoreModes(t *testing.T, dir, file, what string) {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode = %v, want 0600", what, fi.Mode().Perm())
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("token dir mode = %v, want 0700", di.Mode().Perm())
	}
}

// A server that refuses the token its authorization server just issued
// gets one authorization, not one per retry (each a browser approval):
// the error says the fresh token was refused. So for a stored token the
// server refuses: one new authorization, then the same error. A token the
// server once accepted and later refuses is still authorized anew (see
// TestOAuthOneFlowForConcurrentRefusals).
func TestOAuthFreshTokenRefusedAuthorizesOnce(t *testing.T) {
	srv := testoauth.Start(t)
	srv.RefuseTokens = true
	dir := t.TempDir()
	h := newHost(t, cfgOf(remote("s", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	st := waitState(t, h, "s", host.StateError, 30*time.Second)
	var refused *oauth.TokenRefusedError
	if !errors.As(st.Err, &refused) || refused.Server != "s" ||
		!strings.Contains(st.Reason, "server s refused the token its authorization server had just issued (") {
		t.Errorf("status %q (%v); want the fresh token's refusal", st.Reason, st.Err)
	}
	if _, err := h.Call(ctxFor(t, 10*time.Second), "mcp__s__echo", map[string]any{"text": "x"}); err == nil {
		t.Error("a call reached a server that refuses every token")
	}
	if a, _, _ := srv.Counts(); a != 1 {
		t.Errorf("%d authorizations, want 1", a)
	}
	h.Close()

	// A login that works stores tokens; the server then refuses them
	// (another audience, say): one new authorization, and its token
	// refused too ends it.
	srv.RefuseTokens = false
	h = newHost(t, cfgOf(remote("s", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	mustCall(t, h, "mcp__s__echo", map[string]any{"text": "x"})
	h.Close()
	before, _, _ := srv.Counts()
	srv.RefuseTokens = true
	h = newHost(t, cfgOf(remote("s", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	st = waitState(t, h, "s", host.StateError, 30*time.Second)
	if !errors.As(st.Err, &refused) {
		t.Errorf("a refused stored token: %q (%v); want the fresh token's refusal after one authorization", st.Reason, st.Err)
	}
	if after, _, _ := srv.Counts(); after-before != 1 {
		t.Errorf("%d authorizations for a refused stored token, want 1", after-before)
	}
}
