package gateway_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// FuzzJWTVerify: whatever the bearer token, Verify never panics, refuses
// it with ErrUnauthorized (nothing here is signed by the issuer's key), and
// never repeats it in the error.
func FuzzJWTVerify(f *testing.F) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	b64 := base64.RawURLEncoding
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
		"n": b64.EncodeToString(key.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
	}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(jwks)
	}))
	f.Cleanup(srv.Close)
	v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{Issuer: srv.URL, JWKSURL: srv.URL + "/jwks", Resource: "https://gw.example.test/mcp"})
	if err != nil {
		f.Fatal(err)
	}
	seg := func(s string) string { return b64.EncodeToString([]byte(s)) }
	claims := seg(`{"iss":"` + srv.URL + `","aud":"https://gw.example.test/mcp","sub":"alice","exp":4102444800,"groups":["eng"]}`)
	for _, h := range []string{`{"alg":"RS256","kid":"k1"}`, `{"alg":"none"}`, `{"alg":"HS256","kid":"k1"}`, `{"alg":"RS256","kid":"other"}`, `{"alg":"ES256"}`, `{}`} {
		f.Add(seg(h) + "." + claims + "." + seg("not a signature"))
		f.Add(seg(h) + "." + claims + ".")
	}
	f.Add("")
	f.Add("..")
	f.Add("sbk_0000_x")
	f.Add("a.b.c.d.e")
	f.Fuzz(func(t *testing.T, token string) {
		p, err := v.Verify(context.Background(), token)
		if err == nil || p != nil {
			t.Fatalf("Verify accepted %q as %+v", token, p)
		}
		if !errors.Is(err, gateway.ErrUnauthorized) {
			t.Fatalf("Verify = %v, want ErrUnauthorized", err)
		}
		if len(token) >= 12 && strings.Contains(err.Error(), token) {
			t.Fatalf("the error repeats the token: %v", err)
		}
	})
}

// FuzzPrincipalFromClaims: whatever a verified token's claims hold, the
// principal is a usable name with valid, sorted, distinct groups, or
// ErrTokenClaims.
func FuzzPrincipalFromClaims(f *testing.F) {
	f.Add(`{"sub":"alice","groups":["eng","ops"]}`, "sub", "groups")
	f.Add(`{"sub":"bob","scope":"read write"}`, "sub", "scope")
	f.Add(`{"u":{"name":"carol"},"realm_access":{"roles":["a",1,null,{"x":1}]}}`, "u.name", "realm_access.roles")
	f.Add(`{"sub":"token"}`, "sub", "groups")
	f.Add(`{"sub":"x\u0000y","groups":"a b\tc"}`, "sub", "groups")
	f.Add(`{"a.b":"dotted","a":{"b":"nested"}}`, "a.b", "a")
	f.Fuzz(func(t *testing.T, raw, nameClaim, groupsClaim string) {
		var claims map[string]any
		if json.Unmarshal([]byte(raw), &claims) != nil {
			return
		}
		p, err := gateway.PrincipalFromClaims(claims, nameClaim, groupsClaim)
		if err != nil {
			if !errors.Is(err, gateway.ErrTokenClaims) || p != nil {
				t.Fatalf("err %v, principal %+v", err, p)
			}
			return
		}
		if p.Name == "" || len(p.Name) > gateway.MaxPrincipalName || strings.IndexFunc(p.Name, unicode.IsControl) >= 0 ||
			p.Name == gateway.SharedTokenPrincipal || strings.HasPrefix(p.Name, gateway.GroupPrefix) {
			t.Fatalf("unusable name %q", p.Name)
		}
		if !sort.StringsAreSorted(p.Groups) {
			t.Fatalf("groups not sorted: %q", p.Groups)
		}
		for i, g := range p.Groups {
			if gateway.ValidName(g) != nil || (i > 0 && p.Groups[i-1] == g) {
				t.Fatalf("group %q of %q", g, p.Groups)
			}
		}
		if p.Keyed() || p.Issuer != "" {
			t.Fatalf("claims alone make no issuer: %+v", p)
		}
	})
}
