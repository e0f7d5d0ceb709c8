package testserver

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The netprobe server reaches the network as a sandboxed server would
// (issue 20): its tool "connect" opens addr directly ("direct") or
// through the HTTP proxy $HTTPS_PROXY names ("proxy", a CONNECT, as a
// proxy-aware client does), sends "HELLO\n" and answers with the first
// line that comes back, or, as an error result, why it got none. Every
// attempt is bounded (4 s), so a hang shows as an error, not a stuck call.
// Way "unix" connects to the Unix socket at path addr (a local channel of
// the user's: a D-Bus bus, an agent), sends send (nothing when empty) and
// answers "connected", with what came back within a second, quoted.
func init() {
	register("netprobe", serverDef{
		doc:       `tool connect {addr, way: "direct"|"proxy"|"unix", send}: the first line addr answers to "HELLO\n", directly or through $HTTPS_PROXY (CONNECT); for "unix", "connected" and what the socket at path addr answered to send; or an error result saying why not`,
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			p.build = func() *mcp.Server {
				s := mcp.NewServer(implementation("netprobe"), nil)
				mcp.AddTool(s, &mcp.Tool{Name: "connect", Description: "Reach addr directly or through the proxy; answer with its first line."},
					func(ctx context.Context, _ *mcp.CallToolRequest, in netprobeIn) (*mcp.CallToolResult, any, error) {
						line, err := netprobeConnect(ctx, in.Addr, in.Way, in.Send)
						if err != nil {
							return errorResult(err.Error()), nil, nil
						}
						return text(line), nil, nil
					})
				return s
			}
			return p.buildAndServe
		},
	})
}

type netprobeIn struct {
	Addr string `json:"addr" jsonschema:"host:port to reach"`
	Way  string `json:"way,omitempty" jsonschema:"direct (default), proxy, or unix (addr is a socket's path)"`
	Send string `json:"send,omitempty" jsonschema:"for unix: what to send once connected"`
}

func netprobeConnect(ctx context.Context, addr, way, send string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	var d net.Dialer
	switch way {
	case "", "direct":
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(4 * time.Second))
		io.WriteString(c, "HELLO\n")
		return firstLine(bufio.NewReader(c))
	case "proxy":
		u, err := url.Parse(os.Getenv("HTTPS_PROXY"))
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("no proxy: HTTPS_PROXY=%q", os.Getenv("HTTPS_PROXY"))
		}
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(4 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nHELLO\n", addr, addr)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			return "", fmt.Errorf("proxy: %s: %s", resp.Status, strings.TrimSpace(string(b)))
		}
		return firstLine(br)
	case "unix":
		c, err := d.DialContext(ctx, "unix", addr)
		if err != nil {
			return "", err
		}
		defer c.Close()
		if send != "" {
			c.SetWriteDeadline(time.Now().Add(4 * time.Second))
			io.WriteString(c, send)
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		b := make([]byte, 256)
		n, _ := io.ReadAtLeast(c, b, 1)
		return fmt.Sprintf("connected; it answered %q", b[:n]), nil
	}
	return "", fmt.Errorf("way %q: want direct, proxy or unix", way)
}

func firstLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the answer: %w", err)
	}
	return strings.TrimSpace(line), nil
}
