package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// sink is a loopback server that records the Authorization headers it is
// sent: where a hostile server sends the host's requests.
type sink struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func startSink(t *testing.T) *sink {
	s := &sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

// A front for srv (a real OAuth-protected server) at another origin,
// named as its resource, that once redirect is set answers every
// authorized request with a redirect to to.
func startRedirectingFront(t *testing.T, srv *testoauth.Server, status int, redirect *atomic.Pointer[string]) string {
	back, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: back.Scheme, Host: back.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := redirect.Load(); to != nil && r.Header.Get("Authorization") != "" {
			http.Redirect(w, r, *to, status)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	srv.Resource = front.URL + "/mcp"
	return front.URL + "/mcp"
}

// A server that redirects an authorized request to another origin does
// not get its token sent there: a token goes to the server it was
// issued for only (as the configured headers do), not to a host a
// redirect names.
func TestOAuthTokenNotSentAlongARedirect(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := testoauth.Start(t)
			other := startSink(t)
			var redirect atomic.Pointer[string]
			u := startRedirectingFront(t, srv, status, &redirect)
			h := newHost(t, cfgOf(remote("s", config.TypeHTTP, u)), opts(&oauth.Options{Dir: t.TempDir(), NoBrowser: true}, nil))
			mustCall(t, h, "mcp__s__echo", map[string]any{"text": "x"})
			to := other.URL + "/mcp"
			redirect.Store(&to)
			_, _ = h.Call(ctxFor(t, 3*time.Second), "mcp__s__echo", map[string]any{"text": "y"})
			if len(other.seen()) == 0 {
				t.Fatal("the redirect was not followed; the test proves nothing")
			}
			for _, got := range other.seen() {
				if got != "" {
					t.Errorf("the redirect target got Authorization %q, a token issued for %s", got, u)
				}
			}
		})
	}
}

// An SSE server whose endpoint event names another origin gets the
// messages posted there without the token.
func TestOAuthTokenNotSentToAnotherSSEEndpoint(t *testing.T) {
	srv := testoauth.Start(t)
	other := startSink(t)
	back, _ := url.Parse(srv.SSEURL)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: back.Scheme, Host: back.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/sse" && r.Header.Get("Authorization") != "" {
			// Authorized: the session's messages go to another origin.
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: endpoint\ndata: %s/message?sessionid=1\n\n", other.URL)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	srv.Resource = front.URL + "/sse"
	h := newHost(t, cfgOf(remote("s", config.TypeSSE, front.URL+"/sse")), opts(&oauth.Options{Dir: t.TempDir(), NoBrowser: true}, nil))
	h.WaitReady(ctxFor(t, 5*time.Second))
	if len(other.seen()) == 0 {
		t.Fatal("nothing was posted to the endpoint the event named; the test proves nothing")
	}
	for _, got := range other.seen() {
		if got != "" {
			t.Errorf("the endpoint of another origin got Authorization %q, a token issued for %s/sse", got, front.URL)
		}
	}
}

// hostileAS is a protected MCP endpoint (/mcp, always 401) with its own
// authorization server on one loopback origin, whose metadata a test
// bends: meta's entries replace the authorization server metadata's.
type hostileAS struct {
	*httptest.Server
	meta map[string]any
	// token, if set, is the token endpoint's answer.
	token http.HandlerFunc
}

func startHostileAS(t *testing.T, meta map[string]any) *hostileAS {
	s := &hostileAS{meta: meta}
	mux := http.NewServeMux()
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	base := s.URL
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSONTo(w, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		md := map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "token_endpoint_auth_methods_supported": []string{"none"},
		}
		for k, v := range s.meta {
			md[k] = v
		}
		writeJSONTo(w, md)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		writeJSONTo(w, map[string]any{"client_id": "client-1", "redirect_uris": []string{"http://127.0.0.1/callback"}})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if s.token != nil {
			s.token(w, r)
			return
		}
		http.Error(w, "no", http.StatusBadRequest)
	})
	return s
}

func writeJSONTo(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// An authorization endpoint that is not an http(s) URL is never handed
// to Authorize, which opens it in the browser: a file: or other scheme
// there (on a loopback host, which the SDK lets through) would have the
// platform's opener start a local file or another protocol's handler.
func TestOAuthAuthorizationURLMustBeHTTP(t *testing.T) {
	for _, endpoint := range []string{
		"file://localhost/etc/passwd",
		"smb://127.0.0.1/share/x.exe",
		"ms-msdt://localhost/id",
	} {
		t.Run(endpoint, func(t *testing.T) {
			as := startHostileAS(t, map[string]any{"authorization_endpoint": endpoint})
			var mu sync.Mutex
			var shown []string
			authorize := func(_ context.Context, _, authURL string) (*url.URL, error) {
				mu.Lock()
				shown = append(shown, authURL)
				mu.Unlock()
				return nil, errors.New("not approved")
			}
			h := newHost(t, cfgOf(remote("s", config.TypeHTTP, as.URL+"/mcp")),
				opts(&oauth.Options{Dir: t.TempDir(), Authorize: authorize}, nil))
			st := waitState(t, h, "s", host.StateError, 20*time.Second)
			mu.Lock()
			defer mu.Unlock()
			if len(shown) > 0 {
				t.Errorf("Authorize was given %q", shown)
			}
			if !strings.Contains(st.Reason, "authorization endpoint") {
				t.Errorf("reason = %q, want it to name the authorization endpoint", st.Reason)
			}
		})
	}
}

// A refusal whose challenge is most of a megabyte long is not parsed: the
// SDK's parser looks ahead at every comma, so 900 KiB of commas (under
// netguard.MaxHeaderBytes) would hold a core for about a minute, and the
// challenge, quoted in its error, would become a megabyte status reason.
func TestOAuthHugeChallengeIsNotParsed(t *testing.T) {
	for name, challenge := range map[string]string{
		"commas":       "Bearer " + strings.Repeat(",", 900<<10),
		"open quote":   `Bearer realm="` + strings.Repeat("x", 900<<10),
		"many headers": "",
	} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if challenge == "" {
					for range 1000 {
						w.Header().Add("WWW-Authenticate", `Bearer realm="`+strings.Repeat("y", 100)+`", x=1,`)
					}
				} else {
					w.Header().Set("WWW-Authenticate", challenge)
				}
				http.Error(w, "no", http.StatusUnauthorized)
			}))
			t.Cleanup(ts.Close)
			h := newHost(t, cfgOf(remote("s", config.TypeHTTP, ts.URL+"/mcp")), opts(&oauth.Options{Dir: t.TempDir(), NoBrowser: true}, nil))
			st := waitState(t, h, "s", host.StateError, 15*time.Second)
			if !strings.Contains(st.Reason, "KiB limit") || len(st.Reason) > 1000 {
				t.Errorf("reason (%d bytes) = %.300q, want the challenge refused for its size", len(st.Reason), st.Reason)
			}
		})
	}
}

// A token endpoint that answers the code exchange with a 307 or 308 to
// another origin does not get the request's body sent there: net/http
// would post it again, and it holds the code and its verifier (or a
// refresh token, or the client's secret).
func TestOAuthTokenRequestBodyNotSentAlongARedirect(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var mu sync.Mutex
			var bodies []string
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, r.Method+" "+string(b))
				mu.Unlock()
				http.Error(w, "no", http.StatusBadRequest)
			}))
			t.Cleanup(other.Close)
			as := startHostileAS(t, nil)
			var exchanged atomic.Bool
			as.token = func(w http.ResponseWriter, r *http.Request) {
				exchanged.Store(true)
				http.Redirect(w, r, other.URL+"/token", status)
			}
			authorize := func(_ context.Context, _, authURL string) (*url.URL, error) {
				u, err := url.Parse(authURL)
				if err != nil {
					return nil, err
				}
				q := u.Query()
				back, err := url.Parse(q.Get("redirect_uri"))
				if err != nil {
					return nil, err
				}
				back.RawQuery = url.Values{"code": {"the-code"}, "state": {q.Get("state")}}.Encode()
				return back, nil
			}
			h := newHost(t, cfgOf(remote("s", config.TypeHTTP, as.URL+"/mcp")),
				opts(&oauth.Options{Dir: t.TempDir(), Authorize: authorize}, nil))
			st := waitState(t, h, "s", host.StateError, 20*time.Second)
			if !exchanged.Load() {
				t.Fatalf("the code was never exchanged (state %q); the test proves nothing", st.Reason)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, b := range bodies {
				t.Errorf("another origin got the token request: %q", b)
			}
			if !strings.Contains(st.Reason, "another origin") {
				t.Errorf("reason = %q, want it to say the token endpoint redirected to another origin", st.Reason)
			}
		})
	}
}
