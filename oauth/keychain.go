package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// A SecretStore keeps small secrets by key, such as the operating system's
// credential store: with Options.Secrets set, the Client keeps each
// server's tokens there instead of in its token file (the DPoP key stays a
// file beside them: see DPoPKeyFile). The CLI's is the Secret Service,
// Keychain or Credential Manager (docs/oauth.md, What is stored, where).
type SecretStore interface {
	// LoadSecret returns the value stored under key; ok is false when
	// there is none.
	LoadSecret(ctx context.Context, key string) (value string, ok bool, err error)
	// SaveSecret stores value under key, replacing any.
	SaveSecret(ctx context.Context, key, value string) error
	// DeleteSecret removes key's value; none is not an error.
	DeleteSecret(ctx context.Context, key string) error
}

// ErrNoSecretStore is wrapped by the errors of a SecretStore that has no
// store to use on this machine (no OS credential store answers): the
// Client then keeps its token files, as without one, and says nothing.
var ErrNoSecretStore = errors.New("no secret store")

// keychainTimeout bounds one SecretStore call made outside a request.
const keychainTimeout = time.Minute

// tokenStore is where a Client's tokens live: the SecretStore when it
// answers, else the token files of dir.
type tokenStore struct {
	dir  string
	keys SecretStore
	log  *slog.Logger
}

// tokenKey is the key of a server's tokens in the SecretStore: the path of
// the token file it stands for, so that two Switchboard directories never
// share an entry.
func tokenKey(dir, server string) string { return TokenFile(dir, server) }

func (t tokenStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), keychainTimeout)
}

// load returns a server's stored tokens; (nil, nil) when there are none.
// Tokens found in a file while the SecretStore answers are moved there,
// once, and the file removed (a log line says so).
func (t tokenStore) load(server string) (*storedAuth, error) {
	if t.dir == "" {
		return nil, nil
	}
	if t.keys != nil {
		ctx, cancel := t.ctx()
		defer cancel()
		v, ok, err := t.keys.LoadSecret(ctx, tokenKey(t.dir, server))
		switch {
		case err == nil && ok:
			return parseStoredAuth([]byte(v))
		case err != nil && !errors.Is(err, ErrNoSecretStore):
			t.log.Warn("the credential store could not be read; using the token file, if any", "server", server, "error", err.Error())
		}
	}
	st, err := loadStoredAuth(t.dir, server)
	if st == nil || err != nil || t.keys == nil {
		return st, err
	}
	t.migrate(server, st)
	return st, nil
}

// migrate moves a token file's tokens into the SecretStore: read back
// before the file goes, so that nothing is lost if the store misbehaves.
func (t tokenStore) migrate(server string, st *storedAuth) {
	ctx, cancel := t.ctx()
	defer cancel()
	file := TokenFile(t.dir, server)
	data, err := marshalStoredAuth(st)
	if err == nil {
		err = t.keys.SaveSecret(ctx, tokenKey(t.dir, server), string(data))
	}
	if err == nil {
		var back string
		var ok bool
		back, ok, err = t.keys.LoadSecret(ctx, tokenKey(t.dir, server))
		if err == nil && (!ok || back != string(data)) {
			err = errors.New("the stored value did not read back the same")
		}
	}
	if err != nil {
		if !errors.Is(err, ErrNoSecretStore) {
			t.log.Warn("the OAuth tokens stay in their file: the credential store did not take them", "server", server, "file", file, "error", err.Error())
		}
		return
	}
	if err := os.Remove(file); err != nil {
		t.log.Warn("the OAuth tokens were copied to the credential store, but their file could not be removed", "server", server, "file", file, "error", err.Error())
		return
	}
	t.log.Warn("moved the OAuth tokens from their file into the credential store (once; the file is gone)", "server", server, "file", file)
}

// save stores a server's tokens: in the SecretStore when it answers (and
// the file, if any, is removed), else in the file.
func (t tokenStore) save(server string, st *storedAuth) error {
	if t.dir == "" {
		return nil
	}
	if t.keys != nil {
		ctx, cancel := t.ctx()
		defer cancel()
		data, err := marshalStoredAuth(st)
		if err != nil {
			return err
		}
		err = t.keys.SaveSecret(ctx, tokenKey(t.dir, server), string(data))
		if err == nil {
			if _, err := removeStoreFile(TokenFile(t.dir, server)); err != nil {
				t.log.Warn("an old OAuth token file could not be removed", "server", server, "error", err.Error())
			}
			return nil
		}
		if !errors.Is(err, ErrNoSecretStore) {
			t.log.Warn("the credential store did not take the OAuth tokens; they go to their file", "server", server, "error", err.Error())
		}
	}
	return saveStoredAuth(t.dir, server, st)
}

// remove forgets a server's tokens, in the SecretStore and the file. It
// reports whether there were any.
func (t tokenStore) remove(server string) (bool, error) {
	had := false
	if t.keys != nil {
		ctx, cancel := t.ctx()
		defer cancel()
		_, ok, err := t.keys.LoadSecret(ctx, tokenKey(t.dir, server))
		if err == nil && ok {
			had = true
			err = t.keys.DeleteSecret(ctx, tokenKey(t.dir, server))
		}
		if err != nil && !errors.Is(err, ErrNoSecretStore) {
			return false, fmt.Errorf("removing the tokens of %s from the credential store: %v", server, err)
		}
	}
	hadFile, err := removeStoreFile(TokenFile(t.dir, server))
	if err != nil {
		return had, fmt.Errorf("removing the tokens of %s: %v", server, err)
	}
	return had || hadFile, nil
}

// LogoutStore is Logout for tokens that may be kept in keys (the
// Options.Secrets of the Client that stored them): it forgets them there
// and in dir, with the DPoP key.
func LogoutStore(dir string, keys SecretStore, server string) (bool, error) {
	hadTokens, err := tokenStore{dir: dir, keys: keys, log: slog.New(slog.DiscardHandler)}.remove(server)
	if err != nil {
		return false, err
	}
	hadKey, err := removeStoreFile(DPoPKeyFile(dir, server))
	if err != nil {
		return hadTokens, fmt.Errorf("removing the DPoP key of %s: %v", server, err)
	}
	return hadTokens || hadKey, nil
}

// tokens is where a's tokens live.
func (a *serverAuth) tokens() tokenStore {
	return tokenStore{dir: a.opts.Dir, keys: a.opts.Secrets, log: a.log}
}
