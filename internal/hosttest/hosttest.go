// Package hosttest holds the helpers the tests of host and of the packages
// that plug into it (oauth) share: a bounded context, a server's status,
// a bounded wait for a state, and a result's text. Only tests import it.
package hosttest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// Ctx is a context that ends after d or with the test.
func Ctx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Status is server name's status in h (the zero status if h has none).
func Status(h *host.Host, name string) host.ServerStatus {
	for _, s := range h.Status() {
		if s.Name == name {
			return s
		}
	}
	return host.ServerStatus{}
}

// WaitState polls until server name is in state want, and fails the test
// if it is not within the bound: a hang is a failure, not a stuck test.
func WaitState(t testing.TB, h *host.Host, name string, want host.State, within time.Duration) host.ServerStatus {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st := Status(h, name)
		if st.State == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s: state %q (%s), want %q within %v", name, st.State, st.Reason, want, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Text is the text of res's text content, joined.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
