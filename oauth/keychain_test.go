package oauth_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/keyringtest"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
	"github.com/switchboard-mcp/switchboard/oauth"
	_ "github.com/switchboard-mcp/switchboard/oskeyring"
)

// With a real Secret Service (gnome-keyring on a private bus): tokens a
// Client stored in a 0600 file before are moved into it once, with a log
// line, and the file goes; later logins and refreshes write there, never
// a file; logout removes them (issue 31, point 5).
func TestOAuthTokensInSecretService(t *testing.T) {
	k := keyringtest.Start(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", k.Addr) // the D-Bus library reads it
	srv := testoauth.Start(t)
	home := t.TempDir()
	dir := filepath.Join(home, "oauth")
	file := oauth.TokenFile(dir, "r")

	// An older run: tokens in the file.
	h := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "first login"})
	h.Close()
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the first login wrote no token file: %v", err)
	}
	fileTokens, _ := os.ReadFile(file)

	// This run has the Secret Service: the file moves into it, once.
	store := secretstore.Open(&secretstore.Options{Dir: home})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h = newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, Secrets: store.OAuthTokens()}, logger))
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "with the stored token, no login"})
	h.Close()
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the token file is still there after the move: %v", err)
	}
	if !strings.Contains(logs.String(), `msg="moved the OAuth tokens from their file into the credential store (once; the file is gone)" server=r file=`+file) {
		t.Errorf("no note of the move:\n%s", logs.String())
	}
	got, ok, err := store.OAuthTokens().LoadSecret(context.Background(), file)
	if err != nil || !ok || got != string(fileTokens) {
		t.Fatalf("the Secret Service holds %q, %v, %v; want the file's tokens", got, ok, err)
	}
	for _, f := range []string{"store.enc", "store.key"} {
		if _, err := os.Stat(filepath.Join(home, "secrets", f)); err == nil {
			t.Errorf("%s was written: tokens go to the OS store or their file, never the encrypted file", f)
		}
	}

	// A new login writes to the Secret Service, not a file.
	h = newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true, Fresh: true, Secrets: store.OAuthTokens()}, nil))
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "second login"})
	h.Close()
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a login with the Secret Service wrote a token file: %v", err)
	}
	if again, _, _ := store.OAuthTokens().LoadSecret(context.Background(), file); again == got {
		t.Error("the new login's tokens did not replace the old ones in the Secret Service")
	}

	had, err := oauth.LogoutStore(dir, store.OAuthTokens(), "r")
	if err != nil || !had {
		t.Fatalf("LogoutStore = %v, %v", had, err)
	}
	if _, ok, err := store.OAuthTokens().LoadSecret(context.Background(), file); ok || err != nil {
		t.Errorf("after logout the Secret Service still has the tokens (%v, %v)", ok, err)
	}
}

// Without an OS store, a Client given one keeps its token files, silently.
func TestOAuthTokensWithoutOSStoreStayInFiles(t *testing.T) {
	srv := testoauth.Start(t)
	home := t.TempDir()
	dir := filepath.Join(home, "oauth")
	store := secretstore.Open(&secretstore.Options{Dir: home, LookupEnv: func(k string) (string, bool) {
		if k == "XDG_RUNTIME_DIR" {
			return home, true // no bus there
		}
		return "", false
	}})
	var logs bytes.Buffer
	h := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true, Secrets: store.OAuthTokens()}, slog.New(slog.NewTextHandler(&logs, nil))))
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "logged in"})
	h.Close()
	if fi, err := os.Stat(oauth.TokenFile(dir, "r")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi, err)
	}
	if strings.Contains(logs.String(), "credential store") {
		t.Errorf("the fallback to files logged:\n%s", logs.String())
	}
	if _, err := os.Stat(filepath.Join(home, "secrets", "store.enc")); err == nil {
		t.Error("tokens went to the encrypted file")
	}
}
