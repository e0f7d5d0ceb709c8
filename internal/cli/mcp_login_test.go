package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// mcp login against a real OAuth-protected server: the token is stored
// 0600, later commands use it without a login, logout forgets it.
func TestMCPLoginLogout(t *testing.T) {
	srv := testoauth.Start(t)
	w := newMgmtWorld(t)
	home := w.env["SWITCHBOARD_HOME"]
	w.write(filepath.Join(home, "mcp.json"), `{"mcpServers": {"guarded": {"type": "http", "url": "`+srv.URL+`"}}}`)

	// Before a login, the server asks for one and the error says so.
	out, stderr, code := w.run(false, "status")
	if !strings.Contains(out+stderr, "switchboard mcp login guarded") {
		t.Errorf("status before login: exit %d, stdout %q, stderr %q; want it to name `switchboard mcp login guarded`", code, out, stderr)
	}

	out, stderr, code = w.run(false, "mcp", "login", "guarded", "--no-browser")
	if code != 0 || !strings.Contains(out, "Logged in to guarded") {
		t.Fatalf("login: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	file := oauth.TokenFile(filepath.Join(home, "oauth"), "guarded")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, mode %v; want 0600", file, err, fi.Mode().Perm())
	}
	logins, _, _ := srv.Counts()
	first, _ := os.ReadFile(file)

	// A second login authorizes anew and replaces the token; one that
	// fails keeps it.
	if _, stderr, code = w.run(false, "mcp", "login", "guarded", "--no-browser"); code != 0 {
		t.Fatalf("second login: exit %d, stderr %q", code, stderr)
	}
	second, _ := os.ReadFile(file)
	if again, _, _ := srv.Counts(); again != logins+1 || string(second) == string(first) {
		t.Errorf("second login: %d new authorizations, token replaced: %v; want 1, true", again-logins, string(second) != string(first))
	}
	srv.Deny(true)
	if _, stderr, code = w.run(false, "mcp", "login", "guarded", "--no-browser"); code != ExitFailure || !strings.Contains(stderr, "access_denied") {
		t.Errorf("a refused login: exit %d, stderr %q; want exit 1 naming access_denied", code, stderr)
	}
	srv.Deny(false)
	if kept, _ := os.ReadFile(file); string(kept) != string(second) {
		t.Errorf("a failed login changed the stored token")
	}
	logins, _, _ = srv.Counts()

	out, stderr, code = w.run(false, "tools")
	if code != 0 || !strings.Contains(out, "mcp__guarded__echo") {
		t.Errorf("tools after login: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	if again, _, _ := srv.Counts(); again != logins {
		t.Errorf("tools authorized again (%d authorizations) instead of using the stored token", again-logins)
	}

	if out, _, code = w.run(false, "mcp", "logout", "guarded"); code != 0 || !strings.Contains(out, "Logged out of guarded") {
		t.Errorf("logout: exit %d, stdout %q", code, out)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("token file after logout: %v", err)
	}
	if _, stderr, code = w.run(false, "mcp", "logout", "guarded"); code != ExitFailure || !strings.Contains(stderr, "not logged in to guarded") ||
		strings.Contains(stderr, "did you mean") {
		t.Errorf("second logout: exit %d, stderr %q", code, stderr)
	}
	// A misspelt name says the one meant, as mcp revoke does.
	if _, stderr, code = w.run(false, "mcp", "logout", "guardd"); code != ExitFailure || !strings.Contains(stderr, "not logged in to guardd") ||
		!strings.Contains(stderr, "did you mean guarded?") {
		t.Errorf("logout of a misspelt name: exit %d, stderr %q", code, stderr)
	}
}

func TestMCPLoginOpenServer(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	w := newMgmtWorld(t)
	w.write(filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"), `{"mcpServers": {"open": {"type": "http", "url": "`+srv.URL+`"}}}`)
	out, stderr, code := w.run(false, "mcp", "login", "open", "--no-browser")
	if code != 0 || !strings.Contains(out, "without asking for authorization") {
		t.Errorf("login to an open server: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
}

func TestMCPLoginRefusesWhatItCannotDo(t *testing.T) {
	w := newMgmtWorld(t)
	w.write(filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json"), `{"mcpServers": {"local": {"command": "true"}, "web": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "login", "local"}, "is a stdio server"},
		{[]string{"mcp", "login", "nosuch"}, "nosuch"},
		{[]string{"mcp", "login", "web", "--client-secret", "s"}, "--client-secret needs --client-id"},
	} {
		_, stderr, code := w.run(false, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error with %q", c.args, code, stderr, c.want)
		}
	}
}

// A DPoP-enforcing server: the login stores the key the tokens are bound
// to next to them (0600), a later run (a new host) calls with the stored
// token and key without a login, the private key appears in no output or
// log, a key file others may read stops every run with an error naming it
// and the way out, and logout removes the key with the tokens.
func TestMCPLoginDPoPKeyPersists(t *testing.T) {
	srv := testoauth.Start(t)
	srv.DPoP = true
	w := newMgmtWorld(t)
	home := w.env["SWITCHBOARD_HOME"]
	w.write(filepath.Join(home, "mcp.json"), `{"mcpServers": {"guarded": {"type": "http", "url": "`+srv.URL+`"}}}`)
	w.write(filepath.Join(home, "settings.json"), `{"permissions": {"allow": ["mcp__guarded__echo"]}}`)
	var shown strings.Builder
	run := func(args ...string) (string, string, int) {
		out, stderr, code := w.run(false, append(args, "--log-level", "debug")...)
		shown.WriteString(out + stderr)
		return out, stderr, code
	}

	out, stderr, code := run("mcp", "login", "guarded", "--no-browser")
	dir := filepath.Join(home, "oauth")
	keyFile := oauth.DPoPKeyFile(dir, "guarded")
	if code != 0 || !strings.Contains(out, "Logged in to guarded") {
		t.Fatalf("login: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("DPoP key file %s: %v; want it, mode 0600", keyFile, err)
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("token dir mode %v, want 0700", di.Mode().Perm())
	}
	key, _ := os.ReadFile(keyFile)
	var kf struct {
		JWK struct{ D string } `json:"jwk"`
	}
	if err := json.Unmarshal(key, &kf); err != nil || kf.JWK.D == "" {
		t.Fatalf("key file holds no private key: %v", err)
	}
	logins, _, _ := srv.Counts()
	seen := len(srv.Seen())

	out, stderr, code = run("call", "mcp__guarded__echo", `{"text":"after restart"}`)
	if code != 0 || !strings.Contains(out, "after restart") {
		t.Errorf("call after login: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	if again, _, _ := srv.Counts(); again != logins {
		t.Errorf("the call authorized again (%d authorizations) instead of using the stored token and key", again-logins)
	}
	for _, s := range srv.Seen()[seen:] {
		if !strings.HasPrefix(s, "DPoP ") {
			t.Errorf("the call sent Authorization %q, want the DPoP scheme", s)
		}
	}
	if r := srv.DPoPRefusals(); len(r) != 1 { // the login's first, bare request
		t.Errorf("DPoP refusals %q, want only the login's first request", r)
	}

	logs, _ := os.ReadFile(filepath.Join(home, "logs", "switchboard.log"))
	if !strings.Contains(shown.String(), "level=DEBUG") || len(logs) == 0 {
		t.Fatalf("no debug output or log file; the next check would prove nothing")
	}
	for what, text := range map[string]string{"output": shown.String(), "log": string(logs)} {
		if strings.Contains(text, kf.JWK.D) {
			t.Errorf("the %s holds the DPoP private key", what)
		}
	}

	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	seen = len(srv.Seen())
	out, stderr, _ = run("call", "mcp__guarded__echo", `{"text":"exposed"}`)
	for _, want := range []string{"guarded.dpop.key", "mode 0644", "run `switchboard mcp logout guarded`, then `switchboard mcp login guarded`"} {
		if !strings.Contains(out+stderr, want) {
			t.Errorf("a key file others may read: stdout %q, stderr %q; want %q", out, stderr, want)
		}
	}
	for _, s := range srv.Seen()[seen:] {
		if s != "" {
			t.Errorf("a request carried Authorization %q with an exposed key file", s)
		}
	}

	if out, _, code = run("mcp", "logout", "guarded"); code != 0 || !strings.Contains(out, "Logged out of guarded") {
		t.Errorf("logout: exit %d, stdout %q", code, out)
	}
	for _, f := range []string{keyFile, oauth.TokenFile(dir, "guarded")} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s after logout: %v", f, err)
		}
	}
}

// A server that refuses the token it was just given: the login
// authorizes once — one browser approval, not one per retry — and fails
// saying the server refused the token it just got and what to check, not
// with a half sentence of the server's state. A login whose approval
// never comes ends at --timeout saying so.
func TestMCPLoginFailureSaysWhy(t *testing.T) {
	srv := testoauth.Start(t)
	srv.RefuseTokens = true
	w := newMgmtWorld(t)
	home := w.env["SWITCHBOARD_HOME"]
	w.write(filepath.Join(home, "mcp.json"), `{"mcpServers": {"guarded": {"type": "http", "url": "`+srv.URL+`"}}}`)
	_, stderr, code := w.run(false, "mcp", "login", "guarded", "--no-browser", "--timeout", "20s")
	if code != ExitFailure ||
		!strings.Contains(stderr, "error: login to guarded failed: the server refused the token its authorization server had just issued (") ||
		!strings.Contains(stderr, "; it was not authorized again\nhint: check that the authorization server grants the scopes guarded asks for") ||
		strings.Contains(stderr, "failed: error") || strings.Contains(stderr, srv.URL) {
		t.Errorf("refused tokens: exit %d, stderr %q", code, stderr)
	}
	if a, _, _ := srv.Counts(); a != 1 {
		t.Errorf("%d authorizations, want 1", a)
	}

	// The browser is "opened" and nobody approves.
	srv.RefuseTokens = false
	f, _, errOut := w.factory(false)
	opened := make(chan string, 1)
	err := mcpLoginRun(t.Context(), &MCPLoginOptions{IO: f.IO, Factory: f, Name: "guarded", Timeout: 2 * time.Second,
		OpenBrowser: func(u string) error {
			select {
			case opened <- u:
			default:
			}
			return nil
		}})
	if err == nil || !strings.Contains(err.Error(), "login to guarded failed: no connection within 2.0s (--timeout): the authorization was not approved") ||
		strings.Contains(err.Error(), "connecting starting") {
		t.Errorf("unapproved login: %v (stderr %q)", err, errOut)
	}
	if u := <-opened; !strings.Contains(u, "/authorize?") {
		t.Errorf("the browser was sent to %q", u)
	}
}

// A login whose fresh token the server refuses keeps the last good login
// (its tokens, and its DPoP key for a server that binds them), and leaves
// none when there was none: the refused token is not stored.
func TestMCPLoginRefusedKeepsLastLogin(t *testing.T) {
	for _, dpop := range []bool{false, true} {
		t.Run(map[bool]string{false: "bearer", true: "dpop"}[dpop], func(t *testing.T) {
			srv := testoauth.Start(t)
			srv.DPoP = dpop
			w := newMgmtWorld(t)
			home := w.env["SWITCHBOARD_HOME"]
			w.write(filepath.Join(home, "mcp.json"), `{"mcpServers": {"guarded": {"type": "http", "url": "`+srv.URL+`"}}}`)
			dir := oauthDir(home)
			files := []string{oauth.TokenFile(dir, "guarded")}
			if dpop {
				files = append(files, oauth.DPoPKeyFile(dir, "guarded"))
			}
			read := func() []string {
				var out []string
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						b = []byte("missing: " + err.Error())
					}
					out = append(out, string(b))
				}
				return out
			}

			srv.RefuseTokens = true
			if _, stderr, code := w.run(false, "mcp", "login", "guarded", "--no-browser"); code != ExitFailure {
				t.Fatalf("refused login: exit %d: %s", code, stderr)
			}
			for _, f := range files {
				if _, err := os.Stat(f); !os.IsNotExist(err) {
					t.Errorf("%s after a refused first login: %v; want none", f, err)
				}
			}

			srv.RefuseTokens = false
			if _, stderr, code := w.run(false, "mcp", "login", "guarded", "--no-browser"); code != 0 {
				t.Fatalf("login: exit %d: %s", code, stderr)
			}
			good := read()
			srv.RefuseTokens = true
			if _, stderr, code := w.run(false, "mcp", "login", "guarded", "--no-browser"); code != ExitFailure {
				t.Fatalf("refused login: exit %d: %s", code, stderr)
			}
			if got := read(); !slices.Equal(got, good) {
				t.Errorf("after a refused login the store holds\n%q\nwant the last good login's\n%q", got, good)
			}
			// And that login still works once the server takes its tokens.
			srv.RefuseTokens = false
			if out, stderr, code := w.run(false, "call", "mcp__guarded__echo", `{"text":"kept"}`,
				"--settings", `{"permissions":{"allow":["mcp__guarded__echo"]}}`); code != 0 || !strings.Contains(out, "kept") {
				t.Errorf("a call with the kept login: exit %d\n%s%s", code, out, stderr)
			}
		})
	}
}

// TestMCPLoginHelpSaysWhereTokensAreKept: the CLI keeps tokens in the OS
// credential store when one answers (oauth.Options.Secrets), so the help
// may not say they are only a file under the Switchboard directory.
func TestMCPLoginHelpSaysWhereTokensAreKept(t *testing.T) {
	long := strings.Join(strings.Fields(NewMCPLoginCmd(NewFactory(), nil).Long), " ")
	for _, want := range []string{"credential store", "~/.switchboard/oauth"} {
		if !strings.Contains(long, want) {
			t.Errorf("mcp login --help does not say %q:\n%s", want, long)
		}
	}
}
