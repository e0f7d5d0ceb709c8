package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
)

// headersHelperTimeout bounds a headersHelper command.
const headersHelperTimeout = 10 * time.Second

// dial starts (for stdio) and initializes one session, bounded by timeout.
func (s *server) dial(ctx context.Context, timeout time.Duration, protocol string) (*conn, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	def := s.cfg.Effective
	c := &conn{grace: s.h.opts.CloseGrace}
	var transport mcp.Transport
	switch def.Type {
	case config.TypeStdio, "":
		p, err := s.spawn(def)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", errSpawn, def.Command, err)
		}
		c.proc = p
		c.recordsWrites = true
		transport = probeTransport{&mcp.IOTransport{Reader: p.Stdout(), Writer: p.Stdin()}}
	case config.TypeSSE, config.TypeHTTP:
		hc, err := s.httpClient(cctx, def)
		if err != nil {
			return nil, err
		}
		if def.Type == config.TypeSSE {
			transport = &mcp.SSEClientTransport{Endpoint: def.URL, HTTPClient: hc}
		} else {
			transport = &mcp.StreamableClientTransport{Endpoint: def.URL, HTTPClient: hc, MaxRetries: 2}
		}
		// The SSE stream lives as long as the connection, not the handshake.
		life, endLife := context.WithCancel(ctx)
		c.endLife = endLife
		transport = lifetimeTransport{inner: transport, life: life}
	default:
		return nil, fmt.Errorf("unknown transport %q", def.Type)
	}

	client := s.newClient(c)
	// A process that dies during the handshake must fail the connect at
	// once, not at the startup timeout.
	if c.proc != nil {
		go func() {
			select {
			case <-c.proc.Done():
				time.Sleep(50 * time.Millisecond) // let a last answer be read
				cancel()
			case <-cctx.Done():
			}
		}()
	}
	session, err := client.Connect(cctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		timedOut := cctx.Err() != nil && ctx.Err() == nil
		died := false
		if c.proc != nil {
			// The handshake may fail on the closed pipe a moment before the
			// exit is reaped; wait briefly so the report can say why.
			wait := 500 * time.Millisecond
			if timedOut {
				wait = 0
			}
			select {
			case <-c.proc.Done():
				died = true
			case <-time.After(wait):
			}
			_ = c.proc.Kill()
			<-c.proc.Done()
			s.mu.Lock()
			s.lastConn = c // keep its stderr for status
			s.mu.Unlock()
		}
		switch {
		case died:
			c.proc.WaitStderr(stderrDrain)
			msg := processExit(c.proc).Error() + " during initialize"
			if tail := c.proc.StderrTail(1); len(tail) > 0 {
				msg += ": " + tail[0]
			}
			return nil, errors.New(msg)
		case timedOut:
			if c.endLife != nil {
				c.endLife()
			}
			return nil, fmt.Errorf("%w: no answer to initialize within %s", errStartupTimeout, timeout)
		}
		if c.endLife != nil {
			c.endLife()
		}
		return nil, fmt.Errorf("initialize failed: %v", err)
	}
	c.session = session
	if res := session.InitializeResult(); res != nil {
		c.protocol = res.ProtocolVersion
		if res.ServerInfo != nil {
			c.serverInfo = strings.TrimSpace(res.ServerInfo.Name + " " + res.ServerInfo.Version)
		}
	}
	c.watch()
	// Servers send log messages only once a level is set (SPEC §4: logging
	// is surfaced): per session before 2026-07-28, per request after.
	c.logging = c.serves(func(caps *mcp.ServerCapabilities) bool { return caps.Logging != nil })
	if c.logging && c.protocol < "2026-07-28" {
		_ = session.SetLoggingLevel(cctx, &mcp.SetLoggingLevelParams{Level: s.h.opts.LogLevel})
	}
	return c, nil
}

// spawn starts a stdio server: no shell, its own process group, the parent
// environment plus the definition's env, in its cwd.
func (s *server) spawn(def config.Server) (*proc.Process, error) {
	env := mergeEnv(s.h.opts.Environ(), def.Env)
	dir := def.Cwd
	if dir != "" && !filepath.IsAbs(dir) && s.h.cfg != nil && s.h.cfg.Workspace != "" {
		dir = filepath.Join(s.h.cfg.Workspace, dir)
	}
	cmd, args := proc.ResolveCommand(def.Command, def.Args)
	return proc.Start(proc.Spec{
		Command:   cmd,
		Args:      args,
		Env:       env,
		Dir:       dir,
		Supervise: !s.h.opts.NoSupervisor,
	})
}

// mergeEnv overlays extra on base (KEY=VALUE lists); extra wins.
func mergeEnv(base []string, extra map[string]string) []string {
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := extra[k]; over {
			continue
		}
		out = append(out, kv)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// httpClient returns a client that adds the static headers and those the
// headersHelper prints, read afresh at every connect.
func (s *server) httpClient(ctx context.Context, def config.Server) (*http.Client, error) {
	headers := http.Header{}
	for k, v := range def.Headers {
		headers.Set(k, v)
	}
	if def.HeadersHelper != "" {
		extra, err := runHeadersHelper(ctx, def.HeadersHelper, s.h.opts.Environ(), s.h.cfg)
		if err != nil {
			return nil, fmt.Errorf("headersHelper: %v", err)
		}
		for k, v := range extra {
			headers.Set(k, v)
		}
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: headers}}, nil
}

type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	return t.base.RoundTrip(req)
}

// runHeadersHelper runs the helper command through the platform shell (it
// is a command line the user wrote) and parses "Key: Value" lines. Values
// are never logged.
func runHeadersHelper(ctx context.Context, command string, env []string, cfg *config.Resolved) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, headersHelperTimeout)
	defer cancel()
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/c", command)
	} else {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", command)
	}
	cmd.Env = env
	if cfg != nil && cfg.Workspace != "" {
		cmd.Dir = cfg.Workspace
	}
	cmd.Stderr = nil
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%q did not finish within %s", command, headersHelperTimeout)
		}
		return nil, fmt.Errorf("%q failed: %v", command, err)
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

// commandLine renders what a server runs, literally: the command and args
// quoted as a shell would need them, or the URL.
func commandLine(def config.Server) string {
	if def.Type == config.TypeSSE || def.Type == config.TypeHTTP {
		return def.URL
	}
	if def.Command == "" {
		return "" // nothing to run (a missing or invalid server)
	}
	parts := []string{shellQuote(def.Command)}
	for _, a := range def.Args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '=' || r == '@' || r == ',' || r == '+' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
