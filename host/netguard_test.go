package host_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// project makes a remote server repo-authored (project scope).
func project(rs config.ResolvedServer) config.ResolvedServer {
	rs.Scope, rs.Trust = config.ScopeProject, config.TrustRepo
	return rs
}

// resolverTo answers every name with one address.
type resolverTo string

func (r resolverTo) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.ParseIP(string(r))}}, nil
}

// Outbound URL safety (docs/security.md) end to end: a project-scope server whose URL is the loopback test
// server ends in state error with the refusal, and never sends it a request;
// the same URL at user scope connects; the user's setting lets the project
// server connect too. A host name that resolves to 127.0.0.1 is refused the
// same way, and a metadata address is refused for every scope.
func TestOutboundAddressPolicy(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(srv.URL, "/mcp"), "http://"))
	named := "http://mcp.example.test:" + port + "/mcp"
	gate := func(*config.ResolvedServer) (host.State, string) { return "", "" } // approved: only the address check is under test
	h := newHost(t, cfgOf(
		project(remote("repo", config.TypeHTTP, srv.URL)),
		project(remote("reponamed", config.TypeHTTP, named)),
		project(remote("reposse", config.TypeSSE, srv.SSEURL)),
		remote("mine", config.TypeHTTP, srv.URL),
		remote("metadata", config.TypeHTTP, "http://169.254.169.254/latest/meta-data/"),
		remote("metadata2", config.TypeHTTP, "http://[::ffff:169.254.169.254]/"),
		remote("metadata3", config.TypeHTTP, "http://2852039166/"),
	), &host.Options{Gate: gate, Resolver: resolverTo("127.0.0.1")})

	for name, want := range map[string]string{
		"repo":      "refused: 127.0.0.1 is a loopback address; project-scope servers may not reach private addresses",
		"reponamed": "refused: mcp.example.test resolves to 127.0.0.1, which is a loopback address",
		"reposse":   "refused: 127.0.0.1 is a loopback address",
		"metadata":  "refused: 169.254.169.254 is a cloud metadata address",
		"metadata2": "refused: ::ffff:169.254.169.254 (169.254.169.254) is a cloud metadata address",
		"metadata3": "refused: 2852039166 (169.254.169.254) is a cloud metadata address",
	} {
		st := waitState(t, h, name, host.StateError, 20*time.Second)
		if !strings.Contains(st.Reason, want) {
			t.Errorf("%s: reason %q, want it to say %q", name, st.Reason, want)
		}
	}
	if !strings.Contains(statusOf(h, "repo").Reason, "allowPrivateNetworkForProjectServers") {
		t.Errorf("the refusal does not say how to allow it: %q", statusOf(h, "repo").Reason)
	}
	before := srv.Requests()
	res := mustCall(t, h, "mcp__mine__echo", map[string]any{"text": "user scope may reach loopback"})
	if !strings.Contains(textOf(res), "user scope may reach loopback") {
		t.Errorf("user-scope echo = %q", textOf(res))
	}
	if srv.Requests() == before {
		t.Error("the user-scope server's requests did not reach the test server")
	}

	// The user's setting allows private addresses for project servers.
	// (By name: localhost, since the SDK's handler on loopback refuses
	// another Host header.)
	allowed := newHost(t, cfgOf(
		project(remote("repo", config.TypeHTTP, srv.URL)),
		project(remote("reponamed", config.TypeHTTP, "http://localhost:"+port+"/mcp")),
		project(remote("metadata", config.TypeHTTP, "http://169.254.169.254/")),
	), &host.Options{Gate: gate, Resolver: resolverTo("127.0.0.1"), AllowPrivateNetworkForProjectServers: true})
	for _, name := range []string{"repo", "reponamed"} {
		res := mustCall(t, allowed, "mcp__"+name+"__echo", map[string]any{"text": "allowed by the user"})
		if !strings.Contains(textOf(res), "allowed by the user") {
			t.Errorf("%s echo = %q", name, textOf(res))
		}
	}
	if st := waitState(t, allowed, "metadata", host.StateError, 20*time.Second); !strings.Contains(st.Reason, "cloud metadata") {
		t.Errorf("metadata with private allowed: %q", st.Reason)
	}
}

// The refused project server never reached the test server: its first
// request would have been counted.
func TestRefusedProjectServerSendsNothing(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	h := newHost(t, cfgOf(project(remote("repo", config.TypeHTTP, srv.URL))),
		&host.Options{Gate: func(*config.ResolvedServer) (host.State, string) { return "", "" }})
	waitState(t, h, "repo", host.StateError, 20*time.Second)
	if n := srv.Requests(); n != 0 {
		t.Errorf("the refused server sent %d requests", n)
	}
	c, err := h.OutboundClient("repo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(srv.URL); err == nil || !strings.Contains(err.Error(), "refused: 127.0.0.1 is a loopback address") {
		t.Errorf("OutboundClient of a project server fetched loopback: %v", err)
	}
	if _, err := h.OutboundClient("nope"); err == nil {
		t.Error("OutboundClient of an unknown server: no error")
	}
}

// syncBuffer is a bytes.Buffer safe for the host's concurrent logging.
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

// Redaction (docs/security.md, What is never logged): configured env and header values, tool arguments and
// what a server echoes on stderr never reach the log, the status reason or
// the stderr tail, even at debug level.
func TestSecretsNeverLoggedOrShown(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{RequireHeader: "Authorization: Bearer planted-secret-2"})
	dying := stdio("dying", "exit-init", "-message", "fatal: token planted-secret-1 was rejected")
	dying.Effective.Env = map[string]string{"API_TOKEN": "planted-secret-1"}
	echo := stdio("echo", "echo")
	echo.Effective.Env = map[string]string{"SERVICE_PASSWORD": "planted-secret-4"}
	web := remote("web", config.TypeHTTP, srv.URL+"?access_token=planted-secret-5")
	web.Effective.Headers = map[string]string{"Authorization": "Bearer planted-secret-2"}
	var logs syncBuffer
	h := newHost(t, cfgOf(dying, echo, web), &host.Options{
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		// A secret of the host's own environment, which expansion could
		// have put anywhere.
		Environ: func() []string { return append(os.Environ(), "PARENT_TOKEN=planted-secret-6") },
	})
	mustCall(t, h, "mcp__echo__echo", map[string]any{"text": "hi", "password": "planted-secret-3"})
	mustCall(t, h, "mcp__echo__stderr", map[string]any{"text": "debug: SERVICE_PASSWORD is planted-secret-4, parent planted-secret-6"})
	mustCall(t, h, "mcp__web__echo", map[string]any{"text": "over http"})
	if _, err := h.Call(ctxFor(t, 20*time.Second), "mcp__dying__echo", map[string]any{}); err == nil {
		t.Error("call to a dead server succeeded")
	} else if strings.Contains(err.Error(), "planted-secret") {
		t.Errorf("call error holds a secret: %v", err)
	}
	st := waitState(t, h, "dying", host.StateError, 20*time.Second)
	if !strings.Contains(st.Reason, "fatal: token") {
		t.Errorf("the reason lost the server's message: %q", st.Reason)
	}
	h.Pause("echo") // its stderr tail is shown once it is not connected
	shown := jsonOf(h.Status())
	if !strings.Contains(shown, "debug: SERVICE_PASSWORD is") {
		t.Errorf("the echo server's stderr line is missing from status: %s", shown)
	}
	if !strings.Contains(logs.String(), `"msg":"calling tool"`) {
		t.Errorf("no debug line for the call; the test would prove nothing:\n%s", logs.String())
	}
	for _, secret := range []string{"planted-secret-1", "planted-secret-2", "planted-secret-3", "planted-secret-4", "planted-secret-5", "planted-secret-6"} {
		if strings.Contains(shown, secret) {
			t.Errorf("status holds %s: %s", secret, shown)
		}
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds %s:\n%s", secret, logs.String())
		}
	}
}
