package host_test

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// TestRepoServerEnvironmentFiltered: the processes of a project-scope
// server (the server itself and its headersHelper) get only the base
// environment and what the definition names (trust.Environ); a
// user-scope server gets the whole parent environment.
func TestRepoServerEnvironmentFiltered(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the headersHelper here is a POSIX shell line")
	}
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	parent := []string{"PATH=/usr/bin:/bin", "SECRET_TOKEN=planted-secret", "NAMED_VAR=named"}
	helper := `printf 'X-Secret: [%s]\nX-Named: [%s]\n' "$SECRET_TOKEN" "$NAMED_VAR"`
	def := config.Server{Type: config.TypeHTTP, URL: srv.URL, HeadersHelper: helper, EnvPassthrough: []string{"NAMED_VAR"}}
	mine := resolved("mine", def)
	repo := resolved("repo", def)
	repo.Scope, repo.Trust = config.ScopeProject, config.TrustRepo
	stdioRepo := stdio("stdiorepo", "echo")
	stdioRepo.Scope, stdioRepo.Trust = config.ScopeProject, config.TrustRepo
	stdioRepo.Written.EnvPassthrough = []string{"NAMED_VAR"}
	stdioRepo.Effective.EnvPassthrough = []string{"NAMED_VAR"}

	h := newHost(t, cfgOf(mine, repo, stdioRepo), &host.Options{
		Gate:                                 func(*config.ResolvedServer) (host.State, string) { return "", "" }, // approved
		Environ:                              func() []string { return parent },
		AllowPrivateNetworkForProjectServers: true, // the test server is on loopback
	})
	want := map[string][]string{
		"mine": {"X-Secret: [planted-secret]", "X-Named: [named]"},
		"repo": {"X-Secret: []", "X-Named: [named]"},
	}
	// The repository's helper runs sandboxed (TestRepoHeadersHelperConfined);
	// where there is no sandbox it does not run at all.
	if why := proc.SandboxSupport(); why != "" && os.Getenv("CI") != "true" {
		delete(want, "repo")
	}
	for name, want := range want {
		got := headersSeen(t, h, name)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the server saw %q, want %q in it", name, got, w)
			}
		}
	}
	got := textOf(mustCall(t, h, "mcp__stdiorepo__env", map[string]any{"names": []string{"SECRET_TOKEN", "NAMED_VAR", "PATH"}}))
	for _, w := range []string{"SECRET_TOKEN unset", "NAMED_VAR=named", "PATH=/usr/bin:/bin"} {
		if !strings.Contains(got, w) {
			t.Errorf("stdio project server: env tool said %q, want %q in it", got, w)
		}
	}
}
