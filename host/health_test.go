package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// A server whose tools/list fails is not a healthy "connected, 0 tools":
// its status names the failed request and the server's error, and the
// list's warning says it too (issue 16, point 5).
func TestListFailureIsNotHealthy(t *testing.T) {
	h := newHost(t, cfgOf(stdio("lister", "list-error", "-fail", "tools/list,prompts/list", "-message", "index not loaded")), nil)
	waitState(t, h, "lister", host.StateConnected, 20*time.Second)
	list, err := h.Tools(ctxFor(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 0 || !containsAll(strings.Join(list.Warnings, "\n"), "lister", "tools/list failed", "index not loaded") {
		t.Errorf("tools %d, warnings %q; want none, and a warning naming tools/list and the error", len(list.Tools), list.Warnings)
	}
	if _, warnings, _ := h.Prompts(ctxFor(t, 10*time.Second)); !containsAll(strings.Join(warnings, "\n"), "prompts/list failed", "index not loaded") {
		t.Errorf("prompts warnings %q", warnings)
	}
	st := statusOf(h, "lister")
	if !containsAll(st.Reason, "tools/list failed", "index not loaded", "prompts/list failed") {
		t.Errorf("status reason %q; want the failed lists named", st.Reason)
	}
	if st.ListErrors["tools/list"] == "" || st.ListErrors["prompts/list"] == "" {
		t.Errorf("listErrors %v", st.ListErrors)
	}
	if _, ok := st.ListErrors["resources/list"]; ok {
		t.Errorf("resources/list works, but listErrors says %v", st.ListErrors)
	}
}

// A crashed server's reason is the line that says what went wrong, not the
// last line of the usage text it printed after it.
func TestCrashReasonIsTheErrorNotTheUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"error then usage", nil},
		{"usage then error", []string{"-error-last"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, cfgOf(stdio("cli", "usage-exit", tc.args...)), nil)
			st := waitState(t, h, "cli", host.StateError, 20*time.Second)
			if !strings.Contains(st.Reason, "error: required option '--api-key <key>' not specified") {
				t.Errorf("reason %q; want the error line", st.Reason)
			}
		})
	}
}

// A line on stdout before initialize is named as what it is.
func TestStdoutBannerBeforeInitializeIsNamed(t *testing.T) {
	h := newHost(t, cfgOf(stdio("banner", "stdout-banner")), nil)
	st := waitState(t, h, "banner", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "wrote a non-JSON line on stdout before initialize: Secure MCP Filesystem Server running on stdio") {
		t.Errorf("reason %q", st.Reason)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A list's warning is scrubbed of the secrets the host knows, as the
// server's status reason is: a server may echo its token in its error.
func TestListFailureWarningHidesSecrets(t *testing.T) {
	const secret = "tok-9f8e7d6c5b4a39281706"
	rs := stdio("lister", "list-error", "-message", "backend refused token "+secret)
	rs.Effective.Env = map[string]string{"API_TOKEN": secret}
	rs.Written.Env = rs.Effective.Env
	h := newHost(t, cfgOf(rs), nil)
	waitState(t, h, "lister", host.StateConnected, 20*time.Second)
	list, err := h.Tools(ctxFor(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(list.Warnings, "\n")
	if !containsAll(joined, "lister", "tools/list failed", "backend refused token") || strings.Contains(joined, secret) {
		t.Errorf("warnings %q; want the failure named, without the token", list.Warnings)
	}
}
