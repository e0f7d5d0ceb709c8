package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/testserver/testbrowser"
)

// `switchboard ui` serves the console on loopback: the address it opens
// holds the token, which the first visit exchanges for a cookie; without
// it nothing is served; the session is in the audit log; Ctrl-C (the
// context) ends it cleanly.
func TestUICommand(t *testing.T) {
	ui := startUI(t)
	u, inW, out := ui.url, ui.in, ui.out
	if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.Contains(u, "/?token=") {
		t.Fatalf("opened %q", u)
	}
	plain := strings.SplitN(u, "?", 2)[0]
	resp, err := http.Get(plain)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %s", resp.Status)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err = c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<h1>Servers</h1>") || strings.Contains(resp.Request.URL.String(), "token=") {
		t.Errorf("with the token: %s at %s\n%s", resp.Status, resp.Request.URL, body)
	}
	// The session's cookie goes to the console's own secret path only: a
	// browser sends cookies to every port of a host, so a page of another
	// local program on another port must not get it (a copy of it is the
	// console). Outside that path nothing is served.
	base := must(url.Parse(plain))
	if len(strings.Trim(base.Path, "/")) < 16 {
		t.Errorf("the console's address %s has no secret path of its own", plain)
	}
	if cs := jar.Cookies(must(url.Parse("http://127.0.0.1:1/"))); len(cs) != 0 {
		t.Errorf("the console's cookie would go to another port's pages: %v", cs)
	}
	if cs := jar.Cookies(base); len(cs) != 1 {
		t.Errorf("the console's cookie is not sent to the console: %v", cs)
	}
	resp, err = c.Get("http://" + base.Host + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("outside the console's path: %s, want 404", resp.Status)
	}
	// The address opens the console once; Enter prints a new one.
	resp, err = (&http.Client{Jar: must(cookiejar.New(nil))}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the address a second time: %s, want 401", resp.Status)
	}
	io.WriteString(inW, "\n")
	var again string
	for deadline := time.Now().Add(30 * time.Second); again == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(out.String(), "\n") {
			if a, ok := strings.CutPrefix(line, "Switchboard console: "); ok && a != u {
				again = a
			}
		}
	}
	if again == "" {
		t.Fatalf("Enter printed no new address: %q", out.String())
	}
	resp, err = (&http.Client{Jar: must(cookiejar.New(nil))}).Get(again)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the new address: %s, want the console", resp.Status)
	}
	if err := ui.stop(); err != nil {
		t.Errorf("ui after Ctrl-C: %v", err)
	}
	if !strings.Contains(out.String(), u) {
		t.Errorf("the address was not printed: %q", out.String())
	}
	audit, err := os.ReadFile(filepath.Join(ui.home, ".switchboard", "logs", "console-audit.jsonl"))
	if err != nil || !strings.Contains(string(audit), `"action":"session"`) {
		t.Errorf("audit log: %v\n%s", err, audit)
	}
}

// runningUI is `switchboard ui` run in a fresh home and workspace (with
// no server configured) by startUI: url is the address it opened, in
// its terminal's input (Enter asks for a new address) and out its output.
type runningUI struct {
	url, home string
	in        *io.PipeWriter
	out       *uiOutput
	stop      func() error // Ctrl-C: ends the run, returns its error
}

// startUI runs `switchboard ui` until it opens the browser; the test's
// end stops it if the test has not.
func startUI(t *testing.T) *runningUI {
	t.Helper()
	dir := t.TempDir()
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := Test()
	inR, inW := io.Pipe()
	out := &uiOutput{}
	ios.In, ios.Out = inR, out
	f := &Factory{IO: ios, Getenv: func(string) (string, bool) { return "", false }, HomeDir: home, Cwd: ws, Now: time.Now}
	opened := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- uiRun(ctx, &UIOptions{IO: ios, Factory: f, OpenBrowser: func(u string) error { opened <- u; return nil }})
	}()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { stop(); inW.Close() })
	select {
	case u := <-opened:
		return &runningUI{url: u, home: home, in: inW, out: out, stop: stop}
	case err := <-done:
		once.Do(func() { cancel(); runErr = err })
		t.Fatalf("ui ended before opening the browser: %v", err)
		return nil
	}
}

// uiOutput is an io.Writer read while another goroutine writes it.
type uiOutput struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *uiOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *uiOutput) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// `switchboard ui` logs as every command that runs servers does: to
// ~/.switchboard/logs, and on the terminal only at --log-level debug or
// info. A server that fails to start is shown in the console, not as log
// lines among the address and the Enter prompt.
func TestUILogsToTheLogFile(t *testing.T) {
	dir := t.TempDir()
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	sbHome := filepath.Join(home, ".switchboard")
	if err := os.MkdirAll(sbHome, 0o700); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-such-server")
	writeJSON(t, filepath.Join(sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{"broken": map[string]any{"command": missing}}})
	ios, _, _, errOut := Test()
	inR, inW := io.Pipe()
	defer inW.Close()
	ios.In, ios.Out = inR, &uiOutput{}
	f := &Factory{IO: ios, Getenv: func(string) (string, bool) { return "", false }, HomeDir: home, Cwd: ws, Now: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- uiRun(ctx, &UIOptions{IO: ios, Factory: f, OpenBrowser: func(string) error { return nil }})
	}()
	logFile := filepath.Join(sbHome, "logs", "switchboard.log")
	var logged bool
	for deadline := time.Now().Add(30 * time.Second); !logged && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(logFile)
		logged = strings.Contains(string(b), `"server failed to start"`) && strings.Contains(string(b), `"server":"broken"`)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ui: %v", err)
	}
	if !logged {
		b, _ := os.ReadFile(logFile)
		t.Fatalf("the log file does not have the failed start:\n%s", b)
	}
	if s := errOut.String(); strings.Contains(s, "level=") || strings.Contains(s, "broken") {
		t.Errorf("log lines on the terminal:\n%s", s)
	}
}

// A newcomer's first `switchboard ui`, with no server configured yet: the
// servers page says how to add one, not only that there is none.
func TestUIEmptyWorkspaceSaysHowToAddAServer(t *testing.T) {
	bctx := testbrowser.Start(t)
	ui := startUI(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(ui.url)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("table.servers")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "No servers are configured") || !strings.Contains(text, "switchboard mcp add") {
		t.Errorf("the servers page of an empty workspace says:\n%s", text)
	}
}
