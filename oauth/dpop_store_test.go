package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

func tokenOf(typ string) *oauth2.Token { return &oauth2.Token{AccessToken: "at", TokenType: typ} }

func TestDPoPKeyFileRoundTrip(t *testing.T) {
	s, err := newDPoPSigner()
	if err != nil {
		t.Fatal(err)
	}
	data, err := marshalDPoPKey(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := parseDPoPKey(data)
	if err != nil {
		t.Fatalf("parseDPoPKey(marshalDPoPKey) = %v", err)
	}
	if back.thumbprint() != s.thumbprint() {
		t.Errorf("thumbprint changed over a save and a read")
	}
	if _, err := back.sign(nil, map[string]any{"x": 1}); err != nil {
		t.Errorf("a read key cannot sign: %v", err)
	}
	// The thumbprint is RFC 7638's: SHA-256 of the required members in
	// lexical order, no whitespace.
	jwk := s.publicJWK()
	want, _ := json.Marshal(map[string]string{"crv": "P-256", "kty": "EC", "x": jwk["x"].(string), "y": jwk["y"].(string)})
	if !strings.HasPrefix(string(want), `{"crv":"P-256","kty":"EC","x":"`) {
		t.Fatalf("canonical JWK = %s", want)
	}
	if sum := sha256.Sum256(want); b64.EncodeToString(sum[:]) != s.thumbprint() {
		t.Errorf("thumbprint is not the RFC 7638 one")
	}
	d := keyD(t, data)

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherJWK := (&jwsSigner{alg: "ES256", key: other}).publicJWK()
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	edit := func(f func(m map[string]any, jwk map[string]any)) string {
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		f(m, m["jwk"].(map[string]any))
		out, _ := json.Marshal(m)
		return string(out)
	}
	for name, bad := range map[string]string{
		"not json":       `{"alg":`,
		"empty":          ``,
		"array":          `[]`,
		"no jwk":         `{"alg":"ES256"}`,
		"trailing data":  string(data) + `{}`,
		"unknown field":  edit(func(m, _ map[string]any) { m["extra"] = 1 }),
		"wrong alg":      edit(func(m, _ map[string]any) { m["alg"] = "RS256" }),
		"wrong kty":      edit(func(_, j map[string]any) { j["kty"] = "RSA" }),
		"wrong curve":    edit(func(_, j map[string]any) { j["crv"] = "P-384" }),
		"no d":           edit(func(_, j map[string]any) { delete(j, "d") }),
		"short d":        edit(func(_, j map[string]any) { j["d"] = d[:20] }),
		"padded d":       edit(func(_, j map[string]any) { j["d"] = d + "=" }),
		"zero d":         edit(func(_, j map[string]any) { j["d"] = b64.EncodeToString(make([]byte, 32)) }),
		"d above order":  edit(func(_, j map[string]any) { j["d"] = b64.EncodeToString([]byte(strings.Repeat("\xff", 32))) }),
		"other public":   edit(func(_, j map[string]any) { j["x"], j["y"] = otherJWK["x"], otherJWK["y"] }),
		"p384 d":         edit(func(_, j map[string]any) { b, _ := p384.Bytes(); j["d"] = b64.EncodeToString(b) }),
		"public only":    edit(func(_, j map[string]any) { j["d"] = "" }),
		"d is the x":     edit(func(_, j map[string]any) { j["d"] = j["x"] }),
		"number for key": edit(func(_, j map[string]any) { j["d"] = 7 }),
	} {
		_, err := parseDPoPKey([]byte(bad))
		if err == nil {
			t.Errorf("%s: parsed", name)
			continue
		}
		if strings.Contains(err.Error(), d) || strings.Contains(err.Error(), d[:16]) {
			t.Errorf("%s: error %q quotes the key", name, err)
		}
	}
}

func keyD(t *testing.T, data []byte) string {
	t.Helper()
	var f keyFile
	if err := json.Unmarshal(data, &f); err != nil || f.JWK == nil || f.JWK.D == "" {
		t.Fatalf("key file without d: %v", err)
	}
	return f.JWK.D
}

// The store's files: 0600 in a 0700 directory (tightened if it was not),
// a key file is never a token file, and logout removes both.
func TestDPoPKeyStoreFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oauth")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, _ := newDPoPSigner()
	k := newDPoPKey(s)
	st := &storedAuth{Resource: "https://mcp.example/mcp", Token: tokenOf("DPoP")}
	if err := saveLogin(tokenStore{dir: dir}, "a.dpop", st, k); err != nil {
		t.Fatal(err)
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", di.Mode().Perm())
	}
	if TokenFile(dir, "a") == DPoPKeyFile(dir, "a") || strings.HasSuffix(DPoPKeyFile(dir, "x"), ".json") {
		t.Errorf("a key file can be taken for a token file")
	}
	got, err := loadStoredAuth(dir, "a.dpop")
	if err != nil || got.DPoPJKT != k.jkt {
		t.Fatalf("stored dpop_jkt = %+v, %v; want %s", got, err, k.jkt)
	}
	if _, err := loadDPoPKey(dir, "a.dpop", k.jkt); err != nil {
		t.Fatalf("loadDPoPKey: %v", err)
	}
	if _, err := loadDPoPKey(dir, "a.dpop", "another-thumbprint"); err == nil || !strings.Contains(err.Error(), DPoPKeyFile(dir, "a.dpop")) {
		t.Errorf("a key the tokens do not name: %v", err)
	}
	// A later login whose token is not bound removes the old key.
	if err := saveLogin(tokenStore{dir: dir}, "a.dpop", &storedAuth{Resource: "https://mcp.example/mcp", Token: tokenOf("Bearer")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(DPoPKeyFile(dir, "a.dpop")); !os.IsNotExist(err) {
		t.Errorf("key file of a Bearer login: %v", err)
	}
	if got, _ := loadStoredAuth(dir, "a.dpop"); got.DPoPJKT != "" {
		t.Errorf("a Bearer token names a DPoP key")
	}
	// Logout reports a key alone too (a token file removed by hand).
	if err := saveDPoPKey(dir, "b", s); err != nil {
		t.Fatal(err)
	}
	if had, err := Logout(dir, "b"); !had || err != nil {
		t.Errorf("Logout of a key alone = %v, %v", had, err)
	}
}

func TestParseStoredAuthDPoPThumbprint(t *testing.T) {
	s, _ := newDPoPSigner()
	base := `{"resource":"https://mcp.example/mcp","token":{"access_token":"at","token_type":"DPoP"},"dpop_jkt":%q}`
	if st, err := parseStoredAuth([]byte(strings.Replace(base, "%q", `"`+s.thumbprint()+`"`, 1))); err != nil || st.DPoPJKT != s.thumbprint() {
		t.Errorf("a good thumbprint: %+v, %v", st, err)
	}
	for _, bad := range []string{`"x"`, `"` + strings.Repeat("A", 44) + `"`, `"` + s.thumbprint()[:42] + `"`, `"` + s.thumbprint() + `="`} {
		if _, err := parseStoredAuth([]byte(strings.Replace(base, "%q", bad, 1))); err == nil {
			t.Errorf("dpop_jkt %s accepted", bad)
		}
	}
}

func FuzzParseDPoPKey(f *testing.F) {
	s, _ := newDPoPSigner()
	good, _ := marshalDPoPKey(s)
	f.Add(good)
	f.Add([]byte(`{"alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":"","y":"","d":""}}`))
	f.Add([]byte(`{"alg":"ES256","jwk":null}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := parseDPoPKey(data)
		if err != nil {
			if k != nil {
				t.Fatalf("error with a key")
			}
			var kf keyFile
			if json.Unmarshal(data, &kf) == nil && kf.JWK != nil && len(kf.JWK.D) >= 8 && strings.Contains(err.Error(), kf.JWK.D) {
				t.Fatalf("error %q quotes the key", err)
			}
			return
		}
		if _, err := k.sign(nil, map[string]any{"jti": "x"}); err != nil {
			t.Fatalf("a read key cannot sign: %v", err)
		}
		// What was read must survive a save and a read, as the same key.
		out, err := marshalDPoPKey(k)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseDPoPKey(out)
		if err != nil || again.thumbprint() != k.thumbprint() {
			t.Fatalf("re-reading a saved key: %v", err)
		}
	})
}
