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
	v, err := o.s.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return "", false, nil
	}
	return v, err == nil, err
}

func (o osOnly) SaveSecret(ctx context.Context, key, value string) error {
	if err := o.ready(ctx); err != nil {
		return err
	}
	_, err := o.s.Set(ctx, key, value)
	return err
}

func (o osOnly) DeleteSecret(ctx context.Context, key string) error {
	if err := o.ready(ctx); err != nil {
		return err
	}
	_, err := o.s.Delete(ctx, key)
	return err
}
