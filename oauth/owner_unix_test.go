//go:build unix

package oauth_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// A token file that belongs to another user is not used either: they could
// have put their own tokens there. A login replaces it with one of ours.
func TestOAuthTokenFileOfAnotherUserIsNotUsed(t *testing.T) {
	srv := testoauth.Start(t)
	dir := filepath.Join(t.TempDir(), "oauth")
	h := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, nil))
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "authorized"})
	h.Close()
	file := oauth.TokenFile(dir, "r")
	chownToNobody(t, file)

	var logs syncBuffer
	h2 := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir}, slog.New(slog.NewTextHandler(&logs, nil))))
	st := waitState(t, h2, "r", host.StateError, 30*time.Second)
	if !strings.Contains(st.Reason, "login required for r") {
		t.Errorf("reason = %q, want it to ask for a login", st.Reason)
	}
	if got := logs.String(); !strings.Contains(got, "belongs to uid 65534") {
		t.Errorf("the log does not say why the token file was not used:\n%s", got)
	}
	h2.Close()

	h3 := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true, Fresh: true}, nil))
	mustCall(t, h3, "mcp__r__echo", map[string]any{"text": "again"})
	h3.Close()
	if fi, err := os.Stat(file); err != nil || otherUID(fi) {
		t.Errorf("after a new login the token file is still another user's (%v)", err)
	}
}

// chownToNobody gives file to uid 65534, which only root may do.
func chownToNobody(t *testing.T, file string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	if err := os.Chown(file, 65534, 65534); err != nil {
		t.Fatal(err)
	}
}

func otherUID(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) != os.Getuid()
}

// An OAuth store directory that belongs to another user never receives
// tokens (its owner could replace what we write with their own): the
// login still works for this run, as when the store cannot be written,
// and the warning says whose the directory is.
func TestOAuthStoreDirOfAnotherUserIsRefused(t *testing.T) {
	srv := testoauth.Start(t)
	dir := filepath.Join(t.TempDir(), "oauth")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	chownToNobody(t, dir)
	var logs syncBuffer
	h := newHost(t, cfgOf(remote("r", config.TypeHTTP, srv.URL)), opts(&oauth.Options{Dir: dir, NoBrowser: true}, slog.New(slog.NewTextHandler(&logs, nil))))
	mustCall(t, h, "mcp__r__echo", map[string]any{"text": "authorized"})
	if got := logs.String(); !strings.Contains(got, "could not save the OAuth token") || !strings.Contains(got, "belongs to uid 65534") {
		t.Errorf("the log does not say why the token was not saved:\n%s", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files were written to another user's directory: %v", ents)
	}
}
