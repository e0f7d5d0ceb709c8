package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// TestAuthPerMember reads the auth file's perMember servers: each with
// its fallback, and a file with a bad entry refused with an error naming
// the file and the entry — while it is broken, the servers per-member
// before stay so (access tokens are still accepted then).
func TestAuthPerMember(t *testing.T) {
	path := filepath.Join(t.TempDir(), gateway.AuthFileName)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{
  "principals": {},
  // each member's own GitHub token; Jira falls back to the gateway's
  "perMember": {"github": {}, "jira": {"fallback": "shared"}}
}`)
	a := gateway.NewAuth(&gateway.AuthOptions{File: path})
	if err := a.LoadErr(); err != nil {
		t.Fatal(err)
	}
	if e, ok := a.PerMember("github"); !ok || e.Fallback != "" {
		t.Errorf("github: %+v %v", e, ok)
	}
	if e, ok := a.PerMember("jira"); !ok || e.Fallback != gateway.FallbackShared {
		t.Errorf("jira: %+v %v", e, ok)
	}
	if _, ok := a.PerMember("time"); ok {
		t.Error("time is not per-member")
	}
	if got := strings.Join(a.PerMemberServers(), ","); got != "github,jira" {
		t.Errorf("PerMemberServers: %s", got)
	}
	for _, tc := range []struct{ file, want string }{
		{`{"perMember": {"github": {"fallback": "anyone"}}}`, `perMember "github": fallback "anyone": use "none" or "shared"`},
		{`{"perMember": {"github": null}}`, `perMember "github" is null`},
		{`{"perMember": {"git hub": {}}}`, `perMember: "git hub" is not a server name`},
		{`{"perMember": {"github": {"falback": "shared"}}}`, `unknown field "falback"`},
	} {
		write(tc.file)
		err := a.Reload()
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q naming the file", tc.file, err, tc.want)
		}
		if e, ok := a.PerMember("jira"); !ok || e.Fallback != gateway.FallbackShared {
			t.Errorf("%s: jira no longer per-member while the file is broken: %+v %v", tc.file, e, ok)
		}
	}
}
