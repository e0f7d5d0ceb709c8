package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// More grant types for Options.Grant: flows without a person, where
// the client proves who it is with an assertion.
const (
	// GrantJWTBearer is the RFC 7523 JWT-bearer grant with a workload
	// identity token (SEP-1933): Options.Assertion supplies the JWT.
	GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// GrantEnterprise is enterprise-managed authorization (SEP-990): the
	// user's token from the enterprise identity provider (Options.IdP)
	// is exchanged there for an identity assertion grant (RFC 8693), which
	// the server's authorization server takes as a JWT-bearer grant.
	GrantEnterprise = "enterprise"
)

// AssertionFunc returns a fresh assertion (a signed JWT), e.g. a workload
// identity token read from a file the platform keeps current.
type AssertionFunc func(ctx context.Context) (string, error)

// EnterpriseIdP is the enterprise identity provider of GrantEnterprise.
type EnterpriseIdP struct {
	// Issuer is the provider's issuer URL; its token endpoint is discovered
	// unless TokenEndpoint is set.
	Issuer, TokenEndpoint string
	// ClientID and ClientSecret are this client's registration at the
	// provider (ClientSecret may be empty for a public client).
	ClientID, ClientSecret string
	// IDToken returns the user's ID token from the provider (an OIDC login).
	IDToken AssertionFunc
}

const (
	assertionTypeJWT = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	tokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
)

// grantHandler gets tokens without a person: client credentials (secret or
// private-key JWT), a workload JWT-bearer assertion, or an enterprise
// identity assertion. A grant the authorization server refused is not
// retried: the error stays for the Client's life, since asking again
// with the same credentials cannot succeed.
type grantHandler struct {
	a *serverAuth

	mu      sync.Mutex
	ts      oauth2.TokenSource
	refused error
	granted []string // scopes granted so far (step-up keeps them)
}

func (g *grantHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ts, nil
}

func (g *grantHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer drain(resp)
	g.mu.Lock()
	refused := g.refused
	g.mu.Unlock()
	if refused != nil {
		return refused
	}
	o := g.a.opts
	client := g.a.client
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	prm, asm, err := discover(ctx, client, challenges, req.URL)
	if err != nil {
		return err
	}
	scopes := challengeScopes(challenges)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	g.mu.Lock()
	for _, s := range g.granted {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	g.mu.Unlock()

	form := url.Values{}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	form.Set("resource", prm.Resource)
	secretAuth := o.ClientSecret != ""
	switch o.Grant {
	case GrantClientCredentials:
		form.Set("grant_type", "client_credentials")
		if len(o.PrivateKeyPEM) > 0 {
			signer, err := parseSigningKey(o.PrivateKeyPEM, o.SigningAlg)
			if err != nil {
				return fmt.Errorf("client key: %v", err)
			}
			now := time.Now()
			assertion, err := signer.sign(nil, map[string]any{
				"iss": o.ClientID, "sub": o.ClientID, "aud": asm.Issuer,
				"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": randomID(),
			})
			if err != nil {
				return err
			}
			form.Set("client_assertion_type", assertionTypeJWT)
			form.Set("client_assertion", assertion)
			secretAuth = false
		}
	case GrantJWTBearer:
		if o.Assertion == nil {
			return errors.New("the JWT-bearer grant needs an assertion (Options.Assertion)")
		}
		assertion, err := o.Assertion(ctx)
		if err != nil {
			return fmt.Errorf("workload assertion: %v", err)
		}
		form.Set("grant_type", GrantJWTBearer)
		form.Set("assertion", assertion)
	case GrantEnterprise:
		jag, err := g.identityAssertion(ctx, asm.Issuer, prm.Resource, scopes)
		if err != nil {
			return err
		}
		form.Set("grant_type", GrantJWTBearer)
		form.Set("assertion", jag)
	}
	if !secretAuth && form.Get("client_assertion") == "" && o.ClientID != "" {
		form.Set("client_id", o.ClientID)
	}
	var basic *url.Userinfo
	if secretAuth {
		if slices.Contains(asm.TokenEndpointAuthMethodsSupported, "client_secret_basic") || len(asm.TokenEndpointAuthMethodsSupported) == 0 {
			// RFC 6749 §2.3.1: form-encode before Basic.
			basic = url.UserPassword(url.QueryEscape(o.ClientID), url.QueryEscape(o.ClientSecret))
		} else {
			form.Set("client_id", o.ClientID)
			form.Set("client_secret", o.ClientSecret)
		}
	}
	tok, err := tokenRequest(ctx, client, asm.TokenEndpoint, form, basic)
	if err != nil {
		var te *tokenError
		if errors.As(err, &te) {
			g.mu.Lock()
			g.refused = fmt.Errorf("authorization server refused the %s grant: %w", grantName(o.Grant), err)
			err = g.refused
			g.mu.Unlock()
		}
		return err
	}
	g.a.commitDPoP(tok)
	g.mu.Lock()
	g.ts = oauth2.StaticTokenSource(tok)
	g.granted = scopes
	g.mu.Unlock()
	return nil
}

func grantName(g string) string {
	if g == GrantJWTBearer {
		return "JWT-bearer"
	}
	return strings.ReplaceAll(g, "_", " ")
}

// identityAssertion exchanges the user's ID token at the enterprise
// identity provider for an identity assertion grant (ID-JAG) naming the
// server's authorization server and resource.
func (g *grantHandler) identityAssertion(ctx context.Context, issuer, resource string, scopes []string) (string, error) {
	idp := g.a.opts.IdP
	if idp == nil || idp.IDToken == nil {
		return "", errors.New("enterprise authorization needs an identity provider with an ID token (Options.IdP)")
	}
	idToken, err := idp.IDToken(ctx)
	if err != nil {
		return "", fmt.Errorf("ID token: %v", err)
	}
	endpoint := idp.TokenEndpoint
	if endpoint == "" {
		meta, err := auth.GetAuthServerMetadata(ctx, idp.Issuer, g.a.client)
		if err != nil || meta == nil {
			return "", fmt.Errorf("identity provider %s: no metadata (%v)", idp.Issuer, err)
		}
		endpoint = meta.TokenEndpoint
	}
	creds := &oauthex.ClientCredentials{ClientID: idp.ClientID}
	if idp.ClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: idp.ClientSecret}
	}
	tok, err := oauthex.ExchangeToken(ctx, endpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: tokenTypeIDJAG,
		Audience:           issuer,
		Resource:           resource,
		Scope:              scopes,
		SubjectToken:       idToken,
		SubjectTokenType:   tokenTypeIDToken,
	}, creds, g.a.client)
	if err != nil {
		return "", fmt.Errorf("token exchange at the identity provider: %v", err)
	}
	return tok.AccessToken, nil
}

// discover finds the server's protected-resource metadata (the challenge's
// resource_metadata, then the path-based and root well-known URLs) and its
// authorization server's metadata, with the 2025-03-26 fallbacks when
// there is none.
func discover(ctx context.Context, client *http.Client, challenges []oauthex.Challenge, server *url.URL) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	resource := (&url.URL{Scheme: server.Scheme, Host: server.Host, Path: server.Path}).String()
	root := &url.URL{Scheme: server.Scheme, Host: server.Host}
	var candidates []string
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			candidates = append(candidates, u)
		}
	}
	if p := strings.TrimSuffix(server.Path, "/"); p != "" {
		candidates = append(candidates, root.String()+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, root.String()+"/.well-known/oauth-protected-resource")
	var prm *oauthex.ProtectedResourceMetadata
	for _, c := range candidates {
		m, err := oauthex.GetProtectedResourceMetadata(ctx, c, resource, client)
		if err == nil && m != nil {
			prm = m
			break
		}
	}
	if prm == nil {
		prm = &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{root.String()}}
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, nil, errors.New("protected resource metadata names no authorization server")
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	if err != nil {
		return nil, nil, fmt.Errorf("authorization server metadata: %v", err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: issuer, TokenEndpoint: strings.TrimSuffix(issuer, "/") + "/token"}
	}
	return prm, asm, nil
}

func challengeScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if s := c.Params["scope"]; s != "" {
			return strings.Fields(s)
		}
	}
	return nil
}

// tokenError is an error answer of a token endpoint (RFC 6749 §5.2).
type tokenError struct {
	Code        string `json:"error"`
	Description string `json:"error_description"`
	Status      int    `json:"-"`
}

func (e *tokenError) Error() string {
	msg := fmt.Sprintf("%s (HTTP %d)", oneLine(e.Code), e.Status)
	if e.Description != "" {
		msg += ": " + oneLine(e.Description)
	}
	return msg
}

// tokenRequest POSTs a token request and reads the answer.
func tokenRequest(ctx context.Context, client *http.Client, endpoint string, form url.Values, basic *url.Userinfo) (*oauth2.Token, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic != nil {
		pw, _ := basic.Password()
		req.SetBasicAuth(basic.Username(), pw)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	return parseTokenResponse(resp.StatusCode, body)
}

// parseTokenResponse reads a token endpoint's answer: a token on 2xx, a
// *tokenError otherwise. Token values are never put in errors.
func parseTokenResponse(status int, body []byte) (*oauth2.Token, error) {
	if status < 200 || status > 299 {
		te := &tokenError{Status: status}
		if json.Unmarshal(body, te) != nil || te.Code == "" {
			te.Code = "error"
		}
		return nil, te
	}
	var tr struct {
		AccessToken  string          `json:"access_token"`
		TokenType    string          `json:"token_type"`
		RefreshToken string          `json:"refresh_token"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		return nil, errors.New("token endpoint answered with something that is not JSON")
	}
	if tr.AccessToken == "" {
		return nil, errors.New("token endpoint answered without an access_token")
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType, RefreshToken: tr.RefreshToken}
	var secs float64
	if len(tr.ExpiresIn) > 0 && json.Unmarshal(tr.ExpiresIn, &secs) == nil && secs > 0 {
		tok.Expiry = time.Now().Add(time.Duration(secs) * time.Second)
	}
	return tok, nil
}

// oneLine keeps the first line of s: text from a server never spans lines
// in an error.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
