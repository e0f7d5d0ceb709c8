package host_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// keyAuthorizer is the smallest real Authorizer: it sends an API key, and
// answers a refusal with a typed error, as package oauth does with its
// *LoginRequiredError.
type keyAuthorizer struct {
	key atomic.Value // string

	mu    sync.Mutex
	calls []string // "server url" per Transport call
}

func newKeyAuthorizer(key string) *keyAuthorizer {
	a := &keyAuthorizer{}
	a.key.Store(key)
	return a
}

func (a *keyAuthorizer) Transport(_ context.Context, server, url string, _, next http.RoundTripper) http.RoundTripper {
	a.mu.Lock()
	a.calls = append(a.calls, server+" "+url)
	a.mu.Unlock()
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+a.key.Load().(string))
		resp, err := next.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusUnauthorized {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil, &needKeyError{server: server}
		}
		return resp, err
	})
}

func (a *keyAuthorizer) callsMade() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.calls...)
}

type needKeyError struct{ server string }

func (e *needKeyError) Error() string { return e.server + " refused the key" }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestAuthorizerAuthorizesRemoteServers(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{RequireHeader: "Authorization: Bearer k1"})
	a := newKeyAuthorizer("k1")
	h := newHost(t, cfgOf(remote("api", config.TypeHTTP, srv.URL)), &host.Options{Authorizer: a})
	if res := mustCall(t, h, "mcp__api__echo", map[string]any{"text": "with a key"}); !strings.Contains(textOf(res), "with a key") {
		t.Fatalf("echo = %q", textOf(res))
	}
	calls := a.callsMade()
	if len(calls) == 0 || calls[0] != "api "+srv.URL {
		t.Errorf("Transport calls = %q, want the first for %q", calls, "api "+srv.URL)
	}
}

// A definition's own Authorization header wins: the user chose static
// credentials, and the Authorizer is not asked.
func TestAuthorizerLeavesAServersOwnAuthorization(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{RequireHeader: "Authorization: Bearer mine"})
	a := newKeyAuthorizer("other")
	def := config.Server{Type: config.TypeHTTP, URL: srv.URL, Headers: map[string]string{"authorization": "Bearer mine"}}
	h := newHost(t, cfgOf(resolved("api", def)), &host.Options{Authorizer: a})
	mustCall(t, h, "mcp__api__echo", map[string]any{"text": "x"})
	if calls := a.callsMade(); len(calls) != 0 {
		t.Errorf("the Authorizer was asked for a server with its own Authorization header: %q", calls)
	}
}

// The error that leaves a server in StateError is its status's Err, found
// with errors.As through the SDK's wrapping, and ErrorHint's advice ends
// its Reason; neither outlives the error state.
func TestErrorStateCarriesItsCause(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{RequireHeader: "Authorization: Bearer k1"})
	a := newKeyAuthorizer("wrong")
	var hinted atomic.Int32
	h := newHost(t, cfgOf(remote("api", config.TypeHTTP, srv.URL)), &host.Options{
		Authorizer: a,
		ErrorHint: func(server string, err error) string {
			if nk := (*needKeyError)(nil); errors.As(err, &nk) && nk.server == server {
				hinted.Add(1)
				return "give " + server + " its key"
			}
			return ""
		},
	})
	st := waitState(t, h, "api", host.StateError, 30*time.Second)
	var nk *needKeyError
	if !errors.As(st.Err, &nk) || nk.server != "api" {
		t.Errorf("status Err = %v, want the *needKeyError of api", st.Err)
	}
	if !strings.HasSuffix(st.Reason, "api refused the key; give api its key") || hinted.Load() == 0 {
		t.Errorf("reason = %q, want the error's text and then the hint", st.Reason)
	}
	if strings.Contains(jsonOf(st), "Err") {
		t.Errorf("status JSON holds Err: %s", jsonOf(st))
	}

	a.key.Store("k1")
	if err := h.Retry("api"); err != nil {
		t.Fatal(err)
	}
	st = waitState(t, h, "api", host.StateConnected, 30*time.Second)
	if st.Err != nil || st.Reason != "" {
		t.Errorf("connected: Err %v, reason %q; want neither", st.Err, st.Reason)
	}
}
