package host

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// httpClient returns a client that adds the static headers and those the
// headersHelper prints, read afresh at every connect.
func (s *server) httpClient(ctx context.Context, def config.Server) (*http.Client, error) {
	headers := http.Header{}
	for k, v := range def.Headers {
		headers.Set(k, v)
	}
	if def.HeadersHelper != "" {
		extra, err := runHeadersHelper(ctx, def.HeadersHelper, s.h.opts.Environ(), s.h.workspace())
		if err != nil {
			return nil, fmt.Errorf("headersHelper: %v", err)
		}
		for k, v := range extra {
			headers.Set(k, v)
		}
	}
	base := http.DefaultTransport
	rt := http.RoundTripper(&headerTransport{base: base, headers: headers})
	return &http.Client{Transport: s.withOAuth(def, base, rt)}, nil // SPEC §4 OAuth: oauth.go
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
func runHeadersHelper(ctx context.Context, command string, env []string, workspace string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, headersHelperTimeout)
	defer cancel()
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/c", command)
	} else {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", command)
	}
	cmd.Env = env
	if workspace != "" {
		cmd.Dir = workspace
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
