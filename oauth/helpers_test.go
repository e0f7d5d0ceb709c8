package oauth_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hosttest"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// These tests run the Client where it is used: in a real host, against
// the real OAuth-protected MCP server of internal/testserver/testoauth on
// loopback HTTP.

// A *Client plugs into a host as its Authorizer.
var _ host.Authorizer = (*oauth.Client)(nil)

// opts is a host's options with an OAuth Client made of o; logger (nil:
// none) is given to both, as an application does.
func opts(o *oauth.Options, logger *slog.Logger) *host.Options {
	o.Logger = logger
	return &host.Options{Authorizer: oauth.New(o), Logger: logger, ErrorHint: hint}
}

// hint is the tests' host.ErrorHint: it names the typed error a reason
// came from, as the CLI's names the command that helps, so a test sees
// that errors.As finds it through the SDK's and the host's wrapping.
func hint(_ string, err error) string {
	var lr *oauth.LoginRequiredError
	var kf *oauth.KeyFileError
	switch {
	case errors.As(err, &lr):
		return "login required for " + lr.Server
	case errors.As(err, &kf):
		return "key file error for " + kf.Server
	}
	return ""
}

func remote(name string, typ config.Type, url string) config.ResolvedServer {
	def := config.Server{Type: typ, URL: url}
	return config.ResolvedServer{
		Name: name, Written: def, Effective: def,
		Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available,
	}
}

func cfgOf(servers ...config.ResolvedServer) *config.Resolved {
	return &config.Resolved{Servers: servers}
}

// newHost starts a host and closes it when the test ends.
func newHost(t *testing.T, cfg *config.Resolved, opts *host.Options) *host.Host {
	t.Helper()
	opts.LookupEnv = func(string) (string, bool) { return "", false }
	h := host.New(cfg, opts)
	t.Cleanup(func() { h.Close() })
	return h
}

// The helpers host's and oauth's tests share (internal/hosttest).
var (
	ctxFor    = hosttest.Ctx
	waitState = hosttest.WaitState
	textOf    = hosttest.Text
)

func mustCall(t *testing.T, h *host.Host, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := h.Call(ctxFor(t, 30*time.Second), name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("call %s: tool error %q", name, textOf(res))
	}
	return res
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// syncBuffer is a log destination the host's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
