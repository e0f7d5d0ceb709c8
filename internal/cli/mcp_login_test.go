package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
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
	file := host.TokenFile(filepath.Join(home, "oauth"), "guarded")
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
	if _, stderr, code = w.run(false, "mcp", "logout", "guarded"); code != ExitFailure || !strings.Contains(stderr, "not logged in to guarded") {
		t.Errorf("second logout: exit %d, stderr %q", code, stderr)
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
