package oauth

import (
	"bytes"
	"crypto/ecdsa"
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
// it. A key is made for each new authorization (a login) when the server
// challenges with the DPoP scheme, and is kept with the tokens it binds
// (oauth_dpop_store.go): refreshes and later runs use the same key.
type dpopKey struct {
	signer *jwsSigner
	jkt    string // RFC 7638 thumbprint: what the tokens' cnf names

	mu     sync.Mutex
	nonces map[string]string // origin → last nonce the server gave
}

func newDPoPKey(s *jwsSigner) *dpopKey {
	return &dpopKey{signer: s, jkt: s.thumbprint(), nonces: map[string]string{}}
}

// dpopKey is the key the current tokens are bound to (nil: none).
func (a *serverAuth) dpopKey() *dpopKey {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dpop
}

// enableDPoP makes the key a new authorization's tokens will be bound to
// (on a DPoP challenge). It is only the current key once a token bound to
// it arrives (commitDPoP): until then the current tokens keep theirs, and
// a failed login leaves them usable.
func (a *serverAuth) enableDPoP() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pendingDPoP != nil {
		return nil
	}
	s, err := newDPoPSigner()
	if err != nil {
		return err
	}
	k := newDPoPKey(s)
	if a.dpop != nil {
		a.dpop.mu.Lock()
		for o, n := range a.dpop.nonces {
			k.nonces[o] = n
		}
		a.dpop.mu.Unlock()
	}
	a.pendingDPoP = k
	a.c.secrets.Add(k.secret())
	return nil
}

// commitDPoP makes the new authorization's key the current one, now that
// tok was issued with its proof, and returns the key tok is bound to (nil
// if tok is not DPoP-bound).
func (a *serverAuth) commitDPoP(tok *oauth2.Token) *dpopKey {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pendingDPoP != nil {
		a.dpop, a.pendingDPoP = a.pendingDPoP, nil
	}
	if tok == nil || !tokenIsDPoP(tok) {
		return nil
	}
	return a.dpop
}

// proofKey is the key a token request's proof is signed with: a refresh
// proves the key the refresh token is bound to; a new grant, the new key.
func (a *serverAuth) proofKey(form []byte) *dpopKey {
	a.mu.Lock()
	defer a.mu.Unlock()
	q, _ := url.ParseQuery(string(form))
	if a.pendingDPoP != nil && q.Get("grant_type") != "refresh_token" {
		return a.pendingDPoP
	}
	return a.dpop
}

// secret is the private key as it would appear in text (the key file's
// "d"), for the Client's set of values scrubbed from its logs and errors.
func (k *dpopKey) secret() string {
	if e, ok := k.signer.key.(*ecdsa.PrivateKey); ok {
		if d, err := e.Bytes(); err == nil {
			return b64.EncodeToString(d)
		}
	}
	return ""
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
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if req.Method != http.MethodPost || ct != "application/x-www-form-urlencoded" || (t.a.dpopKey() == nil && !t.a.dpopPending()) {
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
	k := t.a.proofKey(body)
	if k == nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		return t.base.RoundTrip(req)
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

func (a *serverAuth) dpopPending() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pendingDPoP != nil
}
