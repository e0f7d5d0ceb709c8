package host

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
		rt := &headerTransport{base: http.DefaultTransport, headers: http.Header{"X-Api-Key": {"key-123"}}, origin: endpointOrigin(tc.configured)}
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
