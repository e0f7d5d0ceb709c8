package trust

import (
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

var parentEnv = []string{
	"PATH=/usr/bin", "HOME=/home/u", "USER=u", "LANG=C.UTF-8", "LC_ALL=C", "LC_TIME=C", "TERM=xterm",
	"SECRET_TOKEN=s3cret", "AWS_SECRET_ACCESS_KEY=aws", "GITHUB_TOKEN=gh", "API_BASE=https://api",
	"DB_URL=postgres://", "PASS_ME=1", "LCX=no", "=weird",
}

func TestEnvironRepoServer(t *testing.T) {
	rs := repoServer("x", config.Server{
		Command:        "${TOOL_DIR:-/opt}/bin/x",
		Args:           []string{"--token", "${GITHUB_TOKEN}", "$${NOT_A_REF}", "${lower}"},
		Env:            map[string]string{"DB_URL": "${DB_URL}", "MODE": "${API_BASE:-${FALLBACK}}"},
		EnvPassthrough: []string{"PASS_ME"},
	})
	got := Environ(rs, parentEnv)
	want := []string{
		"PATH=/usr/bin", "HOME=/home/u", "USER=u", "LANG=C.UTF-8", "LC_ALL=C", "LC_TIME=C", "TERM=xterm",
		"GITHUB_TOKEN=gh", "API_BASE=https://api", "DB_URL=postgres://", "PASS_ME=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Environ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"API_BASE", "DB_URL", "FALLBACK", "GITHUB_TOKEN", "TOOL_DIR"}, References(rs.Written)); diff != "" {
		t.Errorf("References (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"API_BASE", "DB_URL", "FALLBACK", "GITHUB_TOKEN", "MODE", "PASS_ME", "TOOL_DIR"}, Named(rs.Written)); diff != "" {
		t.Errorf("Named (-want +got):\n%s", diff)
	}
	pv := PassedVariables(rs, parentEnv)
	if diff := cmp.Diff([]string{"API_BASE", "DB_URL", "GITHUB_TOKEN", "HOME", "LANG", "LC_ALL", "LC_TIME", "PASS_ME", "PATH", "TERM", "USER"}, pv); diff != "" {
		t.Errorf("PassedVariables (-want +got):\n%s", diff)
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "SECRET_TOKEN=") || strings.HasPrefix(kv, "AWS_SECRET_ACCESS_KEY=") {
			t.Errorf("secret passed: %s", kv)
		}
	}
}

func TestEnvironUserServerGetsEverything(t *testing.T) {
	for _, sc := range []config.Scope{config.ScopeUser, config.ScopeLocal, config.ScopeFlag, config.ScopeManaged, config.ScopeSession} {
		rs := &config.ResolvedServer{Name: "u", Scope: sc, Trust: config.TrustFor(sc), Written: config.Server{Command: "x"}}
		if diff := cmp.Diff(parentEnv, Environ(rs, parentEnv)); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", sc, diff)
		}
	}
}

func TestEnvironHeadersHelperReference(t *testing.T) {
	rs := repoServer("r", config.Server{URL: "https://h", HeadersHelper: "get-token --for ${GITHUB_TOKEN}"})
	got := PassedVariables(rs, parentEnv)
	if !contains(got, "GITHUB_TOKEN") || contains(got, "SECRET_TOKEN") {
		t.Errorf("PassedVariables = %v", got)
	}
}

func TestEnvironWindowsBase(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("Windows only")
	}
	rs := repoServer("r", config.Server{Command: "x"})
	got := PassedVariables(rs, []string{"SystemRoot=C:\\Windows", "Path=C:\\bin", "SECRET=1"})
	if diff := cmp.Diff([]string{"Path", "SystemRoot"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDanger(t *testing.T) {
	for _, k := range []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "dyld_library_path", "NODE_OPTIONS",
		"PYTHONPATH", "PYTHONSTARTUP", "PATH", "BASH_ENV", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "BASH_FUNC_ls%%"} {
		if w := Danger(k); w == "" || !strings.Contains(w, "code") {
			t.Errorf("Danger(%q) = %q", k, w)
		}
	}
	if w := Danger("NODE_OPTIONS"); w != "NODE_OPTIONS changes how node loads code: this server can run any code before its own" {
		t.Errorf("NODE_OPTIONS: %q", w)
	}
	for _, k := range []string{"GITHUB_TOKEN", "DEBUG", "LANG", "NODE_ENV", "PYTHONUNBUFFERED"} {
		if w := Danger(k); w != "" {
			t.Errorf("Danger(%q) = %q, want nothing", k, w)
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
