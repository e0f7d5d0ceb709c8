package console

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/policy"
)

// gatewayConsole mounts the fixture's front door at /ui as a gateway
// does: Login knows an admin's key and a member's, whose rules let it see
// server mine's tools only; revoked takes the member's key away.
func gatewayConsole(t *testing.T, f *fixture) (base string, revoked *atomic.Bool) {
	t.Helper()
	revoked = &atomic.Bool{}
	c, err := New(f.sb, Options{Audit: f.audit, Home: f.home, BasePath: "/ui",
		Login: func(_ context.Context, key string) (*Viewer, error) {
			switch {
			case key == "admin-key":
				return &Viewer{Name: "root", Admin: true}, nil
			case key == "member-key" && !revoked.Load():
				return &Viewer{Name: "bob", Sees: func(r policy.Request) bool { return r.Server == "mine" }}, nil
			}
			return nil, errors.New("unauthorized")
		}})
	if err != nil {
		t.Fatal(err)
	}
	return serveAtUI(t, c), revoked
}

// serveAtUI serves c at /ui/ of a test server until the test ends, and
// returns the server's URL.
func serveAtUI(t *testing.T, c *Console) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/ui/", c)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

type browserish struct {
	t    *testing.T
	c    *http.Client
	base string
}

func newBrowserish(t *testing.T, base string) *browserish {
	jar, _ := cookiejar.New(nil)
	return &browserish{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browserish) do(method, path, origin string, form url.Values) (int, string, http.Header) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out), resp.Header
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// Under a gateway the console signs in with a credential posted once to
// its login page (never in an address), from its own origin only; a
// member sees only the servers and tools its rules let it see and changes
// nothing; a revoked key ends its session at the next request; an admin
// sees and changes everything.
func TestConsoleGatewayLogin(t *testing.T) {
	f := newFixture(t)
	base, revoked := gatewayConsole(t, f)
	before, _ := os.ReadFile(f.settings)

	anon := newBrowserish(t, base)
	if code, _, h := anon.do("GET", "/ui/", "", nil); code != http.StatusSeeOther || h.Get("Location") != "/ui/login?next=%2Fui%2F" {
		t.Errorf("unsigned: %d to %q", code, h.Get("Location"))
	}
	if code, body, _ := anon.do("GET", "/ui/login", "", nil); code != http.StatusOK || !strings.Contains(body, `type="password" name="key"`) {
		t.Errorf("the login page: %d %s", code, body)
	}
	if code, body, _ := anon.do("POST", "/ui/login", base, url.Values{"key": {"guess"}}); code != http.StatusUnauthorized || !strings.Contains(body, "not accepted") {
		t.Errorf("a wrong key: %d %s", code, body)
	}
	if code, _, _ := anon.do("POST", "/ui/login", "http://evil.example", url.Values{"key": {"member-key"}}); code != http.StatusForbidden {
		t.Errorf("a sign-in posted by another site: %d", code)
	}
	if code, _, _ := anon.do("GET", "/ui/tools", "", nil); code != http.StatusSeeOther {
		t.Errorf("after refused sign-ins: %d", code)
	}

	member := newBrowserish(t, base)
	if code, _, h := member.do("POST", "/ui/login", base, url.Values{"key": {"member-key"}}); code != http.StatusSeeOther || h.Get("Location") != "/ui/" {
		t.Fatalf("the member's sign-in: %d", code)
	}
	code, page, _ := member.do("GET", "/ui/", "", nil)
	if code != http.StatusOK || !strings.Contains(page, `id="server-mine"`) || strings.Contains(page, `id="server-repo"`) ||
		strings.Contains(page, "/servers/action") || strings.Contains(page, "/permissions") || !strings.Contains(page, "bob (member)") {
		t.Errorf("the member's servers page: %d\n%s", code, page)
	}
	if code, tools, _ := member.do("GET", "/ui/tools", "", nil); code != http.StatusOK || !strings.Contains(tools, "mcp__mine__echo") || strings.Contains(tools, "mcp__repo__") || strings.Contains(tools, `action="/ui/call"`) {
		t.Errorf("the member's tools page: %d\n%s", code, tools)
	}
	if code, page, _ := member.do("GET", "/ui/playground?tool=mcp__mine__echo", "", nil); code != http.StatusOK || !strings.Contains(page, "input schema") && !strings.Contains(page, "Input schema") || strings.Contains(page, `action="/ui/call"`) {
		t.Errorf("the member's playground of mcp__mine__echo: %d\n%s", code, page)
	}
	if code, _, _ := member.do("GET", "/ui/playground?tool=mcp__repo__echo", "", nil); code != http.StatusNotFound {
		t.Errorf("the member's playground of a tool it does not see: %d", code)
	}
	if code, _, _ := member.do("GET", "/ui/permissions", "", nil); code != http.StatusForbidden {
		t.Errorf("the member's permissions page: %d", code)
	}
	csrf := csrfField.FindStringSubmatch(page)[1]
	for path, form := range map[string]url.Values{
		"/ui/permissions/add": {"list": {"allow"}, "rule": {"mcp__mine"}},
		"/ui/servers/approve": {"server": {"repo"}, "decision": {"approve"}},
		"/ui/servers/action":  {"server": {"mine"}, "action": {"pause"}},
		"/ui/changes/accept":  {"server": {"mine"}, "tool": {"echo"}},
		"/ui/call":            {"tool": {"mcp__mine__echo"}, "arg.text": {"hi"}},
	} {
		form.Set("csrf", csrf)
		if code, body, _ := member.do("POST", path, base, form); code != http.StatusForbidden || !strings.Contains(body, "not an admin") {
			t.Errorf("the member's %s: %d %s", path, code, body)
		}
	}
	if after, _ := os.ReadFile(f.settings); !bytes.Equal(before, after) {
		t.Errorf("a member changed the settings:\n%s", after)
	}
	revoked.Store(true)
	if code, _, h := member.do("GET", "/ui/", "", nil); code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/ui/login?") {
		t.Errorf("after the key was revoked: %d %q", code, h.Get("Location"))
	}

	admin := newBrowserish(t, base)
	if code, _, _ := admin.do("POST", "/ui/login", base, url.Values{"key": {"admin-key"}}); code != http.StatusSeeOther {
		t.Fatalf("the admin's sign-in: %d", code)
	}
	code, page, _ = admin.do("GET", "/ui/", "", nil)
	if code != http.StatusOK || !strings.Contains(page, `id="review-link-repo"`) {
		t.Errorf("the admin's servers page: %d\n%s", code, page)
	}
	if code, review, _ := admin.do("GET", "/ui/servers/review?server=repo", "", nil); code != http.StatusOK || !strings.Contains(review, `id="review-repo"`) || strings.Contains(review, "s3cr3t") {
		t.Errorf("the admin's review: %d\n%s", code, review)
	}
	csrf = csrfField.FindStringSubmatch(page)[1]
	code, body, h := admin.do("POST", "/ui/permissions/add", base, url.Values{"list": {"allow"}, "rule": {"mcp__mine"}, "csrf": {csrf}})
	if code != http.StatusSeeOther {
		t.Errorf("the admin's rule: %d %s", code, body)
	}
	// The page it goes back to says what happened; an address of somebody
	// else's with a message of its own (a "security notice" sending the
	// reader elsewhere, carried through the sign-in) says nothing.
	if _, back, _ := admin.do("GET", h.Get("Location"), "", nil); !strings.Contains(back, `class="message"`) {
		t.Errorf("the console's own message is not shown after %s:\n%s", h.Get("Location"), back)
	}
	forged := "/ui/?" + url.Values{"msg": {"Security notice: paste your key at https://evil.example/rotate"}}.Encode()
	for _, addr := range []string{forged, forged + "&sig=00", forged + "&sig="} {
		if _, page, _ := admin.do("GET", addr, "", nil); strings.Contains(page, "evil.example") {
			t.Errorf("%s shows the text of its address as the console's message", addr)
		}
	}
	if code, _, _ := admin.do("POST", "/ui/logout", base, url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Errorf("sign out: %d", code)
	}
	if code, _, _ := admin.do("GET", "/ui/", "", nil); code != http.StatusSeeOther {
		t.Errorf("after signing out: %d", code)
	}
	for _, want := range []string{`"principal":"bob","remote"`, `"action":"session","outcome":"opened with a gateway credential (member)"`,
		`"outcome":"refused: the credential was not accepted"`, `"outcome":"ended: its credential is no longer accepted"`,
		`"principal":"root","remote"`, `"action":"add rule","target":"allow mcp__mine"`} {
		if !strings.Contains(f.audit.String(), want) {
			t.Errorf("the audit log lacks %s:\n%s", want, f.audit.String())
		}
	}

	// A question's link, opened signed out: signed in, the browser goes
	// on to it — and never to another site.
	linked := newBrowserish(t, base)
	code, _, h = linked.do("GET", "/ui/asks?q=abc", "", nil)
	if code != http.StatusSeeOther {
		t.Fatalf("the link signed out: %d", code)
	}
	if _, body, _ := linked.do("GET", h.Get("Location"), "", nil); !strings.Contains(body, `name="next" value="/ui/asks?q=abc"`) {
		t.Errorf("the login page does not go on to the link:\n%s", body)
	}
	for next, want := range map[string]string{"/ui/asks?q=abc": "/ui/asks?q=abc", "//evil.example/ui/": "/ui/", "https://evil.example/ui/": "/ui/", "/elsewhere": "/ui/"} {
		if code, _, h := linked.do("POST", "/ui/login", base, url.Values{"key": {"admin-key"}, "next": {next}}); code != http.StatusSeeOther || h.Get("Location") != want {
			t.Errorf("signed in with next %q: %d to %q, want %q", next, code, h.Get("Location"), want)
		}
	}
}

// TestConsoleSignInClosed: while Options.SignInClosed gives a reason (a
// gateway that asks for no credential), the login page shows it instead of
// its form and a credential posted anyway is refused with it; once it
// gives none, the form is back and the same credential signs in.
func TestConsoleSignInClosed(t *testing.T) {
	f := newFixture(t)
	var open atomic.Bool
	const why = "This gateway asks for no credential; `switchboard ui` opens the console."
	c, err := New(f.sb, Options{Audit: f.audit, Home: f.home, BasePath: "/ui",
		SignInClosed: func() string {
			if open.Load() {
				return ""
			}
			return why
		},
		Login: func(_ context.Context, key string) (*Viewer, error) {
			if key == "admin-key" {
				return &Viewer{Name: "root", Admin: true}, nil
			}
			return nil, errors.New("unauthorized")
		}})
	if err != nil {
		t.Fatal(err)
	}
	base := serveAtUI(t, c)

	b := newBrowserish(t, base)
	if code, body, _ := b.do("GET", "/ui/login", "", nil); code != http.StatusOK || !strings.Contains(body, "`switchboard ui` opens the console") || strings.Contains(body, `name="key"`) {
		t.Errorf("the login page while closed: %d, want the reason and no form:\n%s", code, body)
	}
	if code, body, h := b.do("POST", "/ui/login", base, url.Values{"key": {"admin-key"}}); code != http.StatusForbidden || !strings.Contains(body, "`switchboard ui` opens the console") || h.Get("Set-Cookie") != "" {
		t.Errorf("a sign-in while closed: %d (cookie %q), want 403 with the reason:\n%s", code, h.Get("Set-Cookie"), body)
	}
	if code, _, _ := b.do("GET", "/ui/", "", nil); code != http.StatusSeeOther {
		t.Errorf("the console after a refused sign-in: %d, want a redirect to the login page", code)
	}
	open.Store(true)
	if code, body, _ := b.do("GET", "/ui/login", "", nil); code != http.StatusOK || !strings.Contains(body, `name="key"`) || strings.Contains(body, "opens the console") {
		t.Errorf("the login page once open: %d, want the form:\n%s", code, body)
	}
	if code, _, h := b.do("POST", "/ui/login", base, url.Values{"key": {"admin-key"}}); code != http.StatusSeeOther || h.Get("Location") != "/ui/" {
		t.Errorf("a sign-in once open: %d to %q", code, h.Get("Location"))
	}
	if code, _, _ := b.do("GET", "/ui/", "", nil); code != http.StatusOK {
		t.Errorf("the console once signed in: %d", code)
	}
}

// A session signed in with a gateway credential ends once unused for
// LoginIdle (a cookie left in a browser does not stand for the key for as
// long as the gateway runs), and one principal holds at most
// MaxLoginSessions: signing in in a loop ends its own sessions unused
// longest, not another principal's, and does not grow the console.
func TestConsoleLoginSessionsEnd(t *testing.T) {
	f := newFixture(t)
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC).UnixNano())
	c, err := New(f.sb, Options{Audit: f.audit, Home: f.home, BasePath: "/ui",
		Now: func() time.Time { return time.Unix(0, now.Load()) },
		Login: func(_ context.Context, key string) (*Viewer, error) {
			switch key {
			case "admin-key":
				return &Viewer{Name: "root", Admin: true}, nil
			case "member-key":
				return &Viewer{Name: "bob"}, nil
			}
			return nil, errors.New("unauthorized")
		}})
	if err != nil {
		t.Fatal(err)
	}
	base := serveAtUI(t, c)
	signIn := func(key string) *browserish {
		t.Helper()
		b := newBrowserish(t, base)
		if code, _, _ := b.do("POST", "/ui/login", base, url.Values{"key": {key}}); code != http.StatusSeeOther {
			t.Fatalf("sign-in: %d", code)
		}
		return b
	}
	signedIn := func(b *browserish) bool {
		t.Helper()
		code, _, _ := b.do("GET", "/ui/tools", "", nil)
		return code == http.StatusOK
	}
	advance := func(d time.Duration) { now.Add(int64(d)) }

	admin := signIn("admin-key")
	advance(LoginIdle - time.Minute)
	if !signedIn(admin) {
		t.Fatal("a session used within LoginIdle has ended")
	}
	advance(LoginIdle - time.Minute) // used a minute ago, in all longer than LoginIdle
	if !signedIn(admin) {
		t.Fatal("a session kept in use has ended")
	}
	advance(LoginIdle + time.Second)
	if signedIn(admin) {
		t.Error("a session unused for longer than LoginIdle still works")
	}
	if !strings.Contains(f.audit.String(), `"outcome":"ended: unused for longer than 12h0m0s"`) {
		t.Errorf("the audit log does not say why the session ended:\n%s", f.audit.String())
	}

	admin = signIn("admin-key")
	first := signIn("member-key")
	for range MaxLoginSessions + 10 {
		advance(time.Second)
		signIn("member-key")
	}
	c.mu.Lock()
	n := len(c.sessions)
	c.mu.Unlock()
	if n != MaxLoginSessions+1 {
		t.Errorf("%d sessions after many of bob's sign-ins, want %d of his and root's", n, MaxLoginSessions)
	}
	if signedIn(first) || !signedIn(admin) {
		t.Error("bob's sign-ins should have ended his oldest session and kept root's")
	}
}

// The session cookie is Secure when the console is reached over TLS (a
// browser then never sends it over plain HTTP), also on sign-out, and
// not over plain HTTP (where a Secure cookie would never come back).
func TestConsoleCookieSecureOverTLS(t *testing.T) {
	f := newFixture(t)
	c, err := New(f.sb, Options{Audit: f.audit, Home: f.home, BasePath: "/ui",
		Login: func(_ context.Context, key string) (*Viewer, error) {
			if key == "admin-key" {
				return &Viewer{Name: "root", Admin: true}, nil
			}
			return nil, errors.New("unauthorized")
		}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", c)
	tlsSrv := httptest.NewTLSServer(mux)
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(mux)
	t.Cleanup(plain.Close)

	cookieOf := func(h http.Header) *http.Cookie {
		t.Helper()
		for _, ck := range (&http.Response{Header: h}).Cookies() {
			if ck.Name == cookieName {
				return ck
			}
		}
		t.Fatalf("no %s cookie in %q", cookieName, h.Values("Set-Cookie"))
		return nil
	}
	b := newBrowserish(t, tlsSrv.URL)
	b.c.Transport = tlsSrv.Client().Transport
	code, _, h := b.do("POST", "/ui/login", tlsSrv.URL, url.Values{"key": {"admin-key"}})
	if code != http.StatusSeeOther {
		t.Fatalf("sign-in over TLS: %d", code)
	}
	if ck := cookieOf(h); !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Errorf("the cookie set over TLS: %s, want Secure, HttpOnly, SameSite=Strict", h.Get("Set-Cookie"))
	}
	_, page, _ := b.do("GET", "/ui/", "", nil)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("signed in over TLS, the console's page has no form:\n%s", page)
	}
	if code, _, h := b.do("POST", "/ui/logout", tlsSrv.URL, url.Values{"csrf": {m[1]}}); code != http.StatusSeeOther || !cookieOf(h).Secure {
		t.Errorf("sign-out over TLS: %d, cookie %q, want Secure", code, h.Get("Set-Cookie"))
	}

	p := newBrowserish(t, plain.URL)
	code, _, h = p.do("POST", "/ui/login", plain.URL, url.Values{"key": {"admin-key"}})
	if code != http.StatusSeeOther || cookieOf(h).Secure {
		t.Errorf("sign-in over plain HTTP: %d, cookie %q, want no Secure", code, h.Get("Set-Cookie"))
	}
}

// Under Options.Failures (the gateway's Auth), an address whose keys were
// refused too often at the login page gets 429 with Retry-After, its next
// key unchecked, even a good one; a good key from another address signs
// in at once.
func TestConsoleLoginFailuresLimited(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sources of 127.0.0.0/8 besides 127.0.0.1 are Linux's")
	}
	f := newFixture(t)
	c, err := New(f.sb, Options{Audit: f.audit, Home: f.home, BasePath: "/ui",
		Failures: gateway.NewAuth(&gateway.AuthOptions{SharedToken: "admin-key"}),
		Login: func(_ context.Context, key string) (*Viewer, error) {
			if key == "admin-key" {
				return &Viewer{Name: "root", Admin: true}, nil
			}
			return nil, gateway.ErrUnauthorized
		}})
	if err != nil {
		t.Fatal(err)
	}
	base := serveAtUI(t, c)
	from := func(ip string) *browserish {
		b := newBrowserish(t, base)
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		b.c.Transport = &http.Transport{DialContext: d.DialContext}
		return b
	}
	guesser := from("127.0.0.2")
	for i := range gateway.DefaultAuthFailures {
		if code, _, _ := guesser.do("POST", "/ui/login", base, url.Values{"key": {"guess"}}); code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d, want 401", i+1, code)
		}
	}
	code, body, h := guesser.do("POST", "/ui/login", base, url.Values{"key": {"admin-key"}})
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(body, "try again in") || h.Get("Set-Cookie") != "" {
		t.Errorf("the good key after %d wrong ones from the same address: %d (Retry-After %q) %s\nwant 429, unchecked", gateway.DefaultAuthFailures, code, h.Get("Retry-After"), body)
	}
	if code, _, _ := from("127.0.0.3").do("POST", "/ui/login", base, url.Values{"key": {"admin-key"}}); code != http.StatusSeeOther {
		t.Errorf("the good key from another address: %d, want signed in", code)
	}
	if !strings.Contains(f.audit.String(), `"outcome":"refused: too many credentials from this address were not accepted"`) {
		t.Errorf("the audit log does not say why:\n%s", f.audit.String())
	}
}
