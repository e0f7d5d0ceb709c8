package host_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// storeSource is a real secret store (the encrypted file: no keyring
// here) as the host's SecretSource, counting lookups.
type storeSource struct {
	store *secretstore.Store
	mu    sync.Mutex
	asked map[string]int
}

func newStoreSource(t *testing.T) *storeSource {
	return &storeSource{store: secretstore.Open(&secretstore.Options{Dir: t.TempDir(), Kind: secretstore.KindFile}), asked: map[string]int{}}
}

func (s *storeSource) Secret(ctx context.Context, server, name string) (string, error) {
	s.mu.Lock()
	s.asked[server+"/"+name]++
	s.mu.Unlock()
	return s.store.Get(ctx, name)
}

func (s *storeSource) set(t *testing.T, name, value string) {
	t.Helper()
	if _, err := s.store.Set(context.Background(), name, value); err != nil {
		t.Fatal(err)
	}
}

func (s *storeSource) lookups(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[key]
}

// withSecrets is resolved() of a definition that refers to secrets, as
// config.Load records them.
func withSecrets(rs config.ResolvedServer) config.ResolvedServer {
	rs.Secrets = config.SecretNames(rs.Written)
	return rs
}

// A server's ${secret:NAME} references are resolved when it starts: in
// env (stdio) and headers (HTTP); each value is scrubbed from logs and
// status, and never shown as the command line; a rotated value is used at
// the next start.
func TestSecretsResolvedAtStart(t *testing.T) {
	src := newStoreSource(t)
	const token, rotated = "first-value-xyzzy-0042", "second-value-xyzzy-0043"
	const webToken = "web-value-xyzzy-0044"
	src.set(t, "API_TOKEN", token)
	src.set(t, "WEB_TOKEN", webToken)
	srv := testhttp.Start(t, "echo", testhttp.Options{})

	env := stdio("env", "echo")
	env.Written.Env = map[string]string{"TOKEN": "${secret:API_TOKEN}", "PLAIN": "x"}
	env.Effective.Env = env.Written.Env
	web := resolved("web", config.Server{Type: config.TypeHTTP, URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer ${secret:WEB_TOKEN}"}})
	var logs bytes.Buffer
	h := newHost(t, cfgOf(withSecrets(env), withSecrets(web)), &host.Options{
		Secrets: src, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	// The servers answer hex-encoded: the host keeps the values it gave
	// them out of results (docs/security.md, What the model reads).
	if got := unhex(t, textOf(mustCall(t, h, "mcp__env__env", map[string]any{"names": []string{"TOKEN", "PLAIN"}, "hex": true}))); !strings.Contains(got, "TOKEN="+token) || !strings.Contains(got, "PLAIN=x") {
		t.Errorf("env tool: %q", got)
	}
	if got := headersSeen(t, h, "web"); !strings.Contains(got, "Authorization: Bearer "+webToken) {
		t.Errorf("headers tool: %q", got)
	}
	h.RedactLogger(slog.New(slog.NewTextHandler(&logs, nil))).Info("a line quoting " + token + " and " + webToken)
	for _, st := range h.Status() {
		if strings.Contains(st.Command, token) || strings.Contains(st.Reason, token) {
			t.Errorf("status of %s shows the value: %+v", st.Name, st)
		}
	}
	if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), webToken) {
		t.Errorf("the log holds a value:\n%s", logs.String())
	}

	src.set(t, "API_TOKEN", rotated)
	if err := h.Retry("env"); err != nil {
		t.Fatal(err)
	}
	waitState(t, h, "env", host.StateConnected, 60*time.Second)
	if got := unhex(t, textOf(mustCall(t, h, "mcp__env__env", map[string]any{"names": []string{"TOKEN"}, "hex": true}))); !strings.Contains(got, "TOKEN="+rotated) {
		t.Errorf("after rotation the env tool says %q", got)
	}
}

// A missing secret, a value a field cannot carry, and a host without a
// secret store each keep that server from starting, in error with a
// reason naming the secret; the other servers start.
func TestSecretProblemsKeepOnlyThatServerDown(t *testing.T) {
	src := newStoreSource(t)
	src.set(t, "MULTI", "line one\nline two")
	ok := stdio("ok", "echo")
	missing := stdio("missing", "echo")
	missing.Written.Env = map[string]string{"TOKEN": "${secret:NOPE}"}
	missing.Effective.Env = missing.Written.Env
	header := resolved("header", config.Server{Type: config.TypeHTTP, URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Key": "${secret:MULTI}"}})
	h := newHost(t, cfgOf(ok, withSecrets(missing), withSecrets(header)), &host.Options{Secrets: src})
	waitState(t, h, "ok", host.StateConnected, 60*time.Second)
	for name, want := range map[string]string{
		"missing": "secret NOPE (env TOKEN): not set in ",
		"header":  "secret MULTI (headers X-Key): its value holds a line break, which a header value cannot carry",
	} {
		st := waitState(t, h, name, host.StateError, 60*time.Second)
		if !strings.Contains(st.Reason, want) {
			t.Errorf("%s: reason %q, want %q in it", name, st.Reason, want)
		}
		var se *config.SecretError
		if !errors.As(st.Err, &se) {
			t.Errorf("%s: the cause is not a *config.SecretError: %v", name, st.Err)
		}
	}
	var nf *secretstore.NotFoundError
	if st := statusOf(h, "missing"); !errors.As(st.Err, &nf) || nf.Name != "NOPE" {
		t.Errorf("missing: the store's NotFoundError is not in the cause: %v", st.Err)
	}

	h2 := newHost(t, cfgOf(withSecrets(missing)), nil)
	if st := waitState(t, h2, "missing", host.StateError, 60*time.Second); !strings.Contains(st.Reason, "it names secrets (NOPE) and no secret store was given") {
		t.Errorf("no store: reason %q", st.Reason)
	}
}

// A server held by launch trust never causes a lookup.
func TestSecretsNotLookedUpForHeldServer(t *testing.T) {
	src := newStoreSource(t)
	src.set(t, "API_TOKEN", "tok_0123456789")
	repo := stdio("repo", "echo")
	repo.Written.Env = map[string]string{"TOKEN": "${secret:API_TOKEN}"}
	repo.Effective.Env = repo.Written.Env
	repo.Scope, repo.Trust = config.ScopeProject, config.TrustRepo
	h := newHost(t, cfgOf(withSecrets(repo)), &host.Options{Secrets: src}) // DefaultGate holds it
	waitState(t, h, "repo", host.StateNeedsApproval, 60*time.Second)
	if n := src.lookups("repo/API_TOKEN"); n != 0 {
		t.Errorf("the held server's secret was looked up %d times", n)
	}
}

// A secret removed while its server runs: the running process keeps what
// it got; when it dies, the restart fails on the secret, naming it, and
// the other server is untouched.
func TestSecretDeletedWhileRunning(t *testing.T) {
	linuxOnly(t)
	src := newStoreSource(t)
	src.set(t, "API_TOKEN", "tok_0123456789abcd")
	victim := stdio("victim", "echo")
	victim.Written.Env = map[string]string{"TOKEN": "${secret:API_TOKEN}"}
	victim.Effective.Env = victim.Written.Env
	other := stdio("other", "echo")
	h := newHost(t, cfgOf(withSecrets(victim), other), &host.Options{Secrets: src})
	pid := pidOf(t, h, "victim")
	if _, err := src.store.Delete(context.Background(), "API_TOKEN"); err != nil {
		t.Fatal(err)
	}
	killPid(t, pid)
	waitFor(t, 60*time.Second, "victim in error", func() bool {
		st := statusOf(h, "victim")
		return st.State == host.StateError
	})
	if st := statusOf(h, "victim"); !strings.Contains(st.Reason, "secret API_TOKEN (env TOKEN): not set in ") {
		t.Errorf("victim: reason %q", st.Reason)
	}
	mustCall(t, h, "mcp__other__echo", map[string]any{"text": "still here"})
}
