package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Limits on fetching the issuer's keys again. A token with a key id the
// verifier does not know may mean the issuer rotated its keys, so the key
// set is fetched again — but such a token costs its sender nothing, so at
// most once per keyRefetchInterval (once per keyRetryInterval while the
// issuer cannot be reached), and tokens that arrive while a fetch is under
// way wait for that one. Meanwhile the keys already fetched keep verifying.
const (
	keyRefetchInterval = 30 * time.Second
	keyRetryInterval   = retryDiscovery
	// maxJWKSSize bounds the key set read from the issuer.
	maxJWKSSize = 1 << 20
)

// keySet is the issuer's JWKS as go-oidc's KeySet: the keys fetched from
// url, fetched again for a key id they lack within the limits above. It is
// safe for concurrent use.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu       sync.Mutex
	keys     []jose.JSONWebKey
	tried    bool      // a fetch was started at least once
	last     time.Time // when the last fetch started
	lastErr  error     // how it ended
	inflight *keyFetch
}

// keyFetch is one fetch of the key set that several requests may wait for.
type keyFetch struct {
	done chan struct{}
	keys []jose.JSONWebKey
	err  error
}

func newKeySet(url string, client *http.Client, now func() time.Time) *keySet {
	return &keySet{url: url, client: client, now: now}
}

// joseAlgs are signingAlgs as go-jose names them.
var joseAlgs = func() []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(signingAlgs))
	for i, a := range signingAlgs {
		out[i] = jose.SignatureAlgorithm(a)
	}
	return out
}()

// errKeysFetch marks a failure to fetch the key set; Verify reports it as
// ErrIssuerUnavailable (go-oidc passes only the text on: "fetching keys").
var errKeysFetch = errors.New("fetching keys")

// VerifySignature returns the payload of jwt if a key of the issuer signed
// it (go-oidc's KeySet; go-oidc has checked the algorithm already).
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(jwt, joseAlgs) // a JWT is compact; the JSON forms are refused
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %v", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("multiple signatures")
	}
	kid := jws.Signatures[0].Header.KeyID
	keys := k.current()
	if payload, known := verifyWith(jws, keys, kid); payload != nil {
		return payload, nil
	} else if known {
		// A key of that id is there and did not verify it: a new fetch
		// would bring the same key.
		return nil, errors.New("signature does not verify")
	}
	keys, err = k.refresh(ctx, true)
	if err != nil {
		return nil, err
	}
	if payload, _ := verifyWith(jws, keys, kid); payload != nil {
		return payload, nil
	}
	return nil, errors.New("no key of the issuer verifies the signature")
}

// verifyWith tries the keys of id kid (all keys when kid is ""). known
// reports that kid names a key of the set.
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) (payload []byte, known bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		known = kid != ""
		if p, err := jws.Verify(&keys[i]); err == nil {
			return p, true
		}
	}
	return nil, known
}

func (k *keySet) current() []jose.JSONWebKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys
}

// refresh returns the key set after fetching it again if the limits allow
// it (limited: a token asks; otherwise the operator does, at start-up,
// and the fetch neither waits for nor counts toward the limits), or after
// the fetch already under way; otherwise the keys as they are. The error
// is that of a fetch (the last one, when none was allowed and no keys
// were ever fetched).
func (k *keySet) refresh(ctx context.Context, limited bool) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	f := k.inflight
	if f == nil && !limited {
		f = &keyFetch{done: make(chan struct{})}
		k.inflight = f
		go k.fetch(f)
	}
	if f == nil {
		wait := keyRefetchInterval
		if k.lastErr != nil {
			wait = keyRetryInterval
		}
		now := k.now()
		if k.tried && now.Sub(k.last) < wait {
			keys, err := k.keys, k.lastErr
			k.mu.Unlock()
			if len(keys) > 0 {
				err = nil // the keys there are still count
			}
			return keys, err
		}
		f = &keyFetch{done: make(chan struct{})}
		k.inflight, k.tried, k.last = f, true, now
		go k.fetch(f)
	}
	k.mu.Unlock()
	select {
	case <-f.done:
		return f.keys, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fetch runs one fetch (on a context of its own, so that the request that
// started it giving up spoils it for no one) and records what it brought.
func (k *keySet) fetch(f *keyFetch) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := k.get(ctx)
	k.mu.Lock()
	if err == nil {
		k.keys = keys
	} else {
		keys = k.keys
	}
	k.lastErr, k.inflight = err, nil
	k.mu.Unlock()
	f.keys, f.err = keys, err
	close(f.done)
}

// get fetches and decodes the key set. Keys of a type or algorithm that
// cannot sign tokens here are skipped (RFC 7517 §5: ignore what is not
// understood); a set with no usable key is an error.
func (k *keySet) get(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errKeysFetch, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errKeysFetch, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("%w: %s: %s", errKeysFetch, k.url, resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSSize)).Decode(&set); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errKeysFetch, k.url, err)
	}
	supported := map[string]bool{}
	for _, a := range signingAlgs {
		supported[a] = true
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var meta struct {
			Alg string `json:"alg"`
			Use string `json:"use"`
		}
		if json.Unmarshal(raw, &meta) != nil || (meta.Alg != "" && !supported[meta.Alg]) || (meta.Use != "" && meta.Use != "sig") {
			continue
		}
		var key jose.JSONWebKey
		if err := json.Unmarshal(raw, &key); err != nil {
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: %s holds no keys", errKeysFetch, k.url)
	}
	return keys, nil
}
