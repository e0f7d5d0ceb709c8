package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// jwksServer is an issuer's key endpoint on loopback that counts the
// fetches of its key set; its keys can be changed (a rotation).
type jwksServer struct {
	URL     string
	fetches atomic.Int64
	mu      sync.Mutex
	keys    []jose.JSONWebKey
}

func startJWKS(t *testing.T) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks" {
			http.NotFound(w, r)
			return
		}
		s.fetches.Add(1)
		s.mu.Lock()
		set := jose.JSONWebKeySet{Keys: s.keys}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// publish adds the public half of a signing key to the set.
func (s *jwksServer) publish(k *signingKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: string(jose.ES256), Use: "sig"})
}

type signingKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newSigningKey(t *testing.T, kid string) *signingKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &signingKey{kid: kid, priv: priv}
}

// token signs an access token for sub with k.
func (k *signingKey) token(t *testing.T, iss, aud, sub string, now time.Time) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	claims, _ := json.Marshal(map[string]any{"iss": iss, "aud": aud, "sub": sub, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	jws, err := sig.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Issue 28 point 10: in JWT mode every token with a key id the gateway did
// not know made it fetch the issuer's keys again, before any
// authentication (50 requests, 50 fetches). Now: at most one fetch per
// interval, concurrent unknown key ids share one fetch, and the keys
// already fetched keep verifying meanwhile; a key the issuer rotates in is
// taken once the interval has passed.
func TestJWTUnknownKeyIDsDoNotRefetch(t *testing.T) {
	jwks := startJWKS(t)
	issuer := jwks.URL + "/"
	const resource = "https://gw.example.test/mcp"
	good := newSigningKey(t, "good")
	jwks.publish(good)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{Issuer: issuer, Resource: resource, JWKSURL: jwks.URL + "/jwks", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sub := 0
	goodToken := func() string { sub++; return good.token(t, issuer, resource, fmt.Sprintf("user-%d", sub), clock()) }
	if p, err := v.Verify(ctx, goodToken()); err != nil || p.Name != "user-1" {
		t.Fatalf("a token of the issuer's key: %+v, %v", p, err)
	}
	if n := jwks.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for the first token, want 1", n)
	}

	// The attack: 50 tokens, each with a key id of its own, one after
	// the other and then at once.
	attacker := newSigningKey(t, "")
	forged := func(i int) string {
		attacker.kid = fmt.Sprintf("kid-%d", i)
		return attacker.token(t, issuer, resource, "mallory", clock())
	}
	var tokens []string
	for i := range 100 {
		tokens = append(tokens, forged(i))
	}
	for _, tok := range tokens[:50] {
		if _, err := v.Verify(ctx, tok); !errors.Is(err, gateway.ErrTokenSignature) {
			t.Fatalf("a forged token: %v, want ErrTokenSignature", err)
		}
	}
	var wg sync.WaitGroup
	for _, tok := range tokens[50:] {
		wg.Go(func() {
			if _, err := v.Verify(ctx, tok); !errors.Is(err, gateway.ErrTokenSignature) {
				t.Errorf("a forged token (concurrent): %v, want ErrTokenSignature", err)
			}
		})
	}
	wg.Wait()
	if n := jwks.fetches.Load(); n != 1 {
		t.Errorf("100 tokens with unknown key ids made %d fetches of the keys within the interval, want none after the first", n-1)
	}
	// The known key keeps verifying meanwhile (a new token: no cache).
	if _, err := v.Verify(ctx, goodToken()); err != nil {
		t.Errorf("a token of the known key after the flood: %v", err)
	}

	// Past the interval one unknown key id may fetch again — one, for all
	// of them.
	advance(31 * time.Second)
	for _, tok := range tokens[:50] {
		if _, err := v.Verify(ctx, tok); !errors.Is(err, gateway.ErrTokenSignature) {
			t.Fatalf("a forged token: %v, want ErrTokenSignature", err)
		}
	}
	if n := jwks.fetches.Load(); n != 2 {
		t.Errorf("%d fetches after the interval, want 2", n)
	}

	// A rotation: the issuer adds a key and signs with it. Past the
	// interval, concurrent tokens of the new key share one fetch and
	// every one of them is accepted.
	rotated := newSigningKey(t, "rotated")
	jwks.publish(rotated)
	advance(31 * time.Second)
	for i := range 20 {
		tok := rotated.token(t, issuer, resource, fmt.Sprintf("rotated-%d", i), clock())
		wg.Go(func() {
			if _, err := v.Verify(ctx, tok); err != nil {
				t.Errorf("a token of the rotated key: %v", err)
			}
		})
	}
	wg.Wait()
	if n := jwks.fetches.Load(); n != 3 {
		t.Errorf("%d fetches after the rotation, want 3", n)
	}

	// The fetch of Discover, at start-up, is the operator's: a key the
	// issuer makes on its first token (Hydra does) is fetched at once.
	t.Run("after Discover", func(t *testing.T) {
		jwks := startJWKS(t)
		jwks.publish(newSigningKey(t, "id-token"))
		issuer := jwks.URL + "/"
		v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{Issuer: issuer, Resource: resource, JWKSURL: jwks.URL + "/jwks", Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Discover(ctx); err != nil {
			t.Fatal(err)
		}
		late := newSigningKey(t, "access-token")
		jwks.publish(late)
		if _, err := v.Verify(ctx, late.token(t, issuer, resource, "alice", clock())); err != nil {
			t.Errorf("a token of a key made after start-up: %v", err)
		}
		if n := jwks.fetches.Load(); n != 2 {
			t.Errorf("%d fetches, want 2 (Discover's and the token's)", n)
		}
	})
}
