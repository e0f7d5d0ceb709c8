package host_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

func remote(name string, typ config.Type, url string) config.ResolvedServer {
	return resolved(name, config.Server{Type: typ, URL: url})
}

func TestStreamableHTTPAndSSE(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	h := newHost(t, cfgOf(
		remote("streamable", config.TypeHTTP, srv.URL),
		remote("legacy", config.TypeSSE, srv.SSEURL),
	), nil)
	for _, name := range []string{"streamable", "legacy"} {
		res := mustCall(t, h, "mcp__"+name+"__echo", map[string]any{"text": "over " + name})
		if !strings.Contains(textOf(res), "over "+name) {
			t.Errorf("%s echo = %q", name, textOf(res))
		}
		if st := statusOf(h, name); st.Command != map[string]string{"streamable": srv.URL, "legacy": srv.SSEURL}[name] {
			t.Errorf("%s command = %q, want its URL", name, st.Command)
		}
	}
}

func TestHeadersAndHeadersHelper(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{
		RequireHeader:  "Authorization: Bearer static-token",
		RequireHeaders: []string{"X-Team: from-helper"},
	})
	ok := remote("ok", config.TypeHTTP, srv.URL)
	ok.Effective.Headers = map[string]string{"Authorization": "Bearer static-token"}
	ok.Effective.HeadersHelper = `printf 'X-Team: from-helper\n'`
	noHelper := remote("nohelper", config.TypeHTTP, srv.URL)
	noHelper.Effective.Headers = map[string]string{"Authorization": "Bearer static-token"}
	badHelper := remote("badhelper", config.TypeHTTP, srv.URL)
	badHelper.Effective.HeadersHelper = `echo 'no colon here'`
	h := newHost(t, cfgOf(ok, noHelper, badHelper), nil)

	if got := headersSeen(t, h, "ok"); !strings.Contains(got, "X-Team: from-helper") || !strings.Contains(got, "Authorization: Bearer static-token") {
		t.Errorf("headers seen by the server: %q", got)
	}
	st := waitState(t, h, "nohelper", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "401") && !strings.Contains(strings.ToLower(st.Reason), "unauthorized") {
		t.Errorf("missing header: reason %q does not say 401", st.Reason)
	}
	st = waitState(t, h, "badhelper", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "headersHelper") || strings.Contains(st.Reason, "static-token") {
		t.Errorf("bad helper reason = %q", st.Reason)
	}
}

// A Streamable HTTP session the server forgot (404) is re-initialized
// transparently: the call that met the 404 still succeeds.
func TestForgottenSessionReinitializes(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	h := newHost(t, cfgOf(remote("remote", config.TypeHTTP, srv.URL)), nil)
	mustCall(t, h, "mcp__remote__echo", map[string]any{"text": "first"})
	srv.ForgetSessions()
	res := mustCall(t, h, "mcp__remote__echo", map[string]any{"text": "after forgetting"})
	if !strings.Contains(textOf(res), "after forgetting") {
		t.Errorf("echo after 404 = %q", textOf(res))
	}
	if st := statusOf(h, "remote"); st.State != host.StateConnected {
		t.Errorf("state after re-initialize = %s (%s)", st.State, st.Reason)
	}
}

// TestUnreachableHTTPServerSaysWhyOnce: a remote server nobody listens
// on is in error with the request's own words (the dial's refusal) said
// once, not under the SDK's layers of "calling … sending … rejected by
// transport", and without net/http's `Post "URL": `: a URL may hold a
// credential, and the server is named already.
func TestUnreachableHTTPServerSaysWhyOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nobody listens there now
	h := newHost(t, cfgOf(remote("gone", config.TypeHTTP, url)), nil)
	st := waitState(t, h, "gone", host.StateError, 20*time.Second)
	if !strings.HasPrefix(st.Reason, `initialize failed: dial tcp `) || !strings.Contains(st.Reason, "connection refused") ||
		strings.Contains(st.Reason, "rejected by transport") || strings.Contains(st.Reason, "calling") || strings.Contains(st.Reason, url) {
		t.Errorf("reason %q: want the request's own error, said once", st.Reason)
	}
}
