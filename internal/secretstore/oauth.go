package secretstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/oauth"
)

// OAuthTokens is the OS credential store alone, in the namespace "oauth",
// as the store package oauth keeps tokens in (oauth.Options.Secrets).
// Where no OS store answers its methods fail with oauth.ErrNoSecretStore,
// and the OAuth client keeps its 0600 token files: tokens never go to the
// encrypted file, whose protection is no better than theirs.
func (s *Store) OAuthTokens() oauth.SecretStore { return osOnly{s.In("oauth")} }

type osOnly struct{ s *Store }

func (o osOnly) ready(ctx context.Context) error {
	loc, err := o.s.Where(ctx)
	if err != nil {
		return err
	}
	if loc.Kind != KindOS {
		return fmt.Errorf("%w: %s", oauth.ErrNoSecretStore, loc.Note)
	}
	return nil
}

func (o osOnly) LoadSecret(ctx context.Context, key string) (string, bool, error) {
	if err := o.ready(ctx); err != nil {
		return "", false, err
	}
	return anyKind(o).LoadSecret(ctx, key)
}

func (o osOnly) SaveSecret(ctx context.Context, key, value string) error {
	if err := o.ready(ctx); err != nil {
		return err
	}
	return anyKind(o).SaveSecret(ctx, key, value)
}

func (o osOnly) DeleteSecret(ctx context.Context, key string) error {
	if err := o.ready(ctx); err != nil {
		return err
	}
	return anyKind(o).DeleteSecret(ctx, key)
}

// Tokens is the view s as an oauth.Options.Secrets that keeps tokens
// where s keeps values: the OS store when one answers, else the encrypted
// file. A team gateway keeps its members' OAuth logins so (namespace
// "oauth/principal/<name>"), on the machine and in the store of the
// members' other values; the user's own tokens are OAuthTokens'.
func (s *Store) Tokens() oauth.SecretStore { return anyKind{s} }

type anyKind struct{ s *Store }

func (a anyKind) LoadSecret(ctx context.Context, key string) (string, bool, error) {
	v, err := a.s.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return "", false, nil
	}
	return v, err == nil, err
}

func (a anyKind) SaveSecret(ctx context.Context, key, value string) error {
	_, err := a.s.Set(ctx, key, value)
	return err
}

func (a anyKind) DeleteSecret(ctx context.Context, key string) error {
	_, err := a.s.Delete(ctx, key)
	return err
}
