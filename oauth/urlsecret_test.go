package oauth_test

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// lockedBuffer is a log destination the host's goroutines write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestURLSecretNotInFailureReason: a server URL whose query holds a
// credential (${ACME}, a name no pattern matches, with a quote in its
// value that net/http's %q quoting of the URL escapes, so scrubbing the
// known value cannot find it) appears in no status reason, status error
// nor log line, whether the server is an OAuth one with no token (real
// loopback authorization server) or refuses the connection.
func TestURLSecretNotInFailureReason(t *testing.T) {
	const value = `acme"planted-7f3k9q`
	const tail = "planted-7f3k9q"
	srv := testoauth.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusing := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	for _, tc := range []struct {
		name, base, want string
	}{
		{"locked", srv.URL, "login required for locked"},
		{"refused", refusing, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written := config.Server{Type: config.TypeHTTP, URL: tc.base + "?k=${ACME}"}
			effective := config.Server{Type: config.TypeHTTP, URL: tc.base + "?k=" + value}
			rs := config.ResolvedServer{
				Name: tc.name, Written: written, Effective: effective,
				Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available,
			}
			var logs lockedBuffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			h := newHost(t, cfgOf(rs), opts(&oauth.Options{Dir: t.TempDir()}, logger))
			st := waitState(t, h, tc.name, host.StateError, 30*time.Second)
			text := st.Reason + "\n" + logs.String()
			if st.Err != nil {
				text += "\n" + st.Err.Error()
			}
			if !strings.Contains(st.Reason, tc.want) {
				t.Errorf("reason = %q, want it to say %q", st.Reason, tc.want)
			}
			if strings.Contains(text, tail) {
				t.Errorf("the URL's secret is shown:\n%s", text)
			}
		})
	}
}

// TestOAuthLoginWithKeyInServerQuery: a server whose URL carries a key in
// its query logs in like any other (before, the SDK took the query into
// the resource, its metadata did not match, and the fallback issuer
// "<origin>?k=…" did not either), and the key is not sent to the
// authorization server as part of the resource parameter.
func TestOAuthLoginWithKeyInServerQuery(t *testing.T) {
	const key = "plain-query-key-7f3k9q"
	srv := testoauth.Start(t)
	h := newHost(t, cfgOf(remote("keyed", config.TypeHTTP, srv.URL+"?k="+key)), opts(&oauth.Options{Dir: t.TempDir(), NoBrowser: true}, nil))
	res := mustCall(t, h, "mcp__keyed__echo", map[string]any{"text": "authorized"})
	if !strings.Contains(textOf(res), "authorized") {
		t.Fatalf("echo = %q", textOf(res))
	}
	rs := srv.Resources()
	if len(rs) == 0 {
		t.Fatal("no resource parameter was sent: the check below proves nothing")
	}
	for _, r := range rs {
		if strings.Contains(r, key) {
			t.Errorf("resource parameter %q holds the server URL's query", r)
		}
	}
}
