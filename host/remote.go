package host

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/netguard"
	"github.com/switchboard-mcp/switchboard/internal/proc"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/tasks"
)

// httpClient returns a client that adds the static headers and those the
// headersHelper prints, read afresh at every connect. With ta, the tasks
// adapter reads what passes (a Streamable HTTP connection's).
func (s *server) httpClient(ctx context.Context, def config.Server, ta *tasks.Adapter) (*http.Client, error) {
	headers := http.Header{}
	for k, v := range def.Headers {
		headers.Set(k, v)
	}
	if def.HeadersHelper != "" {
		extra, err := s.runHeadersHelper(ctx, def.HeadersHelper)
		if err != nil {
			return nil, fmt.Errorf("headersHelper: %v", err)
		}
		for k, v := range extra {
			headers.Set(k, v)
		}
	}
	shown := map[string]string{}
	for k := range headers {
		shown[k] = headers.Get(k)
	}
	s.h.secrets.Add(redact.Secrets(nil, shown)...) // helper output too: scrubbed from every message
	s.h.log.Debug("connecting", "server", s.name, "url", shownURL(s.cfg, s.h.secrets), "headers", headers)
	// Every connection, redirect and OAuth fetch of this server
	// goes through the address check of its scope.
	policy := s.netPolicy()
	if err := policy.CheckURL(def.URL); err != nil {
		return nil, err
	}
	base := policy.Transport(nil)
	if id := s.h.opts.GatewayID; id != "" {
		// To the endpoint's host only, as the configured headers (not in
		// the secret set: an ID, no credential).
		headers.Set(GatewayHeader, id)
	}
	rt := http.RoundTripper(&headerTransport{base: base, headers: headers, origin: netguard.OriginOf(def.URL)})
	rt = s.withAuth(def, base, rt) // Options.Authorizer: auth.go
	if ta != nil {
		rt = ta.RoundTripper(rt) // under the progress scan: a task's progress is written into the call's stream
	}
	rt = progressScanTransport{base: rt, progress: s.h.progress, server: s.name}
	rt = netguard.LimitAnswers(rt, def.Type == config.TypeSSE)
	if id := s.h.opts.GatewayID; id != "" {
		rt = selfLoopTransport{base: rt, id: id, seen: &s.selfLoop}
	}
	return &http.Client{Transport: rt, CheckRedirect: policy.CheckRedirect}, nil
}

// netPolicy is the outbound address policy of the server (docs/security.md,
// Outbound URL safety):
// servers the user wrote may reach private addresses; repo-authored ones
// may not unless the user's settings allow it. Metadata and link-local
// addresses are refused for all.
func (s *server) netPolicy() netguard.Policy {
	p := netguard.Policy{
		AllowPrivate: s.cfg.Trust != config.TrustRepo || s.confine.allowPrivate,
		Hint: "project-scope servers may not reach private addresses; to allow it, set " +
			`"allowPrivateNetworkForProjectServers": true in your user settings (~/.switchboard/settings.json)`,
	}
	if s.h.opts.Resolver != nil {
		p.Resolver = s.h.opts.Resolver
	}
	return p
}

// OutboundClient returns an HTTP client for requests made on behalf of
// server name (OAuth discovery and token fetches, say): its connections
// and redirects are held to the server's outbound address policy
// (docs/security.md, Outbound URL safety). It carries none of the server's headers.
func (h *Host) OutboundClient(name string) (*http.Client, error) {
	s, err := h.server(name)
	if err != nil {
		return nil, err
	}
	return netguard.Client(s.netPolicy(), nil), nil
}

type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
	// origin is the endpoint's scheme and host: the configured headers
	// (credentials, often) go only there, not to another host an SSE
	// endpoint event or a redirect names, nor in clear text after a
	// redirect from https to http.
	origin string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && t.origin != "" && netguard.Origin(req.URL) == t.origin {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	return t.base.RoundTrip(req)
}

// helperOutputLimit bounds what a headersHelper may print: headers, not
// a flood.
const helperOutputLimit = 64 << 10

// HelperSandboxOf is the sandbox a remote server's headersHelper runs in,
// or nil when it runs unconfined. A project-scope (repository-written)
// helper is confined as the repository's stdio servers are (docs/security.md,
// Sandbox): it sees the workspace read-only (it prints headers: it has
// nothing to write but its private /tmp), none of the rest of your home,
// and the network its definition's "sandbox" field allows (none by
// default). That field, or the user's per-scope default for project
// servers ({"sandbox": {"project": false}}), may turn it off; "sandbox":
// false is part of the fingerprint and the review says "not sandboxed". A
// helper a user wrote runs unconfined, as the user's servers do.
func HelperSandboxOf(rs *config.ResolvedServer, workspace string, defaults config.SandboxDefaults) *config.SandboxPolicy {
	if rs.Trust != config.TrustRepo || rs.Effective.HeadersHelper == "" {
		return nil
	}
	sb := rs.Written.Sandbox
	if sb == nil {
		sb = defaults[rs.Scope]
	}
	if sb == nil {
		sb = &config.Sandbox{}
	}
	if sb.Off {
		return nil
	}
	p := &config.SandboxPolicy{NetworkAll: sb.Network.All, Allow: slices.Clone(sb.Network.Allow)}
	if workspace != "" {
		p.Read = []string{workspace}
	}
	return p
}

// runHeadersHelper runs the helper command through the platform shell (it
// is a command line) and parses "Key: Value" lines. Values are never
// logged. It runs as the server's processes do: through the supervisor
// (nothing it starts outlives it), with the server's filtered environment,
// and, for a repository's helper, in HelperSandboxOf's sandbox. A helper
// the user wrote for every workspace (user or managed scope) starts in the
// home directory, where no repository's file steers it (an npx or a
// python -m in it); others start in the workspace.
func (s *server) runHeadersHelper(ctx context.Context, command string) (map[string]string, error) {
	ws := s.h.workspace()
	dir := ws
	var sb *proc.Sandbox
	if p := HelperSandboxOf(&s.cfg, ws, s.confine.sandbox); p != nil {
		sb = &proc.Sandbox{Read: p.Read, Network: p.NetworkAll, Allow: p.Allow, AllowPrivate: s.netPolicy().AllowPrivate}
		if dir == "" {
			dir = proc.NeutralDir() // the sandbox's own root: nothing of yours
		}
	} else if s.cfg.Trust == config.TrustUser && (s.cfg.Scope == config.ScopeUser || s.cfg.Scope == config.ScopeManaged) {
		if home, err := os.UserHomeDir(); err == nil {
			dir = home
		}
	}
	shell, args := "/bin/sh", []string{"-c", command}
	if runtime.GOOS == "windows" {
		shell, args = "cmd", []string{"/c", command}
	}
	out, err := runOnce(ctx, proc.Spec{Command: shell, Args: args, Env: s.parentEnv(), Dir: dir,
		Supervise: !s.h.opts.NoSupervisor, Sandbox: sb, StderrLimit: 4 << 10}, nil, helperOutputLimit, headersHelperTimeout, s.h.opts.CloseGrace)
	if err != nil {
		return nil, fmt.Errorf("%q %v", command, err)
	}
	headers := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		k, v, ok := strings.Cut(text, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q printed a line %d that is not \"Key: Value\"", command, line)
		}
		headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return headers, nil
}

// lifetimeTransport connects its inner transport with a context that lives
// as long as the connection (SSE ties its event stream to that context),
// while the caller's context still bounds the handshake.
type lifetimeTransport struct {
	inner mcp.Transport
	life  context.Context
}

func (t lifetimeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	type result struct {
		c   mcp.Connection
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := t.inner.Connect(t.life)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				_ = r.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
