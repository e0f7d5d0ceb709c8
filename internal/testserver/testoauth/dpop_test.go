package testoauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// proofKey makes DPoP proofs the way a client would, with knobs to spoil
// each part the server must check.
type proofKey struct{ k *ecdsa.PrivateKey }

func newProofKey(t *testing.T) *proofKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &proofKey{k}
}

func (p *proofKey) jwk() map[string]any {
	b, _ := p.k.PublicKey.Bytes()
	return map[string]any{"kty": "EC", "crv": "P-256", "x": b64.EncodeToString(b[1:33]), "y": b64.EncodeToString(b[33:])}
}

// proof signs claims with header; signer, if set, signs instead of p (a
// forged proof naming p's key).
func (p *proofKey) proof(t *testing.T, header, claims map[string]any, signer *proofKey) string {
	h := map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": p.jwk()}
	for k, v := range header {
		h[k] = v
	}
	hj, _ := json.Marshal(h)
	cj, _ := json.Marshal(claims)
	in := b64.EncodeToString(hj) + "." + b64.EncodeToString(cj)
	if signer == nil {
		signer = p
	}
	sum := sha256.Sum256([]byte(in))
	r, s, err := ecdsa.Sign(rand.Reader, signer.k, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return in + "." + b64.EncodeToString(sig)
}

var jtiN int

func claims(method, htu, token string) map[string]any {
	jtiN++
	c := map[string]any{"jti": fmt.Sprint("jti-", jtiN), "htm": method, "htu": htu, "iat": time.Now().Unix()}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		c["ath"] = b64.EncodeToString(sum[:])
	}
	return c
}

func post(t *testing.T, u string, hdr map[string]string, body string, form bool) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if form {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b) + resp.Header.Get("WWW-Authenticate")
}

// dpopToken runs the code flow by hand with proofs by key.
func dpopToken(t *testing.T, o *Server, key *proofKey) (at, rt string) {
	t.Helper()
	verifier := "verifier-verifier-verifier-verifier-verifier"
	sum := sha256.Sum256([]byte(verifier))
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(o.base + "/authorize?" + url.Values{
		"code_challenge_method": {"S256"}, "code_challenge": {b64.EncodeToString(sum[:])},
		"resource": {o.URL}, "redirect_uri": {"http://127.0.0.1:1/cb"}, "state": {"s"},
	}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "code_verifier": {verifier}, "resource": {o.URL}}
	status, body := post(t, o.base+"/token", map[string]string{"DPoP": key.proof(t, nil, claims("POST", o.base+"/token", ""), nil)}, form.Encode(), true)
	var tr struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		TokenType    string `json:"token_type"`
	}
	_ = json.Unmarshal([]byte(body), &tr)
	if status != 200 || tr.TokenType != "DPoP" {
		t.Fatalf("token request: %d %s", status, body)
	}
	return tr.AccessToken, tr.RefreshToken
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// Each part of a proof the server must check, spoilt one at a time, is
// refused; the unspoilt proof is accepted. So tests of the host against
// this server prove what they claim.
func TestDPoPEnforcement(t *testing.T) {
	o := Start(t)
	o.DPoP = true
	key, other := newProofKey(t), newProofKey(t)
	at, rt := dpopToken(t, o, key)

	mcp := func(scheme, proof string) int {
		h := map[string]string{"Authorization": scheme + " " + at}
		if proof != "" {
			h["DPoP"] = proof
		}
		status, _ := post(t, o.URL, h, initialize, false)
		return status
	}
	good := func() map[string]any { return claims("POST", o.URL, at) }
	if s := mcp("DPoP", key.proof(t, nil, good(), nil)); s != 200 {
		t.Fatalf("a good proof: HTTP %d, refusals %q", s, o.DPoPRefusals())
	}
	replayed := key.proof(t, nil, good(), nil)
	if s := mcp("DPoP", replayed); s != 200 {
		t.Fatalf("first use of a proof: HTTP %d", s)
	}
	with := func(k string, v any) map[string]any { c := good(); c[k] = v; return c }
	for name, c := range map[string]struct {
		scheme, proof, why string
	}{
		"no proof":             {"DPoP", "", "want one DPoP header"},
		"bearer scheme":        {"Bearer", key.proof(t, nil, good(), nil), "not DPoP"},
		"forged signature":     {"DPoP", key.proof(t, nil, good(), other), "signature does not verify"},
		"other key":            {"DPoP", other.proof(t, nil, good(), nil), "not the key the token is bound to"},
		"wrong htm":            {"DPoP", key.proof(t, nil, with("htm", "GET"), nil), "proof is for GET"},
		"wrong htu":            {"DPoP", key.proof(t, nil, with("htu", o.base+"/sse"), nil), "proof is for"},
		"old iat":              {"DPoP", key.proof(t, nil, with("iat", time.Now().Add(-time.Hour).Unix()), nil), "iat"},
		"future iat":           {"DPoP", key.proof(t, nil, with("iat", time.Now().Add(time.Hour).Unix()), nil), "iat"},
		"no iat":               {"DPoP", key.proof(t, nil, with("iat", nil), nil), "no iat"},
		"replayed jti":         {"DPoP", replayed, "jti"},
		"no jti":               {"DPoP", key.proof(t, nil, with("jti", ""), nil), "jti"},
		"wrong ath":            {"DPoP", key.proof(t, nil, with("ath", "x"), nil), "ath"},
		"wrong typ":            {"DPoP", key.proof(t, map[string]any{"typ": "JWT"}, good(), nil), "typ"},
		"private key sent":     {"DPoP", key.proof(t, map[string]any{"jwk": map[string]any{"kty": "EC", "crv": "P-256", "x": key.jwk()["x"], "y": key.jwk()["y"], "d": "AAAA"}}, good(), nil), "private key"},
		"not a point on P-256": {"DPoP", key.proof(t, map[string]any{"jwk": map[string]any{"kty": "EC", "crv": "P-256", "x": key.jwk()["x"], "y": key.jwk()["x"]}}, good(), nil), "not a point"},
	} {
		before := len(o.DPoPRefusals())
		if s := mcp(c.scheme, c.proof); s != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", name, s)
			continue
		}
		if r := o.DPoPRefusals(); len(r) != before+1 || !strings.Contains(r[before], c.why) {
			t.Errorf("%s: refused for %q, want %q", name, r[before:], c.why)
		}
	}

	// The token endpoint: a refresh must prove the refresh token's key.
	refresh := func(k *proofKey) int {
		s, _ := post(t, o.base+"/token", map[string]string{"DPoP": k.proof(t, nil, claims("POST", o.base+"/token", ""), nil)},
			url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}.Encode(), true)
		return s
	}
	if s := refresh(other); s != 400 {
		t.Errorf("refresh with another key: HTTP %d, want 400", s)
	}
	if s, _ := post(t, o.base+"/token", nil, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}.Encode(), true); s != 400 {
		t.Errorf("refresh without a proof: HTTP %d, want 400", s)
	}
	if s := refresh(key); s != 200 {
		t.Errorf("refresh with the bound key: HTTP %d, refusals %q", s, o.DPoPRefusals())
	}
}
