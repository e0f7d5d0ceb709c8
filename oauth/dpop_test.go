package oauth_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
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

// dpopLogin logs in to a DPoP-enforcing server with a host that approves
// on its own, makes one call, and drops the host. It returns the server,
// the token directory and the private key ("d") that was stored.
func dpopLogin(t *testing.T, expiresIn int, logs *syncBuffer) (*testoauth.Server, string, string) {
	t.Helper()
	return dpopLoginOver(t, config.TypeHTTP, expiresIn, logs)
}

// dpopURL is the test server's endpoint for a transport.
func dpopURL(srv *testoauth.Server, typ config.Type) string {
	if typ == config.TypeSSE {
		return srv.SSEURL
	}
	return srv.URL
}

func dpopLoginOver(t *testing.T, typ config.Type, expiresIn int, logs *syncBuffer) (*testoauth.Server, string, string) {
	t.Helper()
	srv := testoauth.Start(t)
	srv.DPoP = true
	srv.ExpiresIn = expiresIn
	dir := filepath.Join(t.TempDir(), "oauth")
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	h := newHost(t, cfgOf(remote("d", typ, dpopURL(srv, typ))), opts(&oauth.Options{Dir: dir, NoBrowser: true}, logger))
	if res := mustCall(t, h, "mcp__d__echo", map[string]any{"text": "bound"}); !strings.Contains(textOf(res), "bound") {
		t.Fatalf("echo = %q", textOf(res))
	}
	h.Close()
	if a, _, _ := srv.Counts(); a != 1 {
		t.Fatalf("login: %d authorizations, want 1", a)
	}
	return srv, dir, storedKeyD(t, dir, "d")
}

// storedKeyD checks the key file's and directory's modes and returns the
// private key it holds.
func storedKeyD(t *testing.T, dir, name string) string {
	t.Helper()
	file := oauth.DPoPKeyFile(dir, name)
	checkStoreModes(t, dir, file, "DPoP key file")
	data, _ := os.ReadFile(file)
	var kf struct {
		JWK struct{ D string } `json:"jwk"`
	}
	if err := json.Unmarshal(data, &kf); err != nil || len(kf.JWK.D) < 40 {
		t.Fatalf("key file holds no private key: %v", err)
	}
	return kf.JWK.D
}

// After a restart (a new Host on the same directory, unable to ask anyone)
// the stored DPoP-bound token is used with the stored key: no new login,
// every proof by the one key the server bound the token to, refreshes
// included.
func TestOAuthDPoPTokenAndKeySurviveRestart(t *testing.T) {
	for _, tc := range []struct {
		name      string
		typ       config.Type
		expiresIn int
	}{
		{"stored access token", config.TypeHTTP, 0},
		// Tokens within oauth2's expiry margin: every use refreshes, and
		// the refresh must prove the key the refresh token is bound to.
		{"refreshed", config.TypeHTTP, 2},
		{"sse", config.TypeSSE, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, dir, _ := dpopLoginOver(t, tc.typ, tc.expiresIn, nil)
			tokenFile, _ := os.ReadFile(oauth.TokenFile(dir, "d"))
			if !strings.Contains(string(tokenFile), `"dpop_jkt"`) || !strings.Contains(string(tokenFile), `"DPoP"`) {
				t.Fatalf("token file names no DPoP key:\n%s", tokenFile)
			}
			if strings.Contains(string(tokenFile), `"d"`) {
				t.Errorf("the token file holds key material")
			}
			before := len(srv.DPoPRefusals())
			seenBefore := len(srv.Seen())
			_, refreshesBefore, _ := srv.Counts()

			h := newHost(t, cfgOf(remote("d", tc.typ, dpopURL(srv, tc.typ))), opts(&oauth.Options{Dir: dir}, nil))
			if res := mustCall(t, h, "mcp__d__echo", map[string]any{"text": "after restart"}); !strings.Contains(textOf(res), "after restart") {
				t.Fatalf("echo = %q", textOf(res))
			}
			a, refreshes, _ := srv.Counts()
			if a != 1 {
				t.Errorf("%d authorizations; the stored token and key were not used", a-1)
			}
			if tc.expiresIn > 0 && refreshes == refreshesBefore {
				t.Errorf("no refresh grant was made after the restart")
			}
			if r := srv.DPoPRefusals(); len(r) != before {
				t.Errorf("the server refused requests after the restart: %q", r[before:])
			}
			if keys := srv.DPoPKeys(); len(keys) != 1 {
				t.Errorf("proofs by %d keys, want the one stored key", len(keys))
			}
			seen := srv.Seen()[seenBefore:]
			if len(seen) == 0 {
				t.Fatal("the restarted host sent nothing")
			}
			for _, s := range seen {
				if !strings.HasPrefix(s, "DPoP ") {
					t.Errorf("a request after the restart carried Authorization %q, want the DPoP scheme", s)
				}
			}
		})
	}
}

// A key file that cannot be trusted fails every request with an error
// naming the file and the way out, sends no token, makes no new key and
// asks for no new token.
func TestOAuthDPoPKeyFileFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(t *testing.T, file string)
		reason string
	}{
		{"readable by others", func(t *testing.T, file string) { must(t, os.Chmod(file, 0o644)) }, "mode 0644"},
		{"another user's", func(t *testing.T, file string) { chownToNobody(t, file) }, "belongs to uid 65534"},
		{"corrupt", func(t *testing.T, file string) { must(t, os.WriteFile(file, []byte(`{"alg":"ES256","jwk":{`), 0o600)) }, "corrupt"},
		{"public half tampered", func(t *testing.T, file string) {
			data, _ := os.ReadFile(file)
			var kf struct {
				Alg string         `json:"alg"`
				JWK map[string]any `json:"jwk"`
			}
			must(t, json.Unmarshal(data, &kf))
			x := kf.JWK["x"].(string)
			c := byte('A')
			if x[10] == 'A' {
				c = 'B'
			}
			kf.JWK["x"] = x[:10] + string(c) + x[11:]
			out, _ := json.Marshal(kf)
			must(t, os.WriteFile(file, out, 0o600))
		}, "does not match the private key"},
		{"another key", func(t *testing.T, file string) {
			// A valid key file, but not of the key the tokens are bound to.
			_, otherDir, _ := dpopLogin(t, 0, nil)
			data, _ := os.ReadFile(oauth.DPoPKeyFile(otherDir, "d"))
			must(t, os.WriteFile(file, data, 0o600))
		}, "another key"},
		{"missing", func(t *testing.T, file string) { must(t, os.Remove(file)) }, "is missing"},
		{"symlink", func(t *testing.T, file string) {
			moved := file + ".elsewhere"
			must(t, os.Rename(file, moved))
			must(t, os.Symlink(moved, file))
		}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			srv, dir, d := dpopLogin(t, 2, &logs)
			file := oauth.DPoPKeyFile(dir, "d")
			tc.spoil(t, file)
			spoilt, _ := os.ReadFile(file)
			_, _, tokReqs := srv.Counts()
			seenBefore := len(srv.Seen())

			h := newHost(t, cfgOf(remote("d", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			st := waitState(t, h, "d", host.StateError, 30*time.Second)
			for _, want := range []string{file, tc.reason, "key file error for d"} {
				if !strings.Contains(st.Reason, want) {
					t.Errorf("reason = %q, want it to name %q", st.Reason, want)
				}
			}
			if a, _, tr := srv.Counts(); a != 1 || tr != tokReqs {
				t.Errorf("after the spoilt key: %d new authorizations, %d new token requests; want none", a-1, tr-tokReqs)
			}
			for _, s := range srv.Seen()[seenBefore:] {
				if s != "" {
					t.Errorf("a request carried Authorization %q with a key file that cannot be trusted", s)
				}
			}
			if now, _ := os.ReadFile(file); string(now) != string(spoilt) {
				t.Errorf("the key file was rewritten")
			}
			if strings.Contains(logs.String()+st.Reason, d) {
				t.Errorf("the private key reached the log or the status")
			}
		})
	}
}

// A refresh the authorization server refuses for its key binding leads to
// the usual "log in again", not to a loop or a new key used in secret.
func TestOAuthDPoPBindingRefusedAsksForLogin(t *testing.T) {
	srv, dir, _ := dpopLogin(t, 2, nil)
	srv.RejectBindings()
	h := newHost(t, cfgOf(remote("d", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir}, nil))
	st := waitState(t, h, "d", host.StateError, 30*time.Second)
	if !strings.Contains(st.Reason, "login required for d") {
		t.Errorf("reason = %q, want it to ask for a login", st.Reason)
	}
	found := false
	for _, r := range srv.DPoPRefusals() {
		found = found || strings.Contains(r, "refresh proof key")
	}
	if !found {
		t.Errorf("the refresh was not refused for its key (refusals %q); the test proves nothing", srv.DPoPRefusals())
	}
	if a, _, _ := srv.Counts(); a != 1 {
		t.Errorf("a host that cannot ask anyone ran %d authorizations", a-1)
	}
}

// A new login binds new tokens to a new key and replaces both files; a
// failed one keeps the last good pair usable.
func TestOAuthDPoPLoginReplacesKeyAndFailedLoginKeepsIt(t *testing.T) {
	srv, dir, d1 := dpopLogin(t, 0, nil)
	relogin := func() *host.Host {
		return newHost(t, cfgOf(remote("d", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true, Fresh: true}, nil))
	}
	h := relogin()
	mustCall(t, h, "mcp__d__echo", map[string]any{"text": "x"})
	h.Close()
	d2 := storedKeyD(t, dir, "d")
	if d2 == d1 {
		t.Errorf("a new login kept the old key")
	}
	if n := len(srv.DPoPKeys()); n != 2 {
		t.Errorf("proofs by %d keys after two logins, want 2", n)
	}
	keyFile, _ := os.ReadFile(oauth.DPoPKeyFile(dir, "d"))
	tokenFile, _ := os.ReadFile(oauth.TokenFile(dir, "d"))

	srv.Deny(true)
	h = relogin()
	if st := waitState(t, h, "d", host.StateError, 30*time.Second); !strings.Contains(st.Reason, "access_denied") {
		t.Errorf("refused login: reason %q", st.Reason)
	}
	h.Close()
	srv.Deny(false)
	k, _ := os.ReadFile(oauth.DPoPKeyFile(dir, "d"))
	tf, _ := os.ReadFile(oauth.TokenFile(dir, "d"))
	if string(k) != string(keyFile) || string(tf) != string(tokenFile) {
		t.Fatalf("a failed login changed the stored key or tokens")
	}
	h = newHost(t, cfgOf(remote("d", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir}, nil))
	mustCall(t, h, "mcp__d__echo", map[string]any{"text": "still logged in"})
}

func TestOAuthDPoPLogoutRemovesKey(t *testing.T) {
	srv, dir, _ := dpopLogin(t, 0, nil)
	if had, err := oauth.Logout(dir, "d"); !had || err != nil {
		t.Fatalf("Logout = %v, %v; want true, nil", had, err)
	}
	for _, f := range []string{oauth.TokenFile(dir, "d"), oauth.DPoPKeyFile(dir, "d")} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s after logout: %v", f, err)
		}
	}
	h := newHost(t, cfgOf(remote("d", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir}, nil))
	if st := waitState(t, h, "d", host.StateError, 30*time.Second); !strings.Contains(st.Reason, "login required for d") {
		t.Errorf("after logout: reason %q, want it to name the login", st.Reason)
	}
}

// The planted secret here is the DPoP private key: at debug level, through
// a login, a restart and refreshes, it never reaches a log line or the
// status.
func TestOAuthDPoPKeyNeverLogged(t *testing.T) {
	var logs syncBuffer
	srv, dir, d := dpopLogin(t, 2, &logs)
	h := newHost(t, cfgOf(remote("d", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir}, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	mustCall(t, h, "mcp__d__echo", map[string]any{"text": "x"})
	if !strings.Contains(logs.String(), `"msg":"calling tool"`) {
		t.Fatalf("no debug line for the call; the test would prove nothing:\n%s", logs.String())
	}
	shown := jsonOf(h.Status())
	keyFile, _ := os.ReadFile(oauth.DPoPKeyFile(dir, "d"))
	for _, secret := range []string{d, string(keyFile)} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds the private key:\n%s", logs.String())
		}
		if strings.Contains(shown, secret) {
			t.Errorf("status holds the private key: %s", shown)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Requests refused together after the server revoked everything run one
// new authorization, whose new key and tokens replace the old pair at once:
// no request is signed with a key its token is not bound to and then
// given up on.
func TestOAuthDPoPConcurrentReauthorization(t *testing.T) {
	srv, dir, d1 := dpopLogin(t, 0, nil)
	h := newHost(t, cfgOf(remote("d", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	mustCall(t, h, "mcp__d__echo", map[string]any{"text": "x"})
	srv.Revoke()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.Call(ctxFor(t, 30*time.Second), "mcp__d__echo", map[string]any{"text": fmt.Sprint(i)}); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if a, _, _ := srv.Counts(); a != 2 {
		t.Errorf("%d authorizations after the revocation, want 1", a-1)
	}
	if d2 := storedKeyD(t, dir, "d"); d2 == d1 {
		t.Errorf("the new authorization kept the old key")
	}
	h.Close()
	h2 := newHost(t, cfgOf(remote("d", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir}, nil))
	mustCall(t, h2, "mcp__d__echo", map[string]any{"text": "the new pair was stored"})
}
