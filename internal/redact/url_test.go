package redact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// template writes a URL as config.Expand with a Mark-answering lookup
// would: each "{}" stands for one ${VAR}.
func template(s string) string { return strings.ReplaceAll(s, "{}", Mark) }

func TestURLExpansions(t *testing.T) {
	for _, tc := range []struct {
		name, template, effective string
		want                      []string
	}{
		{"query", "https://api.example.com/mcp?k={}", "https://api.example.com/mcp?k=acme-secret", []string{"acme-secret"}},
		{"path", "https://x/{}/mcp", "https://x/tenant-key-1/mcp", []string{"tenant-key-1"}},
		{"userinfo", "https://bob:{}@x/mcp", "https://bob:pw-1234@x/mcp", []string{"pw-1234"}},
		{"decoded too", "https://x/?k={}", "https://x/?k=a%2Bb%20c", []string{"a%2Bb%20c", "a+b c"}},
		{"the host is not a secret", "https://{}/mcp", "https://api.example.com/mcp", nil},
		{"nor the host and port", "https://{}:{}/mcp", "https://api.example.com:8443/mcp", nil},
		{"a base URL: its path part", "{}/mcp", "https://api.example.com/tenant-9f/v1/mcp", []string{"/tenant-9f/v1"}},
		{"a whole URL: userinfo and path", "{}", "https://u:pw-5678@h.example/p?q=s3cr3t", []string{"u:pw-5678@", "/p?q=s3cr3t"}},
		{"adjacent references make one value", "https://x/{}{}", "https://x/abcdef", []string{"abcdef"}},
		{"too short to scrub", "https://x/?v={}", "https://x/?v=2", nil},
		{"no reference", "https://x/mcp", "https://x/mcp", nil},
		{"a template that does not fit", "https://x/{}/mcp", "https://y/other", []string{"/other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := URLExpansions(template(tc.template), tc.effective)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("URLExpansions(%q, %q) (-want +got):\n%s", tc.template, tc.effective, diff)
			}
		})
	}
}

// A literal URL is shown without its userinfo password, secret-named
// query or fragment parameters, or a token standing as the user.
func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://bob:hunter22@x.example/mcp", "https://bob:<redacted>@x.example/mcp"},
		{"https://x.example/mcp?api_key=abc123&v=2", "https://x.example/mcp?api_key=<redacted>&v=2"},
		{"https://x.example/cb#access_token=abc123&state=s", "https://x.example/cb#access_token=<redacted>&state=s"},
		{"https://ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r", "https://<redacted>@github.com/o/r"},
		{"https://git@github.com/o/r", "https://git@github.com/o/r"},
		{"https://x.example/mcp?k=${ACME}", "https://x.example/mcp?k=${ACME}"},
		{"https://x.example/mcp?k=v", "https://x.example/mcp?k=v"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
