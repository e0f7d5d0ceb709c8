package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hydratest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// claimsOf decodes a JWT's payload without checking it: the test looks at
// what the IdP put in, to know a refusal is for the reason it tests.
func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func audOf(c map[string]any) []string {
	var out []string
	switch a := c["aud"].(type) {
	case string:
		out = append(out, a)
	case []any:
		for _, e := range a {
			s, _ := e.(string)
			out = append(out, s)
		}
	}
	return out
}

// TestJWTHydra is issue 19's "Done means" for OAuth, on the verifier: a
// token from a real IdP (ORY Hydra) is accepted, and one for another
// audience, one expired and one signed by another key (a second Hydra
// naming the first one's issuer) are refused, each for its own reason; a
// user's token from the authorization code flow maps sub and the groups
// claim to the principal; a rotated signing key needs no restart.
func TestJWTHydra(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts ORY Hydra")
	}
	idp := hydratest.Start(t, &hydratest.Options{TopLevelClaims: []string{"groups"}})
	impostor := hydratest.Start(t, &hydratest.Options{Issuer: idp.Issuer})
	const resource = "https://gw.example.test/mcp"
	const other = "https://other.example.test/mcp"

	// The verifier's clock is the real one, moved on by skew for the key
	// rotation below.
	var skew atomic.Int64
	v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{Issuer: idp.Issuer, Resource: resource, Now: func() time.Time {
		return time.Now().Add(time.Duration(skew.Load()))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Discover(context.Background()); err != nil {
		t.Fatalf("Discover: %v", err)
	}
	svc := idp.CreateClient(t, hydratest.Client{Audience: []string{resource, other}})
	verify := func(tok string) (*gateway.Principal, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return v.Verify(ctx, tok)
	}

	t.Run("accepted", func(t *testing.T) {
		p, err := verify(idp.Token(t, svc, resource))
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		// Client credentials: the subject is the client.
		if p.Name != svc.ID || p.Issuer != idp.Issuer || !p.Keyed() || p.KeyID != "" {
			t.Errorf("principal = %+v, want name %s from %s", p, svc.ID, idp.Issuer)
		}
	})

	t.Run("another audience", func(t *testing.T) {
		tok := idp.Token(t, svc, other)
		if got := audOf(claimsOf(t, tok)); len(got) != 1 || got[0] != other {
			t.Fatalf("Hydra issued aud %v, want [%s]", got, other)
		}
		_, err := verify(tok)
		if !errors.Is(err, gateway.ErrUnauthorized) || !errors.Is(err, gateway.ErrTokenAudience) {
			t.Errorf("Verify = %v, want ErrUnauthorized and ErrTokenAudience", err)
		}
	})

	t.Run("another key", func(t *testing.T) {
		c := impostor.CreateClient(t, hydratest.Client{Audience: []string{resource}})
		tok := impostor.Token(t, c, resource)
		cl := claimsOf(t, tok)
		if cl["iss"] != idp.Issuer || len(audOf(cl)) != 1 || audOf(cl)[0] != resource {
			t.Fatalf("the impostor's token claims iss %v aud %v; the test needs the real issuer and audience", cl["iss"], audOf(cl))
		}
		_, err := verify(tok)
		if !errors.Is(err, gateway.ErrUnauthorized) || !errors.Is(err, gateway.ErrTokenSignature) {
			t.Errorf("Verify = %v, want ErrUnauthorized and ErrTokenSignature", err)
		}
	})

	t.Run("expired", func(t *testing.T) {
		c := idp.CreateClient(t, hydratest.Client{Audience: []string{resource}})
		idp.SetAccessTokenLifespan(t, c.ID, time.Second)
		tok := idp.Token(t, c, resource)
		exp, _ := claimsOf(t, tok)["exp"].(float64)
		iat, _ := claimsOf(t, tok)["iat"].(float64)
		if exp == 0 || exp-iat > 5 {
			t.Fatalf("token lifespan %vs, want about 1s", exp-iat)
		}
		// Wait it out (the clock of the check is the real one).
		time.Sleep(time.Until(time.Unix(int64(exp)+1, 0)))
		_, err := verify(tok)
		if !errors.Is(err, gateway.ErrUnauthorized) || !errors.Is(err, gateway.ErrTokenExpired) {
			t.Errorf("Verify = %v, want ErrUnauthorized and ErrTokenExpired", err)
		}
	})

	// A token checked once is not checked again for a while, but never
	// past its exp: on a clock of the test's, a token that lasts a second
	// is accepted at its iat, twice, and refused half a second after exp.
	t.Run("remembered, not past exp", func(t *testing.T) {
		c := idp.CreateClient(t, hydratest.Client{Audience: []string{resource}})
		idp.SetAccessTokenLifespan(t, c.ID, time.Second)
		tok := idp.Token(t, c, resource)
		iat, _ := claimsOf(t, tok)["iat"].(float64)
		exp, _ := claimsOf(t, tok)["exp"].(float64)
		var mu sync.Mutex
		now := time.Unix(int64(iat), 0)
		cv, err := gateway.NewJWTVerifier(&gateway.JWTOptions{Issuer: idp.Issuer, Resource: resource, Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if _, err := cv.Verify(context.Background(), tok); err != nil {
				t.Fatalf("at iat, check %d: %v", i+1, err)
			}
		}
		mu.Lock()
		now = time.Unix(int64(exp), 5e8)
		mu.Unlock()
		if _, err := cv.Verify(context.Background(), tok); !errors.Is(err, gateway.ErrTokenExpired) {
			t.Errorf("after exp: %v, want ErrTokenExpired", err)
		}
	})

	t.Run("user with groups", func(t *testing.T) {
		tok := userToken(t, idp, hydratest.User{
			Subject:  "alice",
			Claims:   map[string]any{"groups": []any{"eng", "ops", "not a group!", "eng"}},
			Audience: []string{resource},
		})
		p, err := verify(tok)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if diff := cmp.Diff(&gateway.Principal{Name: "alice", Groups: []string{"eng", "ops"}, Issuer: idp.Issuer}, p); diff != "" {
			t.Errorf("principal (-want +got):\n%s", diff)
		}
		// Through Auth, as the HTTP gateway asks it: the auth file's
		// rules for the principal's group apply.
		dir := t.TempDir()
		file := filepath.Join(dir, gateway.AuthFileName)
		if err := os.WriteFile(file, []byte(`{"principals": {"group:eng": {"deny": ["mcp__prod"]}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		a := gateway.NewAuth(&gateway.AuthOptions{File: file, Verify: v.Verify, ResourceMetadataURL: v.MetadataURL()})
		got, err := a.Authenticate(context.Background(), tok)
		if err != nil || got.Name != "alice" {
			t.Fatalf("Authenticate = %+v, %v", got, err)
		}
		if rules := a.Scoped().For(got.Name, got.Groups); len(rules) != 1 || rules[0].Text != "mcp__prod" || rules[0].List != policy.Deny {
			t.Errorf("rules for alice of eng = %v, want the deny of group:eng", rules)
		}
	})

	// Last: the issuer's keys change under the verifier, which has the old
	// set cached; a token by the new key is accepted without a restart —
	// once the verifier may fetch the keys again, at most every 30 s
	// (TestJWTUnknownKeyIDsDoNotRefetch): its clock moves past that.
	t.Run("key rotation", func(t *testing.T) {
		skew.Add(int64(31 * time.Second))
		idp.RotateAccessTokenKey(t, "rotated-1")
		tok := idp.Token(t, svc, resource)
		hdr, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
		if err != nil || !strings.Contains(string(hdr), `"kid":"rotated-1"`) {
			t.Fatalf("after rotation Hydra signs with %s; the test needs the new key", hdr)
		}
		if p, err := verify(tok); err != nil || p.Name != svc.ID {
			t.Errorf("a token by the rotated key: %+v, %v", p, err)
		}
	})
}

// userToken runs the authorization code flow (with PKCE) of a client of
// idp, with u as the user, and returns the access token.
func userToken(t *testing.T, idp *hydratest.Server, u hydratest.User) string {
	t.Helper()
	const redirect = "http://127.0.0.1:9/callback"
	c := idp.CreateClient(t, hydratest.Client{GrantTypes: []string{"authorization_code"}, RedirectURIs: []string{redirect}, Scope: "openid"})
	cfg := &oauth2.Config{
		ClientID: c.ID, ClientSecret: c.Secret, RedirectURL: redirect, Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: idp.Public + "/oauth2/auth", TokenURL: idp.Public + "/oauth2/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
	verifier := oauth2.GenerateVerifier()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, err := idp.Authorize(ctx, cfg.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier)), u)
	if err != nil {
		t.Fatalf("authorize: %v", err)
	}
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return tok.AccessToken
}

func TestJWTPrincipalFromClaims(t *testing.T) {
	for _, tc := range []struct {
		name, nameClaim, groupsClaim string
		claims                       string
		want                         *gateway.Principal
		wantErr                      bool
	}{
		{name: "sub and groups", nameClaim: "sub", groupsClaim: "groups", claims: `{"sub":"alice","groups":["ops","eng","ops"]}`,
			want: &gateway.Principal{Name: "alice", Groups: []string{"eng", "ops"}}},
		{name: "groups as a string", nameClaim: "sub", groupsClaim: "scope", claims: `{"sub":"bob","scope":"read  eng"}`,
			want: &gateway.Principal{Name: "bob", Groups: []string{"eng", "read"}}},
		{name: "nested path", nameClaim: "preferred_username", groupsClaim: "realm_access.roles", claims: `{"preferred_username":"carol","realm_access":{"roles":["admin",7,"x y"]}}`,
			want: &gateway.Principal{Name: "carol", Groups: []string{"admin"}}},
		{name: "dotted top-level name first", nameClaim: "sub", groupsClaim: "https://example.com/groups", claims: `{"sub":"d","https://example.com/groups":["eng"]}`,
			want: &gateway.Principal{Name: "d", Groups: []string{"eng"}}},
		{name: "no groups claim", nameClaim: "sub", groupsClaim: "groups", claims: `{"sub":"auth0|123"}`,
			want: &gateway.Principal{Name: "auth0|123", Groups: []string{}}},
		{name: "no name", nameClaim: "sub", groupsClaim: "groups", claims: `{"groups":["eng"]}`, wantErr: true},
		{name: "name not a string", nameClaim: "sub", groupsClaim: "groups", claims: `{"sub":42}`, wantErr: true},
		{name: "the shared token's name", nameClaim: "sub", groupsClaim: "groups", claims: `{"sub":"token"}`, wantErr: true},
		{name: "a group's name", nameClaim: "sub", groupsClaim: "groups", claims: `{"sub":"group:eng"}`, wantErr: true},
		{name: "control character", nameClaim: "sub", groupsClaim: "groups", claims: `{"sub":"eve\u001b[2J"}`, wantErr: true},
		{name: "too long", nameClaim: "sub", groupsClaim: "groups", claims: `{"sub":"` + strings.Repeat("a", gateway.MaxPrincipalName+1) + `"}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var claims map[string]any
			if err := json.Unmarshal([]byte(tc.claims), &claims); err != nil {
				t.Fatal(err)
			}
			got, err := gateway.PrincipalFromClaims(claims, tc.nameClaim, tc.groupsClaim)
			if tc.wantErr {
				if !errors.Is(err, gateway.ErrTokenClaims) {
					t.Errorf("err = %v, want ErrTokenClaims", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestJWTOptionsRefused(t *testing.T) {
	for _, o := range []gateway.JWTOptions{
		{},
		{Issuer: "https://idp.example.com/"},
		{Resource: "https://gw.example.com/mcp"},
		// A network attacker could answer for these with keys of its own.
		{Issuer: "http://idp.example.com/", Resource: "https://gw.example.com/mcp"},
		{Issuer: "https://idp.example.com/", JWKSURL: "http://idp.example.com/jwks", Resource: "https://gw.example.com/mcp"},
		{Issuer: "https://idp.example.com/", Resource: "gw.example.com/mcp"},
		{Issuer: "https://idp.example.com/", Resource: "https://gw.example.com/mcp?x=1"},
	} {
		if _, err := gateway.NewJWTVerifier(&o); err == nil {
			t.Errorf("NewJWTVerifier(%+v) accepted", o)
		}
	}
	for _, o := range []gateway.JWTOptions{
		{Issuer: "http://127.0.0.1:4444/", Resource: "http://127.0.0.1:8080/mcp"},
		{Issuer: "http://localhost:4444", Resource: "https://gw.example.com/mcp"},
		{Issuer: "https://idp.example.com/realms/team", Resource: "https://gw.example.com/"},
	} {
		if _, err := gateway.NewJWTVerifier(&o); err != nil {
			t.Errorf("NewJWTVerifier(%+v): %v", o, err)
		}
	}
}

// An issuer that cannot be reached fails every token closed, with a
// reason that says so, and the resource metadata still names it.
func TestJWTIssuerUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/"
	ln.Close()
	v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{Issuer: dead, Resource: "https://gw.example.test/team/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if !gateway.NewAuth(&gateway.AuthOptions{Verify: v.Verify}).Required() {
		t.Errorf("an Auth with a verifier lets requests without credentials in")
	}
	if err := v.Discover(context.Background()); !errors.Is(err, gateway.ErrIssuerUnavailable) {
		t.Errorf("Discover = %v, want ErrIssuerUnavailable", err)
	}
	tok := "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, gateway.ErrUnauthorized) || !errors.Is(err, gateway.ErrIssuerUnavailable) {
		t.Errorf("Verify = %v, want ErrUnauthorized and ErrIssuerUnavailable", err)
	}
	if got, want := v.MetadataURL(), "https://gw.example.test/.well-known/oauth-protected-resource/team/mcp"; got != want {
		t.Errorf("MetadataURL = %s, want %s (RFC 9728 §3.1)", got, want)
	}
	srv := httptest.NewServer(v.MetadataHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.Resource != "https://gw.example.test/team/mcp" || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != dead {
		t.Errorf("metadata = %+v", m)
	}
}

func TestAuthChallenge(t *testing.T) {
	const meta = "https://gw.example.test/.well-known/oauth-protected-resource/mcp"
	a := gateway.NewAuth(&gateway.AuthOptions{SharedToken: "s3cret-shared", ResourceMetadataURL: meta})
	_, noTok := a.Authenticate(context.Background(), "")
	_, badKey := a.Authenticate(context.Background(), "sbk_00000000_nope")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{noTok, `Bearer realm="switchboard", resource_metadata="` + meta + `"`},
		{badKey, `Bearer realm="switchboard", resource_metadata="` + meta + `", error="invalid_token", error_description="unknown or revoked key or token"`},
		{errors.Join(gateway.ErrUnauthorized, gateway.ErrTokenExpired), `Bearer realm="switchboard", resource_metadata="` + meta + `", error="invalid_token", error_description="access token has expired"`},
	} {
		if got := a.Challenge(tc.err); got != tc.want {
			t.Errorf("Challenge(%v) =\n %s\nwant\n %s", tc.err, got, tc.want)
		}
	}
	if got, want := gateway.NewAuth(nil).Challenge(noTok), `Bearer realm="switchboard"`; got != want {
		t.Errorf("without OAuth: %s, want %s", got, want)
	}
}

// BenchmarkJWTVerify is the cost an access token adds to each request: a
// token of a real Hydra checked against its cached JWKS.
func BenchmarkJWTVerify(b *testing.B) {
	idp := hydratest.Start(b, nil)
	const resource = "https://gw.example.test/mcp"
	v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{Issuer: idp.Issuer, Resource: resource})
	if err != nil {
		b.Fatal(err)
	}
	tok := idp.Token(b, idp.CreateClient(b, hydratest.Client{Audience: []string{resource}}), resource)
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
