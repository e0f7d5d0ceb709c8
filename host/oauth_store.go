package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/oauth2"
)

// storedAuth is one server's token file: the token, and what refreshing
// it needs (the client and the token endpoint). Resource binds it to the
// server URL it was issued for.
type storedAuth struct {
	Resource      string        `json:"resource"`
	ClientID      string        `json:"client_id"`
	ClientSecret  string        `json:"client_secret,omitempty"`
	PreRegistered bool          `json:"pre_registered,omitempty"`
	TokenURL      string        `json:"token_url"`
	AuthStyle     int           `json:"auth_style,omitempty"`
	Scopes        []string      `json:"scopes,omitempty"`
	Token         *oauth2.Token `json:"token"`
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
	return &st, nil
}

// TokenFile is where OAuth tokens of a server are kept under dir.
func TokenFile(dir, server string) string {
	return filepath.Join(dir, url.PathEscape(server)+".json")
}

// tokenFileMu serializes writes of token files within the process.
var tokenFileMu sync.Mutex

func loadStoredAuth(dir, server string) (*storedAuth, error) {
	if dir == "" {
		return nil, nil
	}
	data, err := os.ReadFile(TokenFile(dir, server))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseStoredAuth(data)
}

// saveStoredAuth writes the token file 0600 (directory 0700), replacing
// the old one in one step.
func saveStoredAuth(dir, server string, st *storedAuth) error {
	if dir == "" {
		return nil
	}
	tokenFileMu.Lock()
	defer tokenFileMu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".token-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), TokenFile(dir, server))
}

// Logout forgets the OAuth tokens stored for server under dir. It reports
// whether there were any.
func Logout(dir, server string) (bool, error) {
	err := os.Remove(TokenFile(dir, server))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("removing the tokens of %s: %v", server, err)
	}
	return true, nil
}

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
		if err := saveStoredAuth(s.a.opts.Dir, s.a.name, &s.st); err != nil {
			s.a.h.log.Warn("oauth: could not save the refreshed token", "server", s.a.name, "error", err.Error())
		}
	}
	return tok, nil
}
