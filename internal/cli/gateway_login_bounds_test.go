package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
)

// A server behind the gateway that answers a member's login with a JSON
// body that never ends is read to the 16 MiB message limit, not into
// memory until the login's timeout.
func TestMemberLoginBoundsWhatTheServerSends(t *testing.T) {
	var sent int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"`))
		chunk := []byte(strings.Repeat("x", 64<<10))
		// 64 MiB at most: past the limit, and an end if it is not held.
		for sent < 64<<20 {
			n, err := w.Write(chunk)
			sent += int64(n)
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(ts.Close)
	err := loginTo(t, ts.URL)
	if msg := err.Error(); !strings.Contains(msg, "16 MiB message limit") {
		t.Errorf("error = %.300q…, want it to name the 16 MiB message limit (the server sent %d MiB)", msg, sent>>20)
	}
}

// What a failed member login prints of its error stays a few lines
// long, whatever the server sent: net/http quotes a malformed header
// line whole (here 1.25 MiB of terminal escapes, under the header limit).
func TestMemberLoginErrorIsBounded(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Junk", strings.Repeat("\x1b[31m", 150<<10))
		http.Error(w, "no", http.StatusBadRequest)
	}))
	t.Cleanup(ts.Close)
	msg := loginTo(t, ts.URL).Error()
	if len(msg) > 2500 || strings.Contains(msg, "\x1b") {
		t.Errorf("error is %d bytes (raw escapes: %v): %.300q…, want it cut to a few lines and escaped", len(msg), strings.Contains(msg, "\x1b"), msg)
	}
}

// loginTo runs a member login to the server at url and returns its
// error, failing the test if there is none.
func loginTo(t *testing.T, url string) error {
	t.Helper()
	o := &GatewayLoginOptions{IO: &IOStreams{}, Server: "up", NoBrowser: true, Timeout: 60 * time.Second}
	_, err := memberLogin(context.Background(), o, memberLoginInfo{Server: "up", URL: url + "/mcp", Type: config.TypeHTTP})
	if err == nil {
		t.Fatal("the login succeeded against a hostile server")
	}
	return err
}
