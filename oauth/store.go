package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/atomicfile"
	"github.com/switchboard-mcp/switchboard/internal/fileowner"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// storedAuth is one server's token file: the token, and what refreshing
// it needs (the client and the token endpoint). Resource binds it to the
// server URL it was issued for. DPoPJKT, for a DPoP-bound token, is the
// thumbprint of the key in DPoPKeyFile it is bound to.
type storedAuth struct {
	Resource      string        `json:"resource"`
	ClientID      string        `json:"client_id"`
	ClientSecret  string        `json:"client_secret,omitempty"`
	PreRegistered bool          `json:"pre_registered,omitempty"`
	TokenURL      string        `json:"token_url"`
	AuthStyle     int           `json:"auth_style,omitempty"`
	Scopes        []string      `json:"scopes,omitempty"`
	Token         *oauth2.Token `json:"token"`
	DPoPJKT       string        `json:"dpop_jkt,omitempty"`
}

func newStoredAuth(resource string, cfg *oauth2.Config, tok *oauth2.Token) *storedAuth {
	return &storedAuth{
		Resource: resource, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle), Scopes: cfg.Scopes, Token: tok,
	}
}

func (st *storedAuth) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: st.ClientID, ClientSecret: st.ClientSecret, Scopes: st.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)},
	}
}

func (st *storedAuth) tokenSource(ctx context.Context, client *http.Client) oauth2.TokenSource {
	return st.config().TokenSource(context.WithValue(ctx, oauth2.HTTPClient, client), st.Token)
}

// parseStoredAuth reads a token file. A file that is not one is an error
// (the caller ignores it and asks for a new login); nothing of its content
// is quoted, since it holds secrets.
func parseStoredAuth(data []byte) (*storedAuth, error) {
	var st storedAuth
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, errors.New("not a token file (invalid JSON)")
	}
	if st.Token == nil || st.Token.AccessToken == "" && st.Token.RefreshToken == "" {
		return nil, errors.New("not a token file (no token)")
	}
	u, err := url.Parse(st.Resource)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("not a token file (no server URL)")
	}
	if st.TokenURL != "" {
		if t, err := url.Parse(st.TokenURL); err != nil || (t.Scheme != "http" && t.Scheme != "https") || t.Host == "" {
			return nil, errors.New("not a token file (bad token endpoint)")
		}
	}
	if st.DPoPJKT != "" {
		if b, err := b64.Strict().DecodeString(st.DPoPJKT); err != nil || len(b) != sha256.Size {
			return nil, errors.New("not a token file (bad DPoP key thumbprint)")
		}
	}
	return &st, nil
}

// TokenFile is where OAuth tokens of a server are kept under dir.
func TokenFile(dir, server string) string {
	return filepath.Join(dir, url.PathEscape(server)+".json")
}

// tokenFileMu serializes writes of token files within the process.
var tokenFileMu sync.Mutex

// loadStoredAuth reads a server's token file; (nil, nil) when there is
// none. A file others may read (Switchboard writes 0600) is not used: its
// tokens may have been copied, and the next login replaces it, 0600 again.
func loadStoredAuth(dir, server string) (*storedAuth, error) {
	if dir == "" {
		return nil, nil
	}
	file := TokenFile(dir, server)
	data, fi, err := safefile.Read(file, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("%s has mode %04o, so others may have read its tokens (it must be 0600); log in again to replace it", file, fi.Mode().Perm())
	}
	if who := fileowner.Other(fi); who != "" {
		return nil, fmt.Errorf("%s belongs to %s, so its tokens may be theirs; remove it and log in again", file, who)
	}
	return parseStoredAuth(data)
}

// saveStoredAuth writes the token file 0600 (directory 0700), replacing
// the old one in one step.
func saveStoredAuth(dir, server string, st *storedAuth) error {
	if dir == "" {
		return nil
	}
	data, err := marshalStoredAuth(st)
	if err != nil {
		return err
	}
	return writeStoreFile(dir, TokenFile(dir, server), data)
}

func marshalStoredAuth(st *storedAuth) ([]byte, error) { return json.MarshalIndent(st, "", "  ") }

// saveLogin stores what a login obtained: the key first, then the tokens
// that name it, so the token file (the one that is read first) never names
// a key that is not there yet. A token that is not DPoP-bound removes a
// key file left by an earlier login. If the key cannot be written, the
// tokens are not either: tokens whose key is lost are useless.
func saveLogin(ts tokenStore, server string, st *storedAuth, key *dpopKey) error {
	dir := ts.dir
	if dir == "" {
		return nil
	}
	if key != nil {
		if err := saveDPoPKey(dir, server, key.signer); err != nil {
			return fmt.Errorf("saving the DPoP key: %v", err)
		}
		st.DPoPJKT = key.jkt
	} else {
		st.DPoPJKT = ""
	}
	if err := ts.save(server, st); err != nil {
		return err
	}
	if key == nil {
		if _, err := removeStoreFile(DPoPKeyFile(dir, server)); err != nil {
			return fmt.Errorf("removing the old DPoP key: %v", err)
		}
	}
	return nil
}

// writeStoreFile writes data to file (in dir) 0600, replacing the old file
// in one step. dir is made 0700, and tightened to 0700 if others may use it
// (it is the OAuth store, and nothing else belongs there).
func writeStoreFile(dir, file string, data []byte) error {
	tokenFileMu.Lock()
	defer tokenFileMu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err == nil {
		if who := fileowner.Other(fi); who != "" {
			// Its owner could swap the files we write for their own.
			return fmt.Errorf("%s belongs to %s, so it cannot hold your tokens; remove it and log in again", dir, who)
		}
		if fi.Mode().Perm()&0o077 != 0 && runtime.GOOS != "windows" {
			if err := os.Chmod(dir, 0o700); err != nil {
				return err
			}
		}
	}
	return atomicfile.WriteFile(file, data, 0o600)
}

// Logout forgets the OAuth tokens stored for server under dir, and the
// DPoP key they were bound to. It reports whether there were any.
func Logout(dir, server string) (bool, error) { return LogoutStore(dir, nil, server) }

// persisting wraps a token source so a refreshed token is saved.
func (a *serverAuth) persisting(ts oauth2.TokenSource, st *storedAuth) oauth2.TokenSource {
	return &savingSource{a: a, ts: ts, st: *st}
}

type savingSource struct {
	a  *serverAuth
	ts oauth2.TokenSource

	mu sync.Mutex
	st storedAuth
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	tok, err := s.ts.Token()
	if err != nil || tok == nil {
		return tok, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Token == nil || s.st.Token.AccessToken != tok.AccessToken {
		s.st.Token = tok
		if err := s.a.tokens().save(s.a.name, &s.st); err != nil {
			s.a.log.Warn("could not save the refreshed OAuth token", "server", s.a.name, "error", err.Error())
		}
	}
	return tok, nil
}
