package console

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testbrowser"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/trust"
)

// -console.screenshots rewrites docs/images/console-*.png from the
// end-to-end test's pages.
var screenshots = flag.Bool("console.screenshots", false, "write the console's screenshots to docs/images")

// TestMain lets this test binary double as the test servers and the
// process supervisor: the console's servers are real child processes.
func TestMain(m *testing.M) {
	proc.MaybeRunSupervisor()
	testserver.MaybeRun()
	os.Exit(m.Run())
}

// fixture is a real front door on a workspace with a repository server
// ("repo", needing approval) and one of the user's ("mine"), with the
// console served on loopback. newFixture's maps add servers of the
// user's; one named "repo" replaces the repository's.
type fixture struct {
	sb       *switchboard.Switchboard
	asks     *Asks
	console  *Console
	srv      *httptest.Server
	url      string // with the token
	home     string
	settings string
	audit    *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func server(ts string) map[string]any {
	cmd, args := testserver.Command(ts)
	return map[string]any{"command": cmd, "args": args}
}

func newFixture(t *testing.T, more ...map[string]any) *fixture {
	t.Helper()
	dir := t.TempDir()
	homeDir, home, ws := filepath.Join(dir, "user"), filepath.Join(dir, "user", ".switchboard"), filepath.Join(dir, "ws")
	servers := map[string]any{"mine": server("echo")}
	repo := server("echo")
	for _, m := range more {
		for k, v := range m {
			if k == "repo" {
				repo = v.(map[string]any) // the repository's server, in place of its echo
				continue
			}
			servers[k] = v
		}
	}
	writeJSON(t, filepath.Join(home, "mcp.json"), map[string]any{"mcpServers": servers})
	// A comment in the user's settings, which the console's edits keep.
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte("{\n  // mine\n  \"permissions\": {\"deny\": [\"mcp__mine__add\"]},\n  // The test servers are this test binary, in a /tmp the sandbox hides.\n  \"sandbox\": {\"project\": false},\n  \"toolChanges\": \"ask\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	repo["env"] = map[string]any{"API_TOKEN": "s3cr3t-value-never-shown"}
	writeJSON(t, filepath.Join(ws, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"repo": repo}})
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := &fixture{asks: NewAsks(), home: home, settings: filepath.Join(home, "settings.json"), audit: &syncBuffer{}}
	env := map[string]string{"HOME": homeDir, "PATH": os.Getenv("PATH")}
	sb, err := switchboard.Open(context.Background(), switchboard.Options{
		Workspace: ws, Home: home, HomeDir: homeDir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Permit: func(p *policy.Policy) host.Permit {
			return host.PolicyPermit(p, &host.PermitOptions{Asker: f.asks})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	f.sb = sb
	f.srv = httptest.NewUnstartedServer(nil)
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	hostport := strings.TrimPrefix(f.srv.URL, "http://")
	token := newSecret()
	f.console, err = New(sb, Options{Token: token, Hosts: []string{hostport}, Asks: f.asks, Audit: f.audit, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	f.asks.AllowRule = f.console.WriteAllow
	f.srv.Config.Handler = f.console
	f.url = f.srv.URL + "/?token=" + token
	// "mine" is up before the test begins: no page waits for a server
	// still starting, and a call is made from a page that listed it.
	f.waitState(t, "mine", host.StateConnected)
	return f
}

// browser starts Debian's chromium headless (testbrowser).
func browser(t *testing.T) context.Context { return testbrowser.Start(t) }

func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*screenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "images", "console-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitText reloads page until sel's text contains want, or the
// browser's deadline (the servers page reloads itself only while a
// server is starting: a server in error is tried again on its own).
func waitText(t *testing.T, ctx context.Context, page, sel, want string) {
	t.Helper()
	var got string
	for ctx.Err() == nil {
		if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		var err error
		if got, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel))); err != nil {
			t.Fatalf("%s %s: %v", page, sel, err)
		}
		if strings.Contains(got, want) {
			return
		}
	}
	t.Fatalf("%s: %s says %q, never %q", page, sel, got, want)
}

// The console end to end in a real browser: approve the repository's
// server on its review and see it connect; call a tool from the
// playground and answer its question in the page; add an allow rule and
// see the next call go through without a question.
func TestConsoleInBrowser(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	base := f.srv.URL

	// The token is exchanged for the cookie; the review is the terminal's.
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, base+"/", "#server-mine .state", "connected")
	shot(t, ctx, "servers")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#review-link-repo")), chromedp.WaitVisible(chromedp.CSS("#review-repo"))); err != nil {
		t.Fatal(err)
	}
	review, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#review-repo")))
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's settings turn the project sandbox off: the warning says so too.
	for _, want := range []string{`Project server "repo"`, "The repository wrote this definition, not you", "API_TOKEN=<redacted>", "from your environment it gets only:", "it runs with your rights", "not sandboxed: it can read and write everything you can"} {
		if !strings.Contains(review, want) {
			t.Errorf("the review lacks %q:\n%s", want, review)
		}
	}
	if strings.Contains(review, "s3cr3t") {
		t.Errorf("the review shows a secret value:\n%s", review)
	}
	shot(t, ctx, "review")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#approve-repo")), chromedp.WaitVisible(chromedp.CSS("#message"))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, base+"/", "#server-repo .state", "connected")
	if v := f.sb.Trust().Verdict(findServer(t, f, "repo")); !v.Allowed() {
		t.Errorf("the approval was not stored: %v", v.Status)
	}

	// A call with no rule asks; the question is answered in the page.
	call := func() {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/tools"),
			chromedp.Click(chromedp.CSS(`#open-mcp__mine__echo`)),
			chromedp.SendKeys(chromedp.CSS(`#tool-mcp__mine__echo input[name="arg.text"]`), "hello from the page"),
			chromedp.Click(chromedp.CSS(`#call-mcp__mine__echo`)), chromedp.WaitVisible(chromedp.CSS(`section.call`))); err != nil {
			t.Fatal(err)
		}
	}
	call()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`form.ask[data-tool="mcp__mine__echo"]`))); err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "question")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form.ask[data-tool="mcp__mine__echo"] button[value="once"]`))); err != nil {
		t.Fatal(err)
	}
	result, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`pre.result`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(result, "hello from the page") {
		t.Errorf("the enveloped result is %q", result)
	}

	// An allow rule, added in the page, written with the file's comments.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/permissions"),
		chromedp.SendKeys(chromedp.CSS("#rule"), "mcp__mine__echo"),
		chromedp.Click(chromedp.CSS("#add")), chromedp.WaitVisible(chromedp.CSS("#message"))); err != nil {
		t.Fatal(err)
	}
	matches, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("tr.rule")].filter(r => r.querySelector("code").textContent == "mcp__mine__echo").map(r => r.querySelector("td.matches").textContent).join("|")`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(matches, "mcp__mine__echo") {
		t.Errorf("the new rule matches %q, not the tool it names", matches)
	}
	shot(t, ctx, "permissions")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/permissions?tool=mcp__mine__add")); err != nil {
		t.Fatal(err)
	}
	if why, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#why"))); err != nil || !strings.HasPrefix(why, "deny") || !strings.Contains(why, "mcp__mine__add") {
		t.Errorf("why mcp__mine__add: %q %v", why, err)
	}
	b, _ := os.ReadFile(f.settings)
	if !strings.Contains(string(b), "// mine") || !strings.Contains(string(b), `"mcp__mine__echo"`) {
		t.Errorf("settings after the rule:\n%s", b)
	}
	asked := f.asks.asked()
	call()
	for ctx.Err() == nil {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/calls")); err != nil {
			t.Fatal(err)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("pre.result").length`))
		if err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
	}
	if got := f.asks.asked(); got != asked {
		t.Errorf("the call after the allow rule was asked about (%d questions, %d before)", got, asked)
	}
	shot(t, ctx, "calls")
	for _, want := range []string{`"action":"approve","target":"repo"`, `"action":"answer","target":"mcp__mine__echo","outcome":"once"`, `"action":"add rule","target":"allow mcp__mine__echo"`} {
		if !strings.Contains(f.audit.String(), want) {
			t.Errorf("the audit log lacks %s:\n%s", want, f.audit.String())
		}
	}
}

func findServer(t *testing.T, f *fixture, name string) *config.ResolvedServer {
	t.Helper()
	rs := find(f.sb.Config(), name)
	if rs == nil {
		t.Fatalf("no server %q", name)
	}
	return rs
}

// A page of another site posting to the console, in the same browser as
// a signed-in console, changes nothing; nor does a request under another
// Host (DNS rebinding), nor one whose Origin or CSRF token is not the
// console's.
func TestConsoleRefusesCrossSiteAndRebinding(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	before, _ := os.ReadFile(f.settings)

	// The attacker's page: another origin, a form posting to the console
	// (a person lured into pressing its button).
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<form id="f" method="post" action="%s/permissions/add"><input name="list" value="allow"><input name="rule" value="mcp__mine"><button id="go">Win a prize</button></form>`, f.srv.URL)
	}))
	defer evil.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url), chromedp.WaitVisible(chromedp.CSS("nav"))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(evil.URL)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#go"))); err != nil {
		t.Fatal(err)
	}
	var body string
	last := ""
	for ctx.Err() == nil {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if navigating(err) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if loc != last {
			t.Logf("at %s", loc)
			last = loc
		}
		if strings.HasPrefix(loc, f.srv.URL) {
			if body, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body"))); navigating(err) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if !strings.Contains(body, "not authenticated") && !strings.Contains(body, "change refused") {
		t.Errorf("the cross-site post was answered with %q", body)
	}
	if after, _ := os.ReadFile(f.settings); !bytes.Equal(before, after) {
		t.Errorf("a cross-site post changed the settings:\n%s", after)
	}

	// The same checks without the browser's help (SameSite): a client
	// holding the session cookie, posting from elsewhere or without the
	// form's token, or under a rebinding Host.
	s := signIn(t, f)
	c := s.c
	post := func(origin, host string, form url.Values) int {
		req, _ := http.NewRequest("POST", f.srv.URL+"/permissions/add", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	csrf := s.csrf
	good := url.Values{"list": {"allow"}, "rule": {"mcp__mine"}, "csrf": {csrf}}
	if code := post("http://evil.example", "", good); code != http.StatusForbidden {
		t.Errorf("a post from another Origin: %d", code)
	}
	if code := post(f.srv.URL, "", url.Values{"list": {"allow"}, "rule": {"mcp__mine"}}); code != http.StatusForbidden {
		t.Errorf("a post without the CSRF token: %d", code)
	}
	rebound := "rebind.example:" + mustURL(f.srv.URL).Port()
	if code := post("http://"+rebound, rebound, good); code != http.StatusMisdirectedRequest {
		t.Errorf("a post under a rebinding Host: %d", code)
	}
	if after, _ := os.ReadFile(f.settings); !bytes.Equal(before, after) {
		t.Errorf("a refused post changed the settings:\n%s", after)
	}
	// A rule that would have no effect is refused with its reason.
	if code := post(f.srv.URL, "", url.Values{"list": {"allow"}, "rule": {"mcp__nosuch__tool"}, "csrf": {csrf}}); code != http.StatusBadRequest {
		t.Errorf("a rule naming no server: %d", code)
	}
	// The real thing goes through, and CSP forbids inline script.
	if code := post(f.srv.URL, "", good); code != http.StatusSeeOther {
		t.Errorf("the console's own post: %d", code)
	}
	resp, err := c.Get(f.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
}

// csrfOf reads the CSRF token of c's session from a console page, as
// the console's own forms carry it.
func csrfOf(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	resp, err := c.Get(base + "/permissions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no CSRF token on the page (%s)", resp.Status)
	}
	return string(m[1])
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// signedIn is an HTTP client with a console session, posting as the
// console's own forms do.
type signedIn struct {
	t    *testing.T
	c    *http.Client
	base string
	csrf string
}

func signIn(t *testing.T, f *fixture) *signedIn {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// Each sign-in is a browser of its own: a new one-time link.
	resp, err := c.Get(f.srv.URL + "/?token=" + f.console.NewToken())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(jar.Cookies(mustURL(f.srv.URL))) == 0 {
		t.Fatalf("the token was not exchanged for a cookie: %s", resp.Status)
	}
	return &signedIn{t: t, c: c, base: f.srv.URL, csrf: csrfOf(t, c, f.srv.URL)}
}

func (s *signedIn) post(path string, form url.Values) (int, string) {
	s.t.Helper()
	form.Set("csrf", s.csrf)
	req, _ := http.NewRequest("POST", s.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	resp, err := s.c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (s *signedIn) get(path string) (int, string) {
	s.t.Helper()
	resp, err := s.c.Get(s.base + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Bad input gets a clear message and changes nothing: a review answered
// for a definition the page did not show, an approval answered twice (two
// browsers), a malformed decision, a malformed rule, a rule already gone,
// a question answered twice, arguments that are not JSON.
func TestConsoleBadInput(t *testing.T) {
	f := newFixture(t)
	a, b := signIn(t, f), signIn(t, f) // two browsers
	repo := findServer(t, f, "repo")
	fp := trust.Fingerprint(repo.Written)

	if code, body := a.post("/servers/approve", url.Values{"server": {"repo"}, "decision": {"approve"}, "fingerprint": {"0000"}}); code != http.StatusConflict || !strings.Contains(body, "changed since this page showed it") {
		t.Errorf("an approval of another definition: %d %s", code, body)
	} else if !strings.Contains(body, `/servers/review?server=repo">Back to the review</a>`) {
		// The review to read again, not the servers page.
		t.Errorf("the refusal does not lead back to the review: %s", body)
	}
	if f.sb.Trust().Verdict(repo).Allowed() {
		t.Fatal("an approval of another definition was stored")
	}
	if code, body := a.post("/servers/approve", url.Values{"server": {"repo"}, "decision": {"maybe"}, "fingerprint": {fp}}); code != http.StatusBadRequest || !strings.Contains(body, "nothing was changed") {
		t.Errorf("a malformed decision: %d %s", code, body)
	}
	if code, _ := a.post("/servers/approve", url.Values{"server": {"repo"}, "decision": {"approve"}, "fingerprint": {fp}}); code != http.StatusSeeOther {
		t.Fatalf("the approval: %d", code)
	}
	if code, body := b.post("/servers/approve", url.Values{"server": {"repo"}, "decision": {"deny"}, "fingerprint": {fp}}); code != http.StatusConflict || !strings.Contains(body, "not waiting for approval") {
		t.Errorf("the same review answered again in another browser: %d %s", code, body)
	}
	if !f.sb.Trust().Verdict(repo).Allowed() || f.sb.Trust().Denied("repo") {
		t.Error("the second answer changed the first")
	}

	before, _ := os.ReadFile(f.settings)
	for _, rule := range []string{"mcp__mine__echo(", "mcp__*"} {
		if code, body := a.post("/permissions/add", url.Values{"list": {"allow"}, "rule": {rule}}); code != http.StatusBadRequest || !strings.Contains(body, "would have no effect") {
			t.Errorf("allow %q: %d %s", rule, code, body)
		}
	}
	if code, body := a.post("/permissions/remove", url.Values{"rule": {"mcp__mine__nothing"}}); code != http.StatusConflict || !strings.Contains(body, "not in your settings") {
		t.Errorf("removing a rule that is not there: %d %s", code, body)
	}
	if after, _ := os.ReadFile(f.settings); !bytes.Equal(before, after) {
		t.Errorf("refused rule edits changed the settings:\n%s", after)
	}

	if code, body := a.post("/call", url.Values{"tool": {"mcp__mine__echo"}, "json": {"{not json"}}); code != http.StatusBadRequest || !strings.Contains(body, "not a JSON object") {
		t.Errorf("arguments that are not JSON: %d %s", code, body)
	}
	if code, _ := a.post("/call", url.Values{"tool": {"mcp__mine__echo"}, "arg.text": {"hi"}}); code != http.StatusSeeOther {
		t.Fatalf("the call: %d", code)
	}
	q := f.question()
	if code, _ := a.post("/asks/answer", url.Values{"id": {q[0].ID}, "answer": {"once"}}); code != http.StatusSeeOther {
		t.Errorf("the answer: %d", code)
	}
	if code, body := b.post("/asks/answer", url.Values{"id": {q[0].ID}, "answer": {"deny"}}); code != http.StatusConflict || !strings.Contains(body, "no longer waiting") {
		t.Errorf("the question answered again in another browser: %d %s", code, body)
	}
	for _, want := range []string{`"outcome":"refused: the definition of \"repo\" changed`, `"action":"answer","target":"mcp__mine__echo","outcome":"once"`} {
		if !strings.Contains(f.audit.String(), want) {
			t.Errorf("the audit log lacks %s:\n%s", want, f.audit.String())
		}
	}
}

// "Always" answered in the page writes the tool's exact allow rule to the
// workspace's local settings, as the terminal's always does, and the call
// runs.
func TestConsoleAlwaysWritesTheRule(t *testing.T) {
	f := newFixture(t)
	a := signIn(t, f)
	if code, _ := a.post("/call", url.Values{"tool": {"mcp__mine__echo"}, "arg.text": {"hi"}}); code != http.StatusSeeOther {
		t.Fatalf("the call: %d", code)
	}
	q := f.question()
	if code, body := a.post("/asks/answer", url.Values{"id": {q[0].ID}, "answer": {"always"}}); code != http.StatusSeeOther {
		t.Fatalf("the answer: %d %s", code, body)
	}
	b, _ := os.ReadFile(f.settings)
	if !strings.Contains(string(b), `"projects"`) || !strings.Contains(string(b), `"allow": ["mcp__mine__echo"]`) || !strings.Contains(string(b), "// mine") {
		t.Errorf("settings after always:\n%s", b)
	}
	if d := f.sb.Policy().Decide(policy.Request{Tool: "mcp__mine__echo", Server: "mine", ToolName: "echo"}); d.Action != policy.Allow {
		t.Errorf("the rule is not in force: %s %s", d.Action, d.Reason)
	}
	if !strings.Contains(f.audit.String(), `"outcome":"always, allow rule written to `) {
		t.Errorf("audit:\n%s", f.audit.String())
	}
}

// With several questions waiting, every page still gives each element an
// id of its own (a label's for= names one): two calls asking at once
// make two forms, each with its own buttons.
func TestConsoleQuestionIDsAreUnique(t *testing.T) {
	f := newFixture(t)
	a := signIn(t, f)
	for _, text := range []string{"one", "two"} {
		if code, _ := a.post("/call", url.Values{"tool": {"mcp__mine__echo"}, "arg.text": {text}}); code != http.StatusSeeOther {
			t.Fatalf("the call: %d", code)
		}
	}
	f.questions(2)
	for _, page := range []string{"/", "/asks", "/tools", "/calls", "/permissions", "/changes"} {
		code, body := a.get(page)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", page, code)
		}
		if n := strings.Count(body, `class="ask"`); n != 2 {
			t.Errorf("%s shows %d questions, want 2", page, n)
		}
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(`\sid="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			if ids[m[1]] {
				t.Errorf("%s: id %q is used twice", page, m[1])
			}
			ids[m[1]] = true
		}
		for _, m := range regexp.MustCompile(`\sfor="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			if !ids[m[1]] {
				t.Errorf("%s: a label is for %q, which no element is", page, m[1])
			}
		}
	}
}

// questions waits until n questions are pending and returns them.
func (f *fixture) questions(n int) []Question {
	for {
		changed := f.asks.waitChange() // taken first: no change is missed
		if q := f.asks.Pending(); len(q) >= n {
			return q
		}
		<-changed
	}
}

// question waits for a question to be asked (the playground's call,
// once it reaches the rules) and returns the questions pending.
func (f *fixture) question() []Question { return f.questions(1) }

// The printed address opens one browser session: a second visit with the
// same token (a copy in a history or on a shared screen) is refused, and
// a new token opens the next one.
func TestConsoleTokenOpensOnce(t *testing.T) {
	f := newFixture(t)
	visit := func(u string) (*http.Response, *cookiejar.Jar) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp, jar
	}
	if resp, jar := visit(f.url); resp.StatusCode != http.StatusSeeOther || len(jar.Cookies(mustURL(f.srv.URL))) == 0 {
		t.Fatalf("first visit: %s, want a session", resp.Status)
	}
	if resp, jar := visit(f.url); resp.StatusCode != http.StatusUnauthorized || len(jar.Cookies(mustURL(f.srv.URL))) != 0 {
		t.Fatalf("second visit with the used token: %s, want 401 and no session", resp.Status)
	}
	if resp, _ := visit(f.srv.URL + "/?token=" + f.console.NewToken()); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("a new token: %s, want a session", resp.Status)
	}
}

// navigating reports whether err is the browser's answer to a script run
// while the page was being replaced (the form's post under way): the
// question is asked again, not failed.
func navigating(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Inspected target navigated or closed")
}

// A server still connecting (one that waits for a file never made) hides
// nobody else's tools: the playground lists the connected server's tools
// and says which server is not there yet, and the permissions page still
// shows what a rule applies to.
func TestConsoleSlowServerHidesNoTools(t *testing.T) {
	ctx := browser(t)
	slow := server("slow-start")
	slow["args"] = append(slow["args"].([]string), "-until-file", filepath.Join(t.TempDir(), "never"))
	f := newFixture(t, map[string]any{"slow": slow})
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url), chromedp.Navigate(f.srv.URL+"/tools")); err != nil {
		t.Fatal(err)
	}
	page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "mcp__mine__echo") || !strings.Contains(page, "slow: still connecting") || strings.Contains(page, "deadline") {
		t.Errorf("the playground, with a server still connecting:\n%s", page)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+"/permissions")); err != nil {
		t.Fatal(err)
	}
	matches, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("tr.rule td.matches")))
	if err != nil || !strings.Contains(matches, "mcp__mine__add") {
		t.Errorf("the deny rule of mcp__mine__add matches %q (%v)", matches, err)
	}
}

// The servers page counts a connected server's tools on the first visit,
// as switchboard status does, rather than 0 until another page listed
// them.
func TestConsoleServersCountTools(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, f.srv.URL+"/", "#server-mine .state", "connected")
	tools, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#server-mine td.tools")))
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := strings.Cut(tools, " "); n == "" || n == "0" {
		t.Errorf("the servers page counts %q tools of a connected echo server", tools)
	}
}

// In a narrow window (a phone, a split screen) the servers page still
// fits: the name signed in stays on the dark bar where its light text is
// readable, and long paths wrap instead of pushing the table, with its
// buttons, off the side of the page.
//
// At a phone's 375 pixels each server is a card whose name and state are
// whole on its first line, not six columns of a few letters each ("broke",
// "n"; "connec", "ted").
func TestConsoleNarrowWindow(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, map[string]any{"broken": server("exit-init")})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(375, 800), chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, f.srv.URL+"/", "#server-mine .state", "connected")
	waitText(t, ctx, f.srv.URL+"/", "#server-broken .state", "error")
	// Each name and state: on the page, drawn, and on one line.
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("tr[id^=server-]")].flatMap(r => [r.querySelector("b"), r.querySelector(".state")].map(e => {
		const b = e.getBoundingClientRect(), rg = document.createRange(); rg.selectNodeContents(e);
		const lines = new Set([...rg.getClientRects()].map(q => Math.round(q.top))).size;
		return (b.width > 0 && b.left >= 0 && b.right <= document.documentElement.clientWidth && lines == 1) ? "" : r.id + ": " + e.textContent + " at " + b.left + ".." + b.right + " on " + lines + " lines";
	})).filter(s => s)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("at 375 pixels, names and states not shown whole: %q", bad)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ NavBottom, WhoBottom, Width, ScrollWidth float64 }](`({NavBottom: document.querySelector("nav").getBoundingClientRect().bottom,
		WhoBottom: document.querySelector("#who").getBoundingClientRect().bottom,
		Width: document.documentElement.clientWidth, ScrollWidth: document.documentElement.scrollWidth})`))
	if err != nil {
		t.Fatal(err)
	}
	if got.WhoBottom > got.NavBottom {
		t.Errorf("the name signed in is below the bar (at %v, the bar ends at %v): light text on a light page", got.WhoBottom, got.NavBottom)
	}
	if got.ScrollWidth > got.Width {
		t.Errorf("the servers page is %v pixels wide in a window of %v", got.ScrollWidth, got.Width)
	}
	// The playground (its forms open) and the permissions page fit too.
	for _, page := range []string{"/tools", "/playground?tool=mcp__mine__echo", "/permissions"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+page)); err != nil {
			t.Fatal(err)
		}
		w, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`document.querySelectorAll("details").forEach(d => d.open = true),
			[document.documentElement.clientWidth, document.documentElement.scrollWidth]`))
		if err != nil {
			t.Fatal(err)
		}
		if w[1] > w[0] {
			t.Errorf("%s is %v pixels wide in a window of %v", page, w[1], w[0])
		}
	}
}

// A server in error says, as switchboard status does, when it is tried
// again: the console's newcomer sees it will come back by itself.
func TestConsoleServerInErrorSaysNextTry(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, map[string]any{"broken": server("exit-init")})
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, f.srv.URL+"/", "#server-broken .state", "error")
	why, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#server-broken .why")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(why, "cannot open database") || !strings.Contains(why, "next try in") && !strings.Contains(why, "trying again now") {
		t.Errorf("a server in error says %q", why)
	}
}

// A server that is not running has no tool count to show: "-", as status
// prints, not "0 (0)", which reads as a server with no tools.
func TestConsoleUnknownToolCountIsADash(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	tools, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#server-repo td.tools")))
	if err != nil {
		t.Fatal(err)
	}
	if tools != "-" {
		t.Errorf("the server waiting for approval has %q tools", tools)
	}
}

// A refused change says why and leads back to the page it came from; a
// playground call with arguments that are not JSON stays on the tool's
// playground, with what was typed still in its form.
func TestConsoleRefusalLeadsBack(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url), chromedp.Navigate(f.srv.URL+"/tools"),
		chromedp.Click(chromedp.CSS(`#open-mcp__mine__echo`)),
		chromedp.SendKeys(chromedp.CSS(`#tool-mcp__mine__echo input[name="arg.text"]`), "typed <b>by hand</b>"),
		chromedp.SendKeys(chromedp.CSS(`#tool-mcp__mine__echo textarea[name="json"]`), "{not json"),
		chromedp.Click(chromedp.CSS(`#call-mcp__mine__echo`)), chromedp.WaitVisible(chromedp.CSS("#message"))); err != nil {
		t.Fatal(err)
	}
	if msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#message"))); err != nil || !strings.Contains(msg, "not a JSON object") || !strings.Contains(msg, "nothing was called") {
		t.Errorf("the refusal says %q (%v)", msg, err)
	}
	type form struct{ Text, JSON string }
	got, err := chromedp.Run(ctx, chromedp.Evaluate[form](`({Text: (document.querySelector('#tool-mcp__mine__echo input[name="arg.text"]') || {}).value,
		JSON: (document.querySelector('#tool-mcp__mine__echo textarea[name="json"]') || {}).value})`))
	if want := (form{"typed <b>by hand</b>", "{not json"}); err != nil || got != want {
		t.Errorf("after the refused call the playground's form holds %+v (%v), want %+v", got, err, want)
	}
	if !strings.Contains(f.audit.String(), `"action":"call","target":"mcp__mine__echo","outcome":"refused: `) {
		t.Errorf("the refused call is not audited:\n%s", f.audit.String())
	}
	// A tool not listed (any more) leads back to the list.
	if err := chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+"/playground?tool=mcp__gone__echo")); err != nil {
		t.Fatal(err)
	}
	back, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("main a#back") || {}).href || ""`))
	if err != nil || !strings.HasSuffix(back, "/tools") {
		t.Errorf("a playground of no tool leads back to %q (%v), not the tools", back, err)
	}
}

// Explain, asked about a name no listed tool has (the tool's own name
// without its server), says so rather than only "ask" and a rule that
// would match nothing.
func TestConsoleExplainUnknownTool(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url), chromedp.Navigate(f.srv.URL+"/permissions?tool=echo")); err != nil {
		t.Fatal(err)
	}
	page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, `No tool named "echo" is listed now`) || !strings.Contains(page, "mcp__mine__echo") {
		t.Errorf("explaining an unknown tool name:\n%s", page)
	}
}

// With a keyboard and a screen reader, the servers page's buttons name
// their server: "Pause mine", not one "Pause" among many.
func TestConsoleServerButtonsNameTheirServer(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("main button, main a.button")].map(b => b.getAttribute("aria-label") || b.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("two buttons are both called %q: %q", n, names)
		}
		seen[n] = true
	}
	if !seen["Pause mine"] || !seen["Read the review of repo"] {
		t.Errorf("the buttons are %q", names)
	}
}

// Each server's row offers only the buttons that do something in its
// state: Resume for a paused server, Pause for a connected one, Retry
// (and Pause, which stops the tries) for one in error, none for one
// waiting for approval (Approve is its button).
func TestConsoleServerButtonsFitTheirState(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, map[string]any{"broken": server("exit-init"), "idle": server("echo")})
	if err := f.sb.Host().Pause("idle"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, f.srv.URL+"/", "#server-mine .state", "connected")
	waitText(t, ctx, f.srv.URL+"/", "#server-broken .state", "error")
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll("tr[id^=server-]")].map(r =>
		[r.id.slice(7) + " " + r.querySelector(".state").textContent,
		 [...r.querySelectorAll("button[name=action]")].map(b => b.textContent).join(" ")]))`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"mine connected":      "Pause",
		"idle paused":         "Resume",
		"broken error":        "Retry Pause",
		"repo needs-approval": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the servers' buttons (-want +got):\n%s", diff)
	}
	// A row with one short button still shows its word whole, not
	// broken over lines ("Pa", "us", "e") in a column squeezed to it.
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.servers button")].filter(b => {
		const r = document.createRange(); r.selectNodeContents(b); return r.getClientRects().length > 1 }).map(b => b.getAttribute("aria-label"))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) > 0 {
		t.Errorf("these buttons' words are broken over lines: %q", broken)
	}
}

// releasing is the fixture's front door, but the first time the console
// asks it for the host (to list the tools) it releases the slow server
// (creates its file) and waits until every server is settled: a page
// that waits for a server still starting would then find it up and list
// its tools; one that does not wait has already said it is starting.
type releasing struct {
	*switchboard.Switchboard
	once    *sync.Once
	release func()
}

func (r releasing) Host() *host.Host {
	r.once.Do(r.release)
	return r.Switchboard.Host()
}

// slowFixture is a fixture with a server "slow" that starts only when
// the console first asks for the host after the sign-in, and the client
// signed in.
func slowFixture(t *testing.T) (*fixture, *signedIn) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "go")
	slow := server("slow-start")
	slow["args"] = append(slow["args"].([]string), "-until-file", file)
	f := newFixture(t, map[string]any{"slow": slow})
	release := func() {
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Error(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if !f.sb.Host().WaitReady(ctx) {
			t.Error("the slow server did not come up once released")
		}
	}
	a := signIn(t, f) // its pages list the tools too
	f.console.front = releasing{Switchboard: f.sb, once: &sync.Once{}, release: release}
	return f, a
}

// A page does not wait for a server still starting (the host would wait
// 5 s on every page, and for one that never answers, until its startup
// timeout): the playground lists the other servers' tools at once and
// says which server is still connecting; the servers page shows it
// without a tool count and reloads itself until it is up.
func TestConsolePagesDoNotWaitForAStartingServer(t *testing.T) {
	t.Run("tools", func(t *testing.T) {
		_, a := slowFixture(t)
		code, page := a.get("/tools")
		if code != http.StatusOK {
			t.Fatalf("/tools: %d", code)
		}
		if !strings.Contains(page, "mcp__mine__echo") || !strings.Contains(page, "slow: still connecting") || strings.Contains(page, "mcp__slow__echo") {
			t.Errorf("the playground, with a server still starting, waited for it or hid the others:\n%s", page)
		}
	})
	t.Run("servers", func(t *testing.T) {
		_, a := slowFixture(t)
		code, page := a.get("/")
		if code != http.StatusOK {
			t.Fatalf("/: %d", code)
		}
		row := regexp.MustCompile(`(?s)<tr id="server-slow".*?</tr>`).FindString(page)
		if !regexp.MustCompile(`<td class="tools"[^>]*>-</td>`).MatchString(row) {
			t.Errorf("the servers page waited for the starting server (its tools were counted):\n%s", row)
		}
	})
}

// waitState waits until server name is in state want.
func (f *fixture) waitState(t *testing.T, name string, want host.State) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		for _, st := range f.sb.Status() {
			if st.Name == name && st.State == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never got to %s: %+v", name, want, f.sb.Status())
		}
	}
}

// After Approve or Resume (as after Retry) the servers page shows how it
// ended without a reload by hand: while the server starts, the page
// reloads itself (no script: a meta refresh), and once it is up the page
// shows it connected and stops reloading.
func TestConsoleServersPageFollowsAStart(t *testing.T) {
	for _, tc := range []struct {
		name, server, button string
		paused               bool
	}{
		{"approve", "repo", "#review-link-repo", false},
		{"resume", "slow", `button[aria-label="Resume slow"]`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := browser(t)
			file := filepath.Join(t.TempDir(), "go")
			slow := server("slow-start")
			slow["args"] = append(slow["args"].([]string), "-until-file", file)
			f := newFixture(t, map[string]any{tc.server: slow})
			if tc.paused {
				if err := f.sb.Host().Pause(tc.server); err != nil {
					t.Fatal(err)
				}
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(f.url), chromedp.Click(chromedp.CSS(tc.button))); err != nil {
				t.Fatal(err)
			}
			if tc.name == "approve" { // on the review's page
				if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#approve-repo"))); err != nil {
					t.Fatal(err)
				}
			}
			if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#message"))); err != nil {
				t.Fatal(err)
			}
			state, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#server-"+tc.server+" .state")))
			if err != nil && !navigating(err) {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			t.Logf("after %s the page says %q", tc.name, state)
			// No navigation from here: only the page's own reloads can
			// show it up, and then it stops reloading (one more reload
			// may count its tools).
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			type view struct {
				State   string
				Refresh bool
			}
			var got view
			for got.State != "connected" || got.Refresh {
				now, err := chromedp.Run(wctx, chromedp.Evaluate[view](`({State: (document.querySelector("#server-`+tc.server+` .state") || {}).textContent || "",
					Refresh: document.querySelector('meta[http-equiv="refresh"]') !== null})`))
				if wctx.Err() != nil {
					t.Fatalf("the servers page says %+v of the server started, which is up by now", got)
				}
				if err != nil && !navigating(err) {
					t.Fatal(err)
				}
				if err == nil {
					got = now
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// A tool's description, its arguments' descriptions and its schema are
// the server's text: the playground shows what in them would hide or
// reorder text (an escape sequence, a C1 control, a backspace, a bidi
// control) as the terminal does (\x1b, \u202e), not raw and only
// HTML-escaped, where a browser draws some of them as nothing.
func TestConsolePlaygroundShowsControlCharacters(t *testing.T) {
	hostile := server("hostile-output")
	hostile["args"] = append(hostile["args"].([]string), "-hostile-arg")
	f := newFixture(t, map[string]any{"hostile": hostile})
	a := signIn(t, f)
	f.waitState(t, "hostile", host.StateConnected)
	code, page := a.get("/playground?tool=mcp__hostile__echo_hostile")
	if code != http.StatusOK {
		t.Fatalf("/playground: %d", code)
	}
	tool := regexp.MustCompile(`(?s)<section class="tool" id="tool-mcp__hostile__echo_hostile">.*?</section>`).FindString(page)
	if tool == "" {
		t.Fatalf("echo_hostile is not in the playground:\n%s", page)
	}
	for _, want := range []string{`description \x1b[2J\x1b[H`, `argument \x1b[2J`, `\u009b31m`, `\x08\x7f`} {
		if !strings.Contains(tool, want) {
			t.Errorf("the playground does not show %s:\n%s", want, tool)
		}
	}
	for i, r := range page {
		if termsafe.Unsafe(r) && r != '\n' && r != '\t' {
			t.Errorf("the playground holds %U raw at %d: …%s…", r, i, termsafe.Line(page[max(i-40, 0):min(i+40, len(page))]))
		}
	}
}

// What servers and clients wrote elsewhere in the console is made
// visible as the terminal shows it too: a failed server's reason and
// stderr on the servers page, a playground call's result and a gateway
// call's error and arguments on the calls page.
func TestConsoleServerTextIsMadeVisible(t *testing.T) {
	dead := server("hostile-output")
	dead["args"] = append(dead["args"].([]string), "-exit")
	f := newFixture(t, map[string]any{"hostile": server("hostile-output"), "dead": dead})
	f.console.o.GatewayCalls = func() []gateway.AuditEntry {
		return []gateway.AuditEntry{{Principal: "bob", Tool: "mcp__hostile__fail_hostile", Decision: "allow", IsError: true,
			Error: "failure " + testserver.HostileText, Args: map[string]any{"text": testserver.HostileText}}}
	}
	a := signIn(t, f)
	f.waitState(t, "hostile", host.StateConnected)
	f.waitState(t, "dead", host.StateError)
	if code, _ := a.post("/call", url.Values{"tool": {"mcp__hostile__echo_hostile"}}); code != http.StatusSeeOther {
		t.Fatalf("the call: %d", code)
	}
	if code, _ := a.post("/asks/answer", url.Values{"id": {f.question()[0].ID}, "answer": {"once"}}); code != http.StatusSeeOther {
		t.Fatalf("the answer: %d", code)
	}
	for _, p := range []struct{ path, ready, want string }{
		{"/?stderr=dead", `id="stderr-dead"`, `fatal: \x1b[2J`},
		{"/calls", `<pre class="result">`, `result \x1b[2J`},
		{"/calls", `class="gwcall failed"`, `failure \x1b[2J`},
	} {
		code, page := a.get(p.path)
		for code == http.StatusOK && !strings.Contains(page, p.ready) { // the call still running
			time.Sleep(20 * time.Millisecond)
			code, page = a.get(p.path)
		}
		if code != http.StatusOK || !strings.Contains(page, p.want) {
			t.Errorf("%s: %d, without %s:\n%s", p.path, code, p.want, page)
		}
		n := 0
		for i, r := range page {
			if termsafe.Unsafe(r) && r != '\n' && r != '\t' && n < 3 {
				n++
				t.Errorf("%s holds %U raw at %d: …%s…", p.path, r, i, termsafe.Line(page[max(i-40, 0):min(i+40, len(page))]))
			}
		}
	}
}

// A call, unlike a page, waits for its tool's server to start (as any
// call does): a playground form posted while its server restarts runs
// rather than finding no such tool.
func TestConsoleCallWaitsForItsServer(t *testing.T) {
	f, a := slowFixture(t)
	if code, body := a.post("/call", url.Values{"tool": {"mcp__slow__echo"}, "arg.text": {"hi"}}); code != http.StatusSeeOther {
		t.Fatalf("a call of the starting server's tool: %d\n%s", code, body)
	}
	if q := f.question(); q[0].Tool != "mcp__slow__echo" {
		t.Errorf("the question is about %s", q[0].Tool)
	}
}

// Each state offers the actions that do something in it, and no other.
func TestServerActions(t *testing.T) {
	soon := time.Unix(1e9, 0)
	for _, tc := range []struct {
		st   host.ServerStatus
		want string
	}{
		{host.ServerStatus{State: host.StateConnected}, "pause"},
		{host.ServerStatus{State: host.StateConnecting}, "pause"},
		{host.ServerStatus{State: host.StateConnecting, Reconnecting: true, NextTry: soon}, "retry pause"},
		{host.ServerStatus{State: host.StateCircuitOpen, NextTry: soon}, "retry pause"},
		{host.ServerStatus{State: host.StateError, NextTry: soon}, "retry pause"},
		{host.ServerStatus{State: host.StateError}, "retry"}, // an invalid definition: nothing is tried
		{host.ServerStatus{State: host.StatePaused}, "resume"},
		{host.ServerStatus{State: host.StateNeedsApproval}, ""},
		{host.ServerStatus{State: host.StateApprovalStale}, ""},
		{host.ServerStatus{State: host.StateDisabled}, ""},
		{host.ServerStatus{State: host.StateMissing}, ""},
	} {
		var got []string
		for _, a := range serverActions(tc.st) {
			got = append(got, a.Value)
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%s (next try %v): %q, want %q", tc.st.State, !tc.st.NextTry.IsZero(), s, tc.want)
		}
	}
}

// A server's words in the tools page's warnings (here its tools/list
// error) are shown as the terminal shows them: a bidi override or an
// escape sequence is made visible, not obeyed by the page.
func TestConsoleToolsWarningsMadeVisible(t *testing.T) {
	bad := server("list-error")
	bad["args"] = append(bad["args"].([]string), "-message", "index \u202egnp.exe\u202c not loaded \x1b[2J")
	f := newFixture(t, map[string]any{"bad": bad})
	f.waitState(t, "mine", host.StateConnected)
	s := signIn(t, f)
	var body string
	for range 100 {
		resp, err := s.c.Get(f.srv.URL + "/tools")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if body = string(b); strings.Contains(body, "not loaded") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(body, "not loaded") {
		t.Fatalf("the tools page names no list error of bad:\n%s", body)
	}
	if strings.ContainsAny(body, "\u202e\u202c\x1b") {
		t.Errorf("the tools page carries the server's bidi override or escape as they are:\n%s", body)
	}
	if !strings.Contains(body, `index \u202egnp.exe\u202c not loaded \x1b[2J`) {
		t.Errorf("the tools page does not show the server's characters as escapes:\n%s", body)
	}
}

// A deferred tool (its server's defer_loading) is one the model finds
// through tool_search; to a person in the console it is a tool like any
// other: the tools page lists it, and the playground calls it.
func TestConsolePlaygroundHasDeferredTools(t *testing.T) {
	lazy := server("echo")
	lazy["defer_loading"] = true
	f := newFixture(t, map[string]any{"lazy": lazy})
	a := signIn(t, f)
	f.waitState(t, "lazy", host.StateConnected)
	code, page := a.get("/tools")
	if code != http.StatusOK || !strings.Contains(page, `id="tool-mcp__lazy__echo"`) {
		t.Errorf("/tools: %d, without the deferred tool mcp__lazy__echo:\n%s", code, page)
	}
	if strings.Contains(page, `id="tool-tool_search"`) {
		t.Errorf("/tools offers tool_search, the model's way to the deferred tools, as a tool to call")
	}
	if code, page := a.get("/playground?tool=mcp__lazy__echo"); code != http.StatusOK || !strings.Contains(page, `id="call-mcp__lazy__echo"`) {
		t.Errorf("/playground of mcp__lazy__echo: %d\n%s", code, page)
	}
	if code, body := a.post("/call", url.Values{"tool": {"mcp__lazy__echo"}, "arg.text": {"hi"}}); code != http.StatusSeeOther {
		t.Fatalf("a playground call of the deferred tool: %d\n%s", code, body)
	}
	if q := f.question(); q[0].Tool != "mcp__lazy__echo" {
		t.Errorf("the question is about %s", q[0].Tool)
	}
}

// A review is read on a page that stays put: while another server
// connects (the servers page reloads itself then, once a second), the
// page of the review is not reloaded under its reader, who keeps their
// place in it.
func TestConsoleReviewStaysPut(t *testing.T) {
	ctx := browser(t)
	file := filepath.Join(t.TempDir(), "go")
	slow := server("slow-start")
	slow["args"] = append(slow["args"].([]string), "-until-file", file)
	f := newFixture(t, map[string]any{"slow": slow})
	refreshing := chromedp.Evaluate[bool](`document.querySelector('meta[http-equiv="refresh"]') !== null`)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(375, 400), chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	if r, err := chromedp.Run(ctx, refreshing); err != nil || !r {
		t.Fatalf("the servers page, with slow starting, does not follow it (%v)", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#review-link-repo")), chromedp.WaitVisible(chromedp.CSS("#review-repo"))); err != nil {
		t.Fatal(err)
	}
	if r, err := chromedp.Run(ctx, refreshing); err != nil || r {
		t.Errorf("the review's page reloads itself (%v)", err)
	}
	// The reader scrolls down the review, and marks the page: a reload
	// would lose the mark (and the place).
	at, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.reading = true, window.scrollTo(0, document.body.scrollHeight), window.scrollY`))
	if err != nil || at == 0 {
		t.Fatalf("the review does not scroll at 375×400 (%v, %v)", at, err)
	}
	// Meanwhile slow comes up, which another tab on the servers page
	// sees only through its own reloads.
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate(f.srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for state := ""; state != "connected"; {
		got, err := chromedp.Run(tab, chromedp.Evaluate[string](`(document.querySelector("#server-slow .state") || {}).textContent || ""`))
		if ctx.Err() != nil {
			t.Fatalf("the servers page never showed slow connected (%q)", state)
		}
		if err != nil && !navigating(err) {
			t.Fatal(err)
		}
		state = got
		time.Sleep(50 * time.Millisecond)
	}
	type place struct {
		Reading bool
		At      float64
		Review  bool
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[place](`({Reading: window.reading === true, At: window.scrollY, Review: document.querySelector("#review-repo") !== null})`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (place{true, at, true}); got != want {
		t.Errorf("the review's reader, after another server came up: %+v, want %+v", got, want)
	}
}

// The tools list follows a server that is starting (it reloads itself
// until the server's tools are listed), and a tool's playground form,
// on a page of its own, is never reloaded: what is typed in it stays.
func TestConsolePlaygroundFormStays(t *testing.T) {
	ctx := browser(t)
	file := filepath.Join(t.TempDir(), "go")
	slow := server("slow-start")
	slow["args"] = append(slow["args"].([]string), "-until-file", file)
	f := newFixture(t, map[string]any{"slow": slow})
	refreshing := chromedp.Evaluate[bool](`document.querySelector('meta[http-equiv="refresh"]') !== null`)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url), chromedp.Navigate(f.srv.URL+"/tools"), chromedp.WaitVisible(chromedp.CSS("#open-mcp__mine__echo"))); err != nil {
		t.Fatal(err)
	}
	if r, err := chromedp.Run(ctx, refreshing); err != nil || !r {
		t.Errorf("the tools list, with slow starting, does not follow it (%v)", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#open-mcp__mine__echo")),
		chromedp.SendKeys(chromedp.CSS(`#tool-mcp__mine__echo input[name="arg.text"]`), "half-typed")); err != nil {
		t.Fatal(err)
	}
	if r, err := chromedp.Run(ctx, refreshing); err != nil || r {
		t.Errorf("the playground's page reloads itself (%v)", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.typing = true`)); err != nil {
		t.Fatal(err)
	}
	// slow comes up; another tab on the list sees it through its own
	// reloads, with no reload by hand.
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate(f.srv.URL+"/tools")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for listed := false; !listed; {
		got, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.querySelector("#tool-mcp__slow__echo") !== null && document.querySelector('meta[http-equiv="refresh"]') === null`))
		if ctx.Err() != nil {
			t.Fatal("the tools list never listed slow's tools by itself")
		}
		if err != nil && !navigating(err) {
			t.Fatal(err)
		}
		listed = got
		time.Sleep(50 * time.Millisecond)
	}
	type form struct {
		Typing bool
		Text   string
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[form](`({Typing: window.typing === true, Text: document.querySelector('#tool-mcp__mine__echo input[name="arg.text"]').value})`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (form{true, "half-typed"}); got != want {
		t.Errorf("the playground's form, after another server came up: %+v, want %+v", got, want)
	}
}

// A server's stderr, opened on the servers page, stays open while the
// page reloads itself (another server starting): it is opened by a link
// the reloads keep, not a <details> each reload would close.
func TestConsoleStderrStaysOpen(t *testing.T) {
	ctx := browser(t)
	slow := server("slow-start")
	slow["args"] = append(slow["args"].([]string), "-until-file", filepath.Join(t.TempDir(), "never"))
	f := newFixture(t, map[string]any{"broken": server("exit-init"), "slow": slow})
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, f.srv.URL+"/", "#server-broken .state", "error")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#stderr-link-broken")), chromedp.WaitVisible(chromedp.CSS("#stderr-broken"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.before = true`)); err != nil {
		t.Fatal(err)
	}
	// Until the page has reloaded itself (slow never comes up).
	for reloaded := false; !reloaded; {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.before !== true && document.readyState == "complete"`))
		if ctx.Err() != nil {
			t.Fatal("the servers page, with slow starting, never reloaded itself")
		}
		if err != nil && !navigating(err) {
			t.Fatal(err)
		}
		reloaded = got
		time.Sleep(50 * time.Millisecond)
	}
	var text string
	for ctx.Err() == nil { // a page loaded whole, not one caught in its next reload
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`document.readyState == "complete" ? [(document.querySelector("#stderr-broken") || {}).textContent || ""] : []`))
		if err != nil && !navigating(err) {
			t.Fatal(err)
		}
		if len(got) == 1 {
			text = got[0]
			break
		}
	}
	if !strings.Contains(text, "cannot open database") {
		t.Errorf("after a reload the stderr of broken shows %q", text)
	}
}
