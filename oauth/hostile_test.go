package oauth_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
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
