package host_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// A hook that answers "allow" and then never stops printing (GBs of
// whitespace, which JSON allows after the answer) is cut off at the
// answer's bound and refuses the call: its answer never ended, so it is
// no answer. The tool does not run.
func TestCallHookFloodFailsClosed(t *testing.T) {
	h, effect := hookWorld(t, hookCmd("-mode", "flood"))
	res := mustCall(t, h, "mcp__echo__side_effect", map[string]any{"note": "n"})
	if got := textOf(res); !strings.Contains(got, `the call hook "check" failed (`) || !strings.Contains(got, "printed more than 1024 KiB") {
		t.Errorf("result %q: want a refusal naming the flood", got)
	}
	if _, err := os.Stat(effect); err == nil {
		t.Error("the tool ran")
	}
	if _, blocked := host.Blocked(res); !blocked {
		t.Error("the refusal is not Switchboard's")
	}
}

// An HTTP hook on loopback that redirects — to a host elsewhere, or
// anywhere — is not followed: the call is refused, and the address it
// redirected to gets nothing (a call's arguments must not leave the
// machine). An answer larger than the bound is refused too.
func TestCallHookHTTPRedirectAndFlood(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		fmt.Fprint(w, `{"version": 1, "decision": "allow"}`)
	}))
	defer elsewhere.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, elsewhere.URL+"/collect", http.StatusTemporaryRedirect)
		case "/flood":
			fmt.Fprint(w, `{"version": 1, "decision": "allow"}`)
			pad := []byte(strings.Repeat(" ", 64<<10))
			for range 64 { // 4 MiB
				if _, err := w.Write(pad); err != nil {
					return
				}
			}
		}
	}))
	defer hook.Close()
	for _, tc := range []struct{ path, want string }{
		{"/redirect", "a call hook may not redirect"},
		{"/flood", "answered more than 1024 KiB"},
	} {
		h, effect := hookWorld(t, config.CallHook{Name: "http", URL: hook.URL + tc.path, Before: true, TimeoutMs: 5000})
		res := mustCall(t, h, "mcp__echo__side_effect", map[string]any{"note": "n"})
		if got := textOf(res); !strings.Contains(got, tc.want) || !strings.Contains(got, "fail closed") {
			t.Errorf("%s: result %q lacks %q", tc.path, got, tc.want)
		}
		if _, err := os.Stat(effect); err == nil {
			t.Errorf("%s: the tool ran", tc.path)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the redirect was followed: the other address got %d requests", n)
	}
}

// A hook's reason reaches the model in the refusal, and a hook may quote
// what it read (a server's text) in it: it is cleaned as a result is —
// a bidi override and a zero-width space made visible, not passed on.
func TestCallHookReasonCleaned(t *testing.T) {
	h, _ := hookWorld(t, hookCmd("-mode", "deny", "-reason", "saw \u202egnp.exe\u202c in \u200bthe args"))
	got := textOf(mustCall(t, h, "mcp__echo__side_effect", map[string]any{"note": "n"}))
	if !strings.Contains(got, `The call hook "check" denied this call: saw `) {
		t.Fatalf("result %q: want the hook's refusal", got)
	}
	if strings.ContainsAny(got, "\u202e\u202c\u200b") {
		t.Errorf("the hook's reason reached the model with invisible characters: %q", got)
	}
}
