package main

import (
	"context"
	"fmt"

	"github.com/switchboard-mcp/switchboard/oauth"
)

// authOptions are the OAuth settings a user would give for the scenario:
// the suite's authorization server approves without a person, so the
// no-browser path follows its redirect; pre-registered or client
// credentials come from the scenario context, as a user would paste them.
func authOptions(scenario string, cctx map[string]any) (*oauth.Options, error) {
	str := func(k string) string { s, _ := cctx[k].(string); return s }
	o := &oauth.Options{
		NoBrowser:         true,
		RedirectURL:       "http://localhost:3000/callback",
		ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
		ClientID:          str("client_id"),
		ClientSecret:      str("client_secret"),
	}
	switch scenario {
	case "auth/client-credentials-basic":
		o.Grant = oauth.GrantClientCredentials
	case "auth/client-credentials-jwt":
		o.Grant = oauth.GrantClientCredentials
		o.PrivateKeyPEM = []byte(str("private_key_pem"))
		o.SigningAlg = str("signing_algorithm")
		if len(o.PrivateKeyPEM) == 0 {
			return nil, fmt.Errorf("context has no private_key_pem")
		}
	case "auth/wif-jwt-bearer":
		// The platform's workload identity token, as a file or command
		// would supply it.
		o.Grant = oauth.GrantJWTBearer
		jwt := str("valid_jwt")
		o.Assertion = func(context.Context) (string, error) { return jwt, nil }
	case "auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow":
		// The user's ID token from their enterprise login.
		o.Grant = oauth.GrantEnterprise
		idToken := str("idp_id_token")
		o.IdP = &oauth.EnterpriseIdP{
			Issuer: str("idp_issuer"), TokenEndpoint: str("idp_token_endpoint"),
			ClientID: str("idp_client_id"), ClientSecret: str("idp_client_secret"),
			IDToken: func(context.Context) (string, error) { return idToken, nil },
		}
	}
	return o, nil
}
