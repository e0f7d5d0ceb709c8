package host

import (
	"bytes"
	"crypto/sha256"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// dpopKey binds a server's tokens to a key (DPoP, RFC 9449): the token
// request and every request to the server carry a fresh proof signed by
// it. It is made when the server challenges with the DPoP scheme and
// lives as long as the server's OAuth state (the token is bound to it).
type dpopKey struct {
	signer *jwsSigner

	mu     sync.Mutex
	nonces map[string]string // origin → last nonce the server gave
}

func (a *serverAuth) dpopKey() *dpopKey {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dpop
}

// enableDPoP makes the proof key on the first DPoP challenge.
func (a *serverAuth) enableDPoP() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dpop != nil {
		return nil
	}
	s, err := newDPoPSigner()
	if err != nil {
		return err
	}
	a.dpop = &dpopKey{signer: s, nonces: map[string]string{}}
	return nil
}

// proof is a DPoP proof JWT for one request; accessToken, if set, is bound
// by its hash (ath).
func (k *dpopKey) proof(method string, u *url.URL, accessToken, nonce string) (string, error) {
	htu := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	claims := map[string]any{"jti": randomID(), "htm": method, "htu": htu.String(), "iat": time.Now().Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = b64.EncodeToString(sum[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	return k.signer.sign(map[string]any{"typ": "dpop+jwt", "jwk": k.signer.publicJWK()}, claims)
}

func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

func (k *dpopKey) nonce(u *url.URL) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nonces[origin(u)]
}

// note keeps a nonce the server sent, for its next proofs.
func (k *dpopKey) note(u *url.URL, h http.Header) bool {
	n := h.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	changed := k.nonces[origin(u)] != n
	k.nonces[origin(u)] = n
	return changed
}

func tokenIsDPoP(tok *oauth2.Token) bool { return strings.EqualFold(tok.TokenType, "DPoP") }

func (a *serverAuth) noteDPoPNonce(resp *http.Response) {
	if k := a.dpopKey(); k != nil && resp.Request != nil {
		k.note(resp.Request.URL, resp.Header)
	}
}

// dpopNonceRetry reports a resource server's use_dpop_nonce challenge
// (RFC 9449 §9) after keeping its nonce: the request is worth one more try.
func (a *serverAuth) dpopNonceRetry(resp *http.Response) bool {
	k := a.dpopKey()
	if k == nil || resp.StatusCode != http.StatusUnauthorized || resp.Request == nil {
		return false
	}
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Params["error"] == "use_dpop_nonce" {
			return k.note(resp.Request.URL, resp.Header)
		}
	}
	return false
}

// dpopClientTransport adds DPoP proofs to OAuth's own token requests once
// the server uses DPoP, and answers an authorization server's
// use_dpop_nonce (RFC 9449 §8) with one retry.
type dpopClientTransport struct {
	a    *serverAuth
	base http.RoundTripper
}

func (t *dpopClientTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	k := t.a.dpopKey()
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if k == nil || req.Method != http.MethodPost || ct != "application/x-www-form-urlencoded" {
		return t.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	for try := 0; ; try++ {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proof, err := k.proof(r.Method, r.URL, "", k.nonce(r.URL))
		if err != nil {
			return nil, err
		}
		r.Header.Set("DPoP", proof)
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		changed := k.note(r.URL, resp.Header)
		if try > 0 || !changed || (resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnauthorized) {
			return resp, nil
		}
		drain(resp) // use_dpop_nonce: retry with the nonce
	}
}
