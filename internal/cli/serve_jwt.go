package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// oauthOptions are serve's flags for the HTTP gateway as an OAuth 2.1
// resource server (the MCP authorization spec): it accepts JWT access
// tokens of one issuer, and tells clients refused with 401 where to log in.
type oauthOptions struct {
	// OAuthIssuer is --oauth-issuer: the authorization server whose access
	// tokens are accepted ("" for none).
	OAuthIssuer string
	// ResourceURL is --resource-url: the gateway's /mcp URL as clients
	// reach it; the audience tokens must name and the resource of the
	// protected resource metadata.
	ResourceURL string
	// OAuthAudience is --oauth-audience: the audience tokens must name
	// instead of ResourceURL.
	OAuthAudience string
	// OAuthJWKSURL is --oauth-jwks-url: the issuer's keys, if its metadata
	// cannot be discovered.
	OAuthJWKSURL string
	// PrincipalClaim and GroupsClaim are --principal-claim (default sub)
	// and --groups-claim (default groups).
	PrincipalClaim, GroupsClaim string
	// OAuthScopes are --oauth-scope values, advertised in the metadata.
	OAuthScopes []string

	jwt *gateway.JWTVerifier // made from the flags before the command runs
}

// addOAuthFlags adds the OAuth flags to serve, and checks them before it
// runs.
func (o *ServeOptions) addOAuthFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.OAuthIssuer, "oauth-issuer", "", "accept JWT access tokens issued by the OAuth authorization server at `URL` (with --resource-url)")
	fl.StringVar(&o.ResourceURL, "resource-url", "", "the gateway's `URL` as clients reach it (e.g. https://gw.example.com/mcp): the tokens' audience and the RFC 9728 resource")
	fl.StringVar(&o.OAuthAudience, "oauth-audience", "", "want `AUD` in the tokens' aud instead of --resource-url")
	fl.StringVar(&o.OAuthJWKSURL, "oauth-jwks-url", "", "fetch the issuer's signing keys from `URL` instead of discovering them")
	fl.StringVar(&o.PrincipalClaim, "principal-claim", "", "name the caller by the token's `CLAIM` (default sub)")
	fl.StringVar(&o.GroupsClaim, "groups-claim", "", "take the caller's groups from the token's `CLAIM` (default groups; a.b for a nested claim)")
	fl.StringArrayVar(&o.OAuthScopes, "oauth-scope", nil, "advertise `SCOPE` for clients to ask for when they log in (repeatable)")
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if prev != nil {
			if err := prev(cmd, args); err != nil {
				return err
			}
		}
		return o.checkOAuth()
	}
}

// checkOAuth refuses OAuth flags that do not fit together and makes the
// verifier; it reaches no server.
func (o *ServeOptions) checkOAuth() error {
	others := o.OAuthAudience != "" || o.OAuthJWKSURL != "" || o.PrincipalClaim != "" || o.GroupsClaim != "" || len(o.OAuthScopes) > 0
	switch {
	case o.OAuthIssuer == "" && o.ResourceURL == "" && !others:
		return nil
	case o.HTTP == "":
		return Usagef("use them with --http ADDR", "--oauth-issuer, --resource-url and the other OAuth flags apply to HTTP only")
	case o.OAuthIssuer == "" || o.ResourceURL == "":
		return Usagef("pass both: --oauth-issuer https://idp.example.com/ --resource-url https://gw.example.com/mcp",
			"--oauth-issuer and --resource-url go together")
	}
	v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{
		Issuer:         o.OAuthIssuer,
		Resource:       o.ResourceURL,
		Audience:       o.OAuthAudience,
		JWKSURL:        o.OAuthJWKSURL,
		PrincipalClaim: o.PrincipalClaim,
		GroupsClaim:    o.GroupsClaim,
		Scopes:         o.OAuthScopes,
	})
	if err != nil {
		return Usagef("see 'switchboard serve --help' and docs/gateway.md", "%v", err)
	}
	o.jwt = v
	return nil
}

// withOAuth adds the access token verifier and the resource metadata URL
// to the gateway's auth options, when --oauth-issuer is set.
func (o *ServeOptions) withOAuth(ao *gateway.AuthOptions) *gateway.AuthOptions {
	if o.jwt != nil {
		ao.Verify = o.jwt.Verify
		ao.ResourceMetadataURL = o.jwt.MetadataURL()
	}
	return ao
}

// oauthRediscover bounds how long serve waits between tries of an issuer
// that did not answer at start-up (from 200 ms, doubling), to log when it
// does: an identity provider still starting, or one that makes its token
// keys only with its first token (Hydra), answers soon after.
const oauthRediscover = 5 * time.Second

// watchIssuer checks the issuer of v (nil: none) at start-up, and again,
// backing off, until it answers, logging when it does, so that a wrong
// --oauth-issuer shows in the log before the first client fails. (The
// gateway's handler serves its protected resource metadata.)
func watchIssuer(ctx context.Context, v *gateway.JWTVerifier, log *slog.Logger) {
	if v == nil {
		return
	}
	go func() {
		// Until the issuer answers, tokens are refused; say so once, and
		// say when it comes up (an identity provider still starting, a
		// network not up yet), so the log tells which of the two holds.
		warned := false
		wait := 200 * time.Millisecond // doubling up to oauthRediscover
		for {
			err := v.Discover(ctx)
			if err == nil {
				log.Info("accepting OAuth access tokens", "issuer", v.Issuer(), "resource", v.Resource(), "metadata", v.MetadataURL())
				return
			}
			if ctx.Err() != nil {
				return
			}
			if !warned {
				warned = true
				log.Warn("the OAuth issuer cannot be used yet; access tokens are refused until it can", "issuer", v.Issuer(), "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, oauthRediscover)
		}
	}()
}
