package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/netguard"
)

func TestParseStoredAuth(t *testing.T) {
	good := `{"resource":"https://mcp.example/mcp","client_id":"c","token_url":"https://as.example/token","token":{"access_token":"at","refresh_token":"rt"}}`
	if st, err := parseStoredAuth([]byte(good)); err != nil || st.Token.AccessToken != "at" || st.Resource != "https://mcp.example/mcp" {
		t.Fatalf("parseStoredAuth(good) = %+v, %v", st, err)
	}
	for name, bad := range map[string]string{
		"not json":        `{"resource":`,
		"no token":        `{"resource":"https://mcp.example/mcp"}`,
		"empty token":     `{"resource":"https://mcp.example/mcp","token":{}}`,
		"no resource":     `{"token":{"access_token":"secret-at"}}`,
		"file resource":   `{"resource":"file:///etc/passwd","token":{"access_token":"secret-at"}}`,
		"bad token url":   `{"resource":"https://m.example/","token_url":"javascript:x","token":{"access_token":"secret-at"}}`,
		"array":           `[]`,
		"secret in error": `{"resource":"secret-at","token":{"access_token":"secret-at"}}`,
	} {
		_, err := parseStoredAuth([]byte(bad))
		if err == nil {
			t.Errorf("%s: parsed", name)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error %q quotes the file", name, err)
		}
	}
}

func TestParseTokenResponse(t *testing.T) {
	tok, err := parseTokenResponse(200, []byte(`{"access_token":"a","token_type":"DPoP","refresh_token":"r","expires_in":60}`))
	if err != nil || tok.AccessToken != "a" || tok.RefreshToken != "r" || !tokenIsDPoP(tok) || tok.Expiry.IsZero() {
		t.Fatalf("parseTokenResponse = %+v, %v", tok, err)
	}
	_, err = parseTokenResponse(400, []byte(`{"error":"invalid_grant","error_description":"expired\nassertion"}`))
	var te *tokenError
	if !errors.As(err, &te) || te.Code != "invalid_grant" || strings.Contains(err.Error(), "\n") {
		t.Errorf("error answer = %v", err)
	}
	for _, body := range []string{`<html>`, `{}`, `{"access_token":""}`} {
		if _, err := parseTokenResponse(200, []byte(body)); err == nil {
			t.Errorf("parseTokenResponse(200, %q) accepted", body)
		}
	}
}

func TestRedirectTarget(t *testing.T) {
	base, _ := url.Parse("https://as.example/authorize?x=1")
	u, err := redirectTarget(302, "http://localhost:3000/callback?code=c&state=s&iss=https%3A%2F%2Fas.example", base)
	if err != nil || u.Query().Get("code") != "c" || u.Query().Get("iss") != "https://as.example" {
		t.Fatalf("redirectTarget = %v, %v", u, err)
	}
	if u, err := redirectTarget(302, "/cb?code=c", base); err != nil || u.String() != "https://as.example/cb?code=c" {
		t.Errorf("relative Location = %v, %v", u, err)
	}
	for _, c := range []struct {
		status int
		loc    string
	}{{200, ""}, {302, ""}, {400, "/x"}, {302, "http://[::1"}} {
		if _, err := redirectTarget(c.status, c.loc, base); err == nil {
			t.Errorf("redirectTarget(%d, %q) accepted", c.status, c.loc)
		}
	}
}

// A client assertion must verify with the public key and carry the claims
// the token endpoint checks.
func TestJWSSignsVerifiably(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	pemData := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	s, err := parseSigningKey(pemData, "ES256")
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := s.sign(map[string]any{"typ": "JWT"}, map[string]any{"iss": "client", "aud": "https://as.example"})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", jwt)
	}
	sig, _ := b64.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, ss := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(&key.PublicKey, sum[:], r, ss) {
		t.Errorf("signature does not verify")
	}
	var hdr map[string]any
	hb, _ := b64.DecodeString(parts[0])
	_ = json.Unmarshal(hb, &hdr)
	if hdr["alg"] != "ES256" || hdr["typ"] != "JWT" {
		t.Errorf("header = %v", hdr)
	}
	if _, err := parseSigningKey(pemData, "RS256"); err == nil {
		t.Errorf("RS256 accepted for an EC key")
	}
	if _, err := parseSigningKey([]byte("not pem"), ""); err == nil {
		t.Errorf("garbage accepted as a key")
	}
}

func TestDPoPProof(t *testing.T) {
	s, err := newDPoPSigner()
	if err != nil {
		t.Fatal(err)
	}
	k := &dpopKey{signer: s, nonces: map[string]string{}}
	u, _ := url.Parse("https://mcp.example/mcp?q=1#f")
	p1, _ := k.proof("POST", u, "tok", "n1")
	p2, _ := k.proof("POST", u, "tok", "n1")
	if p1 == p2 {
		t.Errorf("two proofs are identical (jti must be fresh)")
	}
	var claims map[string]any
	cb, _ := b64.DecodeString(strings.Split(p1, ".")[1])
	_ = json.Unmarshal(cb, &claims)
	sum := sha256.Sum256([]byte("tok"))
	if claims["htu"] != "https://mcp.example/mcp" || claims["htm"] != "POST" || claims["nonce"] != "n1" || claims["ath"] != b64.EncodeToString(sum[:]) {
		t.Errorf("claims = %v", claims)
	}
	var hdr map[string]any
	hb, _ := b64.DecodeString(strings.Split(p1, ".")[0])
	_ = json.Unmarshal(hb, &hdr)
	jwk, _ := hdr["jwk"].(map[string]any)
	if hdr["typ"] != "dpop+jwt" || jwk["kty"] != "EC" || jwk["d"] != nil {
		t.Errorf("header = %v", hdr)
	}
}

func FuzzParseStoredAuth(f *testing.F) {
	f.Add([]byte(`{"resource":"https://mcp.example/mcp","client_id":"c","token_url":"https://as.example/token","token":{"access_token":"at","refresh_token":"rt","expiry":"2030-01-01T00:00:00Z"}}`))
	f.Add([]byte(`{"resource":"http://127.0.0.1:1/mcp","token":{"refresh_token":"rt"},"scopes":["a","b"],"auth_style":2}`))
	f.Add([]byte(`{"token":null}`))
	f.Add([]byte(`{"resource":"https://mcp.example/mcp","token":{"access_token":"at","token_type":"DPoP"},"dpop_jkt":"0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseStoredAuth(data)
		if err != nil {
			if st != nil {
				t.Fatalf("error with a result")
			}
			return
		}
		if st.Token == nil || (st.Token.AccessToken == "" && st.Token.RefreshToken == "") {
			t.Fatalf("accepted a file without a token")
		}
		u, err := url.Parse(st.Resource)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			t.Fatalf("accepted resource %q", st.Resource)
		}
		// What was read must survive a save and a read.
		out, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseStoredAuth(out); err != nil {
			t.Fatalf("re-reading a saved file: %v", err)
		}
	})
}

func FuzzParseTokenResponse(f *testing.F) {
	f.Add(200, []byte(`{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r"}`))
	f.Add(200, []byte(`{"access_token":"a","expires_in":"3600"}`))
	f.Add(400, []byte(`{"error":"use_dpop_nonce","error_description":"nonce\r\nplease"}`))
	f.Add(500, []byte(`<html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		tok, err := parseTokenResponse(status, body)
		if err != nil {
			if tok != nil {
				t.Fatalf("error with a token")
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") && utf8.ValidString(msg) {
				t.Fatalf("multi-line error %q", msg)
			}
			return
		}
		if status < 200 || status > 299 || tok.AccessToken == "" {
			t.Fatalf("token from status %d or without access_token", status)
		}
	})
}

func FuzzRedirectTarget(f *testing.F) {
	f.Add(302, "http://localhost:3000/callback?code=c&state=s")
	f.Add(303, "/relative?code=x")
	f.Add(200, "")
	f.Add(302, "http://[::1")
	base, _ := url.Parse("https://as.example/authorize")
	f.Fuzz(func(t *testing.T, status int, loc string) {
		u, err := redirectTarget(status, loc, base)
		if err != nil {
			return
		}
		if status < 300 || status > 399 || loc == "" || u == nil {
			t.Fatalf("accepted status %d location %q", status, loc)
		}
	})
}

func FuzzParseSigningKey(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), "ES256")
	sec1, _ := x509.MarshalECPrivateKey(key)
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), "")
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), "RS256")
	f.Fuzz(func(t *testing.T, data []byte, alg string) {
		s, err := parseSigningKey(data, alg)
		if err != nil {
			if s != nil {
				t.Fatalf("error with a signer")
			}
			if strings.Contains(err.Error(), "BEGIN") {
				t.Fatalf("error quotes the key: %v", err)
			}
			return
		}
		if alg != "" && s.alg != alg {
			t.Fatalf("asked for %s, got %s", alg, s.alg)
		}
		if _, err := s.sign(nil, map[string]any{"iss": "x"}); err != nil {
			t.Fatalf("a parsed key cannot sign: %v", err)
		}
	})
}

// The origin a token may go to: scheme, host and port, the default
// port spelled out, so https and http of one host differ.
func TestTokenOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://mcp.example/mcp", "https://MCP.example:443/other?q=1", true},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/message?sessionid=1", true},
		{"https://mcp.example/mcp", "http://mcp.example/mcp", false},
		{"https://mcp.example/mcp", "https://mcp.example:8443/mcp", false},
		{"https://mcp.example/mcp", "https://evil.example/mcp", false},
		{"https://mcp.example/mcp", "https://mcp.example.evil.example/mcp", false},
	} {
		if got := netguard.OriginOf(tc.a) == netguard.OriginOf(tc.b); got != tc.same {
			t.Errorf("same origin of %s and %s = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	if netguard.OriginOf("/mcp") != "" || netguard.OriginOf("::") != "" {
		t.Errorf("a URL without scheme and host has an origin")
	}
}
