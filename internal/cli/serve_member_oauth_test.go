package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
)

// TestGatewayMemberOAuthLogin is issue 31's `gateway login` on a real
// `serve --http` with keys, in front of a real OAuth-protected upstream
// (testoauth: its own authorization server, tokens that expire at once and
// refresh tokens good for one refresh). The gateway's admin logs in as
// the gateway; alice and bob each run `gateway login` on "their" machine,
// and each one's calls reach the upstream with a token of their own login
// — never the gateway's, never each other's — refreshed by the gateway and
// written back (a restarted gateway still refreshes alice's); carol, who
// has not logged in, is refused with the command; alice's logout ends her
// calls; the audit names "member oauth" and holds no token.
func TestGatewayMemberOAuthLogin(t *testing.T) {
	srv := testoauth.Start(t)
	srv.ExpiresIn = 1 // within the client's margin: every use refreshes
	srv.RotateRefresh = true
	w := newGatewayWorld(t)
	w.clientProtocol = "2025-11-25"
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"up": map[string]any{"type": "http", "url": srv.URL},
		// The gateway names it to its members: their login never goes there.
		"meta": map[string]any{"type": "http", "url": "http://169.254.169.254/mcp"},
		// A value of the gateway's in the url is never shown to members.
		"keyed": map[string]any{"type": "http", "url": srv.URL + "?key=${SB_TEST_URL_KEY}"},
	}})
	w.permissions(t, []string{"mcp__up"}, nil)
	const shared = "shared-gateway-token-0123456789"
	const urlKey = "gateway-url-key-9876543210"
	w.env = append(w.env, TokenEnv+"="+shared, "SWITCHBOARD_SECRET_STORE=file", "SB_TEST_URL_KEY="+urlKey)
	alice, bob, carol := w.addKey(t, "alice"), w.addKey(t, "bob"), w.addKey(t, "carol")
	w.editAuth(t, func(f *gateway.AuthFile) {
		f.PerMember = map[string]*gateway.PerMember{"up": {}, "meta": {}, "keyed": {}}
	})

	// The gateway's own login (its tools are listed with it).
	if out, err := w.command(t, "mcp", "login", "up", "--no-browser").CombinedOutput(); err != nil {
		t.Fatalf("mcp login: %v\n%s", err, out)
	}
	gatewayLogin, _, _ := srv.Counts()

	base, auditFile, stop := startAuditedGateway(t, w)
	defer stop()
	member := func(key string, args ...string) (string, error) {
		cmd := w.command(t, append([]string{"gateway"}, args...)...)
		cmd.Env = append(cmd.Env, MemberKeyEnv+"="+key)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	login := func(key string) int {
		t.Helper()
		if out, err := member(key, "login", "up", "--url", base+"/mcp", "--no-browser"); err != nil || !strings.Contains(out, "Logged in to up") {
			t.Fatalf("gateway login: %v\n%s", err, out)
		}
		n, _, _ := srv.Counts()
		return n
	}
	aliceLogin, bobLogin := login(alice), login(bob)

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// call calls up's echo as key's holder and returns the login the
	// upstream's last request was authorized by.
	call := func(key string) int {
		t.Helper()
		c := w.teamClient(t, ctx, base, key, "deny")
		txt, isErr := callText(t, ctx, c.cs, "up__echo", map[string]any{"text": "hi"})
		if isErr || !strings.Contains(txt, "hi") {
			t.Fatalf("echo: isError %v, %q", isErr, txt)
		}
		seen := srv.Seen()
		return srv.Family(seen[len(seen)-1])
	}
	_, refreshes, _ := srv.Counts()
	if got := call(alice); got != aliceLogin {
		t.Errorf("alice's call reached the upstream with login %d; want hers, %d (gateway's %d, bob's %d)", got, aliceLogin, gatewayLogin, bobLogin)
	}
	if _, again, _ := srv.Counts(); again == refreshes {
		t.Errorf("alice's expired token was not refreshed by the gateway")
	}
	if got := call(bob); got != bobLogin {
		t.Errorf("bob's call reached the upstream with login %d; want his, %d", got, bobLogin)
	}
	if got := call(shared); got != gatewayLogin {
		t.Errorf("the shared token's call reached the upstream with login %d; want the gateway's, %d", got, gatewayLogin)
	}

	cc := w.teamClient(t, ctx, base, carol, "deny")
	txt, isErr := callText(t, ctx, cc.cs, "up__echo", map[string]any{"text": "hi"})
	if !isErr || !strings.Contains(txt, "carol has not logged in to it") || !strings.Contains(txt, "switchboard gateway login up --url") {
		t.Errorf("carol without a login: isError %v, %q; want the refusal naming gateway login", isErr, txt)
	}

	for _, c := range []struct {
		key  string
		args []string
		want string
	}{
		{shared, []string{"login", "up", "--url", base, "--no-browser"}, "403"},
		{alice, []string{"login", "nosuch", "--url", base, "--no-browser"}, "no server nosuch is configured"},
		{alice, []string{"login", "up", "--url", "http://gw.example.com", "--no-browser"}, "plain http would carry your key"},
		{carol, []string{"logout", "up", "--url", base}, "you have no login to up"},
		{alice, []string{"login", "meta", "--url", base, "--no-browser"}, "is a cloud metadata address"},
		{alice, []string{"login", "keyed", "--url", base, "--no-browser"}, "does not hand to its members"},
	} {
		if out, err := member(c.key, c.args...); err == nil || !strings.Contains(out, c.want) || strings.Contains(out, urlKey) {
			t.Errorf("gateway %v: %v\n%s; want %q (and never the url's value)", c.args, err, out, c.want)
		}
	}

	// A new gateway process refreshes with what the last one wrote back:
	// the refresh token alice handed in was spent long ago.
	stop()
	base, _, stop2 := startAuditedGateway(t, w) // appends to the same audit log
	defer stop2()
	if got := call(alice); got != aliceLogin {
		t.Errorf("alice's call after a restart reached the upstream with login %d; want hers, %d", got, aliceLogin)
	}
	if out, err := member(alice, "logout", "up", "--url", base); err != nil || !strings.Contains(out, "forgot your login to up") {
		t.Fatalf("gateway logout: %v\n%s", err, out)
	}
	ac := w.teamClient(t, ctx, base, alice, "deny")
	if txt, isErr := callText(t, ctx, ac.cs, "up__echo", map[string]any{"text": "hi"}); !isErr || !strings.Contains(txt, "alice has not logged in") {
		t.Errorf("alice after logout: isError %v, %q", isErr, txt)
	}
	stop2()

	b, lines := readAudit(t, auditFile)
	for _, h := range srv.Seen() {
		if tok := strings.TrimPrefix(h, "Bearer "); tok != "" && strings.Contains(string(b), tok) {
			t.Errorf("the audit log holds a token %q", tok)
		}
	}
	var rows []string
	for _, e := range lines {
		rows = append(rows, e.Principal+" "+e.Tool+" "+e.Credential)
	}
	want := []string{
		"alice mcp__up__echo member oauth", "bob mcp__up__echo member oauth", "token mcp__up__echo shared",
		"carol mcp__up__echo none", "alice mcp__up__echo member oauth", "alice mcp__up__echo none",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit (principal tool credential):\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// Each principal's OAuth logins live in a folder of its own under the
// members' folder, whatever its name: an access token's claim may name a
// principal ".." or ".", whose folder must not be the gateway's own token
// folder (where its own logins are) or the members' folder itself. Other
// names keep the folder they always had.
func TestMemberTokenFoldersStayTheirOwn(t *testing.T) {
	home := t.TempDir()
	members := filepath.Join(oauthDir(home), "members")
	store := secretstore.Open(&secretstore.Options{Dir: home, Kind: "file"}) // touched by nothing here
	seen := map[string]string{}
	for _, p := range []string{"..", ".", "...", "../x", "a/..", "alice", "%2E%2E"} {
		dir, _ := memberTokens(home, store, p)
		if filepath.Dir(dir) != members {
			t.Errorf("principal %q's folder is %s, not one in %s", p, dir, members)
		}
		if other, ok := seen[dir]; ok {
			t.Errorf("principals %q and %q share the folder %s", p, other, dir)
		}
		seen[dir] = p
	}
	if dir, _ := memberTokens(home, store, "alice"); dir != filepath.Join(members, "alice") {
		t.Errorf("alice's folder moved to %s", dir)
	}
}
