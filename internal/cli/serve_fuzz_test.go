package cli

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

// FuzzMemberSecretURL: whatever --url is, a request for a member's secret
// goes only over https, or http to a loopback host, and only to the
// member-secrets path of the name asked for.
func FuzzMemberSecretURL(f *testing.F) {
	for _, s := range []string{"https://gw.example.com", "http://127.0.0.1:8080/mcp", "http://gw.example.com", "http://localhost/mcp/", "https://gw/x?y#z", "http://[::1]:1", "ftp://a", "http://127.0.0.1.evil.com", "http://user@127.0.0.1@evil.com/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := memberSecretURL(raw, "GITHUB_TOKEN")
		if err != nil {
			return
		}
		u, perr := url.Parse(got)
		if perr != nil {
			t.Fatalf("%q gave %q, which does not parse: %v", raw, got, perr)
		}
		if !strings.HasSuffix(u.Path, MemberSecretsPath+"GITHUB_TOKEN") || u.RawQuery != "" {
			t.Fatalf("%q gave %q", raw, got)
		}
		switch u.Scheme {
		case "https":
		case "http":
			ip := net.ParseIP(u.Hostname())
			if !strings.EqualFold(u.Hostname(), "localhost") && (ip == nil || !ip.IsLoopback()) {
				t.Fatalf("%q: plain http to %q", raw, u.Hostname())
			}
		default:
			t.Fatalf("%q gave scheme %q", raw, u.Scheme)
		}
	})
}
