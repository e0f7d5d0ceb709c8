package host

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/netguard"
)

// The configured headers of an https server are not sent over http to
// its host, where a redirect from https to http leads: in clear text
// they would be anyone's on the way. Its own origin still gets them.
func TestHeadersNotSentOnADowngrade(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Api-Key"))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct{ configured, want string }{
		{"https://" + host + "/mcp", ""},
		{"http://" + host + "/mcp", "key-123"},
	} {
		got = nil
		rt := &headerTransport{base: http.DefaultTransport, headers: http.Header{"X-Api-Key": {"key-123"}}, origin: netguard.OriginOf(tc.configured)}
		resp, err := (&http.Client{Transport: rt}).Get(srv.URL + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("server configured as %s: http://%s got X-Api-Key %q, want %q", tc.configured, host, got, tc.want)
		}
	}
}

// An SSE endpoint event or a redirect may spell the default port out
// (http://mcp.test:80/messages for a server configured as
// http://mcp.test/mcp): that is the same origin, and its requests carry
// the configured headers; another port's do not.
func TestHeadersFollowTheDefaultPortSpelledOut(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Api-Key"))
	}))
	defer srv.Close()
	// Every name dials the test server: the URL's host and port are
	// what the transport judges, the connection is real loopback HTTP.
	base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	defer base.CloseIdleConnections()
	rt := &headerTransport{base: base, headers: http.Header{"X-Api-Key": {"key-123"}}, origin: netguard.OriginOf("http://MCP.test/mcp")}
	for _, tc := range []struct{ url, want string }{
		{"http://mcp.test:80/messages", "key-123"},
		{"http://mcp.test/messages", "key-123"},
		{"http://mcp.test:8080/messages", ""},
	} {
		got = nil
		resp, err := (&http.Client{Transport: rt}).Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s got X-Api-Key %q, want %q", tc.url, got, tc.want)
		}
	}
}
