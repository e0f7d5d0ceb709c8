package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testbrowser"
)

// `serve --http` serves the console at /ui behind the gateway's own keys:
// a key is posted once to its login page; a member (bob, whose rules deny
// him server beta) sees alpha only and changes nothing; an admin (the
// admin group) sees both and writes a rule; /mcp still wants its bearer
// token; every sign-in and change is in the console's audit log. The
// Calls page lists the gateway's calls from its audit log (a member's
// own) and draws its metrics per server as SVG (a member's servers).
func TestGatewayConsole(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha", "beta")
	w.permissions(t, []string{"mcp__alpha__echo", "mcp__beta__echo"}, nil)
	root := w.addKey(t, "root", ConsoleAdminGroup)
	bob := w.addKey(t, "bob")
	w.editAuth(t, func(f *gateway.AuthFile) { f.Principals["bob"].Deny = []string{"mcp__beta"} })
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--audit-log", filepath.Join(w.dir, "audit.jsonl"))
	defer stop()

	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	do := func(c *http.Client, method, path string, form url.Values) (int, string, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, base+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", base)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Location")
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

	// Once both servers are connected (their tools listed), as the admin
	// sees them.
	admin := browser()
	if code, _, _ := do(admin, "POST", "/ui/login", url.Values{"key": {root}}); code != http.StatusSeeOther {
		t.Fatalf("root's sign-in: %d", code)
	}
	var page string
	for deadline := time.Now().Add(time.Minute); ; {
		_, page, _ = do(admin, "GET", "/ui/", nil)
		if strings.Count(page, `class="state-connected"`) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the servers did not connect:\n%s", page)
		}
		time.Sleep(100 * time.Millisecond)
	}

	member := browser()
	if code, _, loc := do(member, "GET", "/ui/", nil); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/login?") {
		t.Fatalf("/ui/ signed out: %d to %q", code, loc)
	}
	if code, _, _ := do(member, "POST", "/ui/login", url.Values{"key": {bob + "x"}}); code != http.StatusUnauthorized {
		t.Errorf("a wrong key: %d", code)
	}
	if code, _, _ := do(member, "POST", "/ui/login", url.Values{"key": {bob}}); code != http.StatusSeeOther {
		t.Fatalf("bob's sign-in: %d", code)
	}
	code, page, _ := do(member, "GET", "/ui/", nil)
	if code != http.StatusOK || !strings.Contains(page, `id="server-alpha"`) || strings.Contains(page, `id="server-beta"`) || !strings.Contains(page, "bob (member)") {
		t.Errorf("bob's servers page: %d\n%s", code, page)
	}
	settings := filepath.Join(w.sbHome, "settings.json")
	before, _ := os.ReadFile(settings)
	if code, body, _ := do(member, "POST", "/ui/permissions/add", url.Values{"list": {"allow"}, "rule": {"mcp__alpha"}, "csrf": {csrf.FindStringSubmatch(page)[1]}}); code != http.StatusForbidden || !strings.Contains(body, "not an admin") {
		t.Errorf("bob's rule: %d %s", code, body)
	}
	if after, _ := os.ReadFile(settings); string(after) != string(before) {
		t.Errorf("a member's rule was written:\n%s", after)
	}

	code, page, _ = do(admin, "GET", "/ui/", nil)
	if code != http.StatusOK || !strings.Contains(page, `id="server-alpha"`) || !strings.Contains(page, `id="server-beta"`) {
		t.Errorf("root's servers page: %d\n%s", code, page)
	}
	if code, body, _ := do(admin, "POST", "/ui/permissions/add", url.Values{"list": {"allow"}, "rule": {"mcp__alpha"}, "csrf": {csrf.FindStringSubmatch(page)[1]}}); code != http.StatusSeeOther {
		t.Errorf("root's rule: %d %s", code, body)
	}
	if after, _ := os.ReadFile(settings); !strings.Contains(string(after), `"mcp__alpha"`) {
		t.Errorf("root's rule was not written:\n%s", after)
	}
	if code, _ := initStatus(t, base, "", ""); code != http.StatusUnauthorized {
		t.Errorf("/mcp without a key: %d", code)
	}
	audit, _ := os.ReadFile(filepath.Join(w.sbHome, "logs", "console-audit.jsonl"))
	for _, want := range []string{`"principal":"bob"`, `"principal":"root"`, `"action":"add rule","target":"allow mcp__alpha"`, `"outcome":"refused: bob is not an admin`} {
		if !strings.Contains(string(audit), want) {
			t.Errorf("the console's audit log lacks %s:\n%s", want, audit)
		}
	}
	if strings.Contains(string(audit), bob) || strings.Contains(string(audit), root) {
		t.Errorf("a key is in the audit log:\n%s", audit)
	}

	// A call each through /mcp, then the Calls pages.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for key, tool := range map[string]string{bob: "alpha__echo", root: "beta__echo"} {
		c := w.teamClient(t, ctx, base, key, "deny")
		if text, isErr := callText(t, ctx, c.cs, tool, map[string]any{"text": "hi"}); isErr {
			t.Fatalf("%s: %s", tool, text)
		}
	}
	admin = browser()
	if code, _, _ := do(admin, "POST", "/ui/login", url.Values{"key": {root}}); code != http.StatusSeeOther {
		t.Fatalf("root's sign-in again: %d", code)
	}
	_, calls, _ := do(member, "GET", "/ui/calls", nil)
	if !strings.Contains(calls, "<code>alpha__echo</code>") && !strings.Contains(calls, "<code>mcp__alpha__echo</code>") {
		t.Errorf("bob's calls lack his own:\n%s", calls)
	}
	if strings.Contains(calls, "beta__echo") || strings.Contains(calls, `data-server="beta"`) || !strings.Contains(calls, `data-server="alpha"`) || !strings.Contains(calls, "1 calls, 0 errors") {
		t.Errorf("bob's calls page shows another's call or server, or not his:\n%s", calls)
	}
	_, calls, _ = do(admin, "GET", "/ui/calls", nil)
	if !strings.Contains(calls, "alpha__echo</code>") || !strings.Contains(calls, "beta__echo</code>") || !strings.Contains(calls, `data-server="beta"`) || !strings.Contains(calls, "<svg") {
		t.Errorf("root's calls page:\n%s", calls)
	}
	if strings.Contains(calls, "<script") {
		t.Errorf("the calls page has a script:\n%s", calls)
	}
}

// consoleBrowser is a signed-in visitor of a gateway's console.
type consoleBrowser struct {
	t    *testing.T
	c    *http.Client
	base string
}

func signInConsole(t *testing.T, base, key string) *consoleBrowser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &consoleBrowser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if code, _ := b.post("/ui/login", url.Values{"key": {key}}); code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", code)
	}
	return b
}

// waitQuestion returns the console's Questions page once it shows a
// question about tool; the test fails if the call that asks it (done)
// ends first, or ctx does.
func (b *consoleBrowser) waitQuestion(ctx context.Context, tool string, done <-chan callResult) string {
	b.t.Helper()
	for {
		page := b.get("/ui/asks")
		if strings.Contains(page, `data-tool="`+tool+`"`) {
			return page
		}
		select {
		case r := <-done:
			b.t.Fatalf("the call ended before its question was shown: %+v", r)
		case <-ctx.Done():
			b.t.Fatalf("the question never showed:\n%s", page)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (b *consoleBrowser) get(path string) string {
	b.t.Helper()
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func (b *consoleBrowser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.base)
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// callResult is how a call made by callInBackground ended.
type callResult struct {
	text  string
	isErr bool
}

// callInBackground connects to the gateway at base with key as a client
// with opts, and calls tool with text while the test goes on.
func callInBackground(t *testing.T, ctx context.Context, base, key string, opts *mcp.ClientOptions, tool, text string) <-chan callResult {
	t.Helper()
	hc := &http.Client{Transport: bearerTransport{token: key}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "console-test"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	done := make(chan callResult, 1)
	go func() {
		text, isErr := callText(t, ctx, cs, tool, map[string]any{"text": text})
		done <- callResult{text, isErr}
	}()
	return done
}

// A permission question the calling client cannot answer (it declared no
// elicitation) waits in the gateway's console: its principal sees it and
// answers it there, another principal neither sees nor answers it, the
// call proceeds, and its audit line says it was asked and answered once.
func TestGatewayConsoleAnswersAQuestion(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, nil, nil) // no rule: every call is asked about
	bob, carol := w.addKey(t, "bob"), w.addKey(t, "carol")
	auditPath := filepath.Join(w.dir, "audit.jsonl")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--audit-log", auditPath)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	done := callInBackground(t, ctx, base, bob, nil, "alpha__echo", "asked in the console")

	mine, theirs := signInConsole(t, base, bob), signInConsole(t, base, carol)
	idRE := regexp.MustCompile(`name="id" value="([0-9a-f]+)"`)
	page := mine.waitQuestion(ctx, "mcp__alpha__echo", done)
	id := idRE.FindStringSubmatch(page)[1]
	csrf := func(p string) string {
		return regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(p)[1]
	}
	if other := theirs.get("/ui/asks"); strings.Contains(other, "mcp__alpha__echo") {
		t.Errorf("carol sees bob's question:\n%s", other)
	} else if code, body := theirs.post("/ui/asks/answer", url.Values{"id": {id}, "answer": {"once"}, "csrf": {csrf(other)}}); code != http.StatusConflict {
		t.Errorf("carol answered bob's question: %d %s", code, body)
	}
	if code, body := mine.post("/ui/asks/answer", url.Values{"id": {id}, "answer": {"once"}, "csrf": {csrf(page)}}); code != http.StatusSeeOther {
		t.Fatalf("bob's answer: %d %s", code, body)
	}
	r := <-done
	if r.isErr || !strings.Contains(r.text, "asked in the console") {
		t.Errorf("the call after the answer: %+v", r)
	}
	audit, _ := os.ReadFile(auditPath)
	if !strings.Contains(string(audit), `"principal":"bob"`) || !strings.Contains(string(audit), `"asked":true,"answer":"once"`) {
		t.Errorf("the call's audit line:\n%s", audit)
	}
	consoleAudit, _ := os.ReadFile(filepath.Join(w.sbHome, "logs", "console-audit.jsonl"))
	if !strings.Contains(string(consoleAudit), `"principal":"bob"`) || !strings.Contains(string(consoleAudit), `"action":"answer","target":"mcp__alpha__echo","outcome":"once"`) {
		t.Errorf("the console's audit log:\n%s", consoleAudit)
	}

	// "Always" in the console does what it does asked by elicitation: the
	// exact rule goes to bob's own entry of the auth file (the page says
	// where), and his next call of the tool is not asked about.
	done = callInBackground(t, ctx, base, bob, nil, "alpha__echo", "always in the console")
	page = mine.waitQuestion(ctx, "mcp__alpha__echo", done)
	if !strings.Contains(page, `value="always" title="writes the allow rule to bob&#39;s entry in ~/.switchboard/gateway-auth.json"`) {
		t.Errorf("the question does not offer always to bob's entry:\n%s", page)
	}
	id = idRE.FindStringSubmatch(page)[1]
	if code, body := mine.post("/ui/asks/answer", url.Values{"id": {id}, "answer": {"always"}, "csrf": {csrf(page)}}); code != http.StatusSeeOther {
		t.Fatalf("bob's always: %d %s", code, body)
	}
	if r := <-done; r.isErr || !strings.Contains(r.text, "always in the console") {
		t.Errorf("the call after always: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(w.sbHome, "gateway-auth.json")); !strings.Contains(string(b), `"mcp__alpha__echo"`) {
		t.Errorf("the auth file lacks bob's rule:\n%s", b)
	}
	if r := <-callInBackground(t, ctx, base, bob, nil, "alpha__echo", "not asked again"); r.isErr || !strings.Contains(r.text, "not asked again") {
		t.Errorf("bob's call after always: %+v", r)
	}
	if page := mine.get("/ui/asks"); strings.Contains(page, `data-tool="mcp__alpha__echo"`) {
		t.Errorf("asked again after always:\n%s", page)
	}
}

// A client that takes URL-mode elicitation but no forms is sent a link to
// its question's page in the console; its principal opens it in a real
// browser (chromium), signs in, answers, and the call proceeds.
func TestGatewayConsoleLinkElicitation(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, nil, nil)
	bob := w.addKey(t, "bob")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0")
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	links := make(chan *mcp.ElicitParams, 1)
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			links <- req.Params
			return &mcp.ElicitResult{Action: "accept"}, nil // shown to the person
		},
	}
	done := callInBackground(t, ctx, base, bob, opts, "alpha__echo", "answered by link")
	var q *mcp.ElicitParams
	select {
	case q = <-links:
	case r := <-done:
		t.Fatalf("the call ended without a link: %+v", r)
	}
	if q.Mode != "url" || !strings.HasPrefix(q.URL, base+"/ui/asks?q=") || q.ElicitationID == "" || !strings.Contains(q.Message, "mcp__alpha__echo") {
		t.Fatalf("the elicitation: %+v", q)
	}
	// The person follows the link in a real browser: the console asks
	// them to sign in, goes on to the question, and they answer it there.
	bctx := testbrowser.Start(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(q.URL), chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), bob), chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#ask-"+q.ElicitationID+` button[value="once"]`))); err != nil {
		t.Fatalf("the link in the browser: %v", err)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#ask-"+q.ElicitationID+` button[value="once"]`)), chromedp.WaitVisible(chromedp.CSS("#message"))); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.isErr || !strings.Contains(r.text, "answered by link") {
		t.Errorf("the call after the answer: %+v", r)
	}
}

// TestGatewayConsoleWithoutCredentials: a loopback gateway that asks for
// no credential signs nobody in to its console; its login page says so,
// and what to do, instead of offering a form no key can pass.
func TestGatewayConsoleWithoutCredentials(t *testing.T) {
	base, ctx := plainGateway(t, nil)
	code, body := requestAs(t, ctx, "GET", base+"/ui/login", "", "")
	if code != http.StatusOK || !strings.Contains(body, "signs nobody in") || !strings.Contains(body, "switchboard ui") || strings.Contains(body, `name="key"`) {
		t.Errorf("the login page of a gateway without credentials: %d, want the reason and no form:\n%s", code, body)
	}
}

// The console and the index page, like /mcp, refuse a request that
// reached the loopback address under another Host: a page of another site
// whose name was rebound to 127.0.0.1 (DNS rebinding).
func TestGatewayConsoleRefusesARebindingHost(t *testing.T) {
	base, ctx := plainGateway(t, nil)
	for _, path := range []string{"/ui/login", "/"} {
		for host, want := range map[string]int{"evil.example": http.StatusMisdirectedRequest, "EVIL.example:80": http.StatusMisdirectedRequest, "": http.StatusOK, "LOCALHOST": http.StatusOK} {
			req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
			if host != "" {
				req.Host = host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET %s with Host %q: %d, want %d\n%s", path, host, resp.StatusCode, want, b)
			}
		}
	}
}

// A client that trickles the body of a POST to the console's login page,
// which asks for no credential, or to the index page, is cut off within
// --body-timeout, as one of /mcp is: it must not hold a connection of the
// gateway for as long as it likes (slowloris).
func TestGatewayBoundsTheConsolesBodies(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--body-timeout", "300ms")
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	for _, path := range []string{"/ui/login", "/", "/healthz"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nkey=", path, addr, base)
		for time.Since(start) < 10*time.Second {
			time.Sleep(100 * time.Millisecond)
			if _, err := c.Write([]byte("a")); err != nil {
				break
			}
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("a trickled POST to %s held its connection %v, want it cut off within about 300ms", path, took)
		}
		c.Close()
	}
}
