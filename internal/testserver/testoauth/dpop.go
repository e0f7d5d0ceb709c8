package testoauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"
)

// DPoP enforcement (RFC 9449), on when Server.DPoP is set: the token
// endpoint wants a proof and binds the tokens it issues to the proof's key
// (token_type DPoP); a refresh must prove the key its refresh token is
// bound to; the MCP endpoints want `Authorization: DPoP <token>` with a
// proof by the bound key whose ath is the token's hash. Every proof's
// signature, typ, alg, htm, htu, iat and jti (once only) are checked.

// iatWindow is how far a proof's iat may be from the server's clock.
const iatWindow = 5 * time.Minute

var b64 = base64.RawURLEncoding

// verifyProof checks the DPoP proof of r (for accessToken, if set) and
// returns the RFC 7638 thumbprint of its key. Call with o.mu held.
func (o *Server) verifyProof(r *http.Request, accessToken string) (string, error) {
	proofs := r.Header.Values("DPoP")
	if len(proofs) != 1 {
		return "", fmt.Errorf("want one DPoP header, got %d", len(proofs))
	}
	parts := strings.Split(proofs[0], ".")
	if len(parts) != 3 {
		return "", errors.New("proof is not a compact JWS")
	}
	var hdr struct {
		Typ string         `json:"typ"`
		Alg string         `json:"alg"`
		JWK map[string]any `json:"jwk"`
	}
	if err := decodePart(parts[0], &hdr); err != nil {
		return "", fmt.Errorf("proof header: %v", err)
	}
	if hdr.Typ != "dpop+jwt" || hdr.Alg != "ES256" {
		return "", fmt.Errorf("proof typ %q alg %q, want dpop+jwt ES256", hdr.Typ, hdr.Alg)
	}
	if _, ok := hdr.JWK["d"]; ok {
		return "", errors.New("proof header carries a private key")
	}
	x, y := coord(hdr.JWK["x"]), coord(hdr.JWK["y"])
	if hdr.JWK["kty"] != "EC" || hdr.JWK["crv"] != "P-256" || x == nil || y == nil {
		return "", errors.New("proof jwk is not an EC P-256 public key")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return "", errors.New("proof jwk is not a point on P-256")
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return "", errors.New("proof signature is not an ES256 signature")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "", errors.New("proof signature does not verify")
	}
	var claims struct {
		JTI   string   `json:"jti"`
		HTM   string   `json:"htm"`
		HTU   string   `json:"htu"`
		IAT   *float64 `json:"iat"`
		ATH   string   `json:"ath"`
		Nonce string   `json:"nonce"`
	}
	if err := decodePart(parts[1], &claims); err != nil {
		return "", fmt.Errorf("proof claims: %v", err)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if want := scheme + "://" + r.Host + r.URL.Path; claims.HTU != want || claims.HTM != r.Method {
		return "", fmt.Errorf("proof is for %s %s, not %s %s", claims.HTM, claims.HTU, r.Method, want)
	}
	if claims.IAT == nil {
		return "", errors.New("proof has no iat")
	}
	if d := time.Since(time.Unix(int64(*claims.IAT), 0)); d > iatWindow || d < -iatWindow {
		return "", fmt.Errorf("proof iat is %s off", d.Round(time.Second))
	}
	if claims.JTI == "" || o.jtis[claims.JTI] {
		return "", errors.New("proof jti is missing or was used before")
	}
	o.jtis[claims.JTI] = true
	if accessToken != "" {
		ath := sha256.Sum256([]byte(accessToken))
		if claims.ATH != b64.EncodeToString(ath[:]) {
			return "", errors.New("proof ath is not the access token's hash")
		}
	}
	tp, _ := json.Marshal(map[string]any{"crv": "P-256", "kty": "EC", "x": hdr.JWK["x"], "y": hdr.JWK["y"]})
	jkt := sha256.Sum256(tp)
	return b64.EncodeToString(jkt[:]), nil
}

func decodePart(part string, v any) error {
	b, err := b64.DecodeString(part)
	if err != nil {
		return errors.New("not base64url")
	}
	return json.Unmarshal(b, v)
}

// coord decodes a P-256 JWK coordinate (32 bytes), or nil.
func coord(v any) []byte {
	s, _ := v.(string)
	b, err := b64.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil
	}
	return b
}

// checkDPoPAccess checks a request to an MCP endpoint in DPoP mode and
// returns why it is refused ("" if it is not). Call with o.mu held.
func (o *Server) checkDPoPAccess(r *http.Request) string {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if tok == "" {
		return "no token"
	}
	if !strings.EqualFold(scheme, "DPoP") {
		return "token sent with scheme " + scheme + ", not DPoP"
	}
	if !o.tokens[tok] {
		return "unknown token"
	}
	if o.RefuseTokens {
		return "the token is not for this server"
	}
	jkt, err := o.verifyProof(r, tok)
	if err != nil {
		return err.Error()
	}
	if o.bound[tok] != jkt {
		return "proof key is not the key the token is bound to"
	}
	o.keysSeen[jkt] = true
	return ""
}

// refuseDPoP answers a refused MCP request with a DPoP challenge.
func refuseDPoP(w http.ResponseWriter, metadataURL, reason string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP error="invalid_token", error_description=%q, algs="ES256", resource_metadata=%q`, reason, metadataURL))
	http.Error(w, "unauthorized: "+reason, http.StatusUnauthorized)
}

// DPoPRefusals returns why DPoP requests (token and MCP endpoints) were
// refused so far, oldest first.
func (o *Server) DPoPRefusals() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.refusals...)
}

// DPoPKeys returns the thumbprints of the keys whose proofs were accepted
// so far (token requests and MCP requests).
func (o *Server) DPoPKeys() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for k := range o.keysSeen {
		out = append(out, k)
	}
	return out
}

// RejectBindings makes every token issued so far bound to a key nobody
// has, as if the authorization server had dropped the bindings: a refresh
// or a request with one is refused for its proof key.
func (o *Server) RejectBindings() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for t := range o.bound {
		o.bound[t] = "dropped-binding"
	}
}
