package cli

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

// FuzzNormalizeOrigin: normalizing never panics and is idempotent, so an
// allowed origin and a request's origin compare the same way however
// either is spelled.
func FuzzNormalizeOrigin(f *testing.F) {
	for _, s := range []string{"http://localhost:8080", "HTTPS://Example.COM:443/", "null", "", "http://[::1]:80", "http://a b", "file://", "http://%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := normalizeOrigin(s)
		if again := normalizeOrigin(n); again != n {
			t.Errorf("normalizeOrigin(%q) = %q, but normalizing that gives %q", s, n, again)
		}
	})
}

// FuzzBearer: a token is found only in a Bearer header, is never empty and
// never carries surrounding space.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer abc", "Basic abc", "Bearer", "Bearer  x y ", "", " Bearer\tabc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := bearer(h)
		if ok != (tok != "") {
			t.Fatalf("bearer(%q) = %q, %v", h, tok, ok)
		}
		if ok {
			if tok != strings.TrimSpace(tok) {
				t.Errorf("bearer(%q) = %q keeps surrounding space", h, tok)
			}
			scheme, _, _ := strings.Cut(strings.TrimSpace(h), " ")
			if !strings.EqualFold(scheme, "Bearer") {
				t.Errorf("bearer(%q) accepted scheme %q", h, scheme)
			}
		}
	})
}

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
