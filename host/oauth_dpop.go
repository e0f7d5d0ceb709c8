package host

import (
	"net/http"
	"net/url"

	"golang.org/x/oauth2"
)

// dpopKey signs DPoP proofs (RFC 9449).
type dpopKey struct{}

func (a *serverAuth) dpopKey() *dpopKey { return a.dpop }

func (k *dpopKey) proof(method string, u *url.URL, accessToken, nonce string) (string, error) {
	return "", nil
}

func tokenIsDPoP(tok *oauth2.Token) bool { return false }

func (a *serverAuth) dpopNonce(u *url.URL) string { return "" }

func (a *serverAuth) noteDPoPNonce(resp *http.Response) {}

func (a *serverAuth) dpopNonceRetry(resp *http.Response) bool { return false }
