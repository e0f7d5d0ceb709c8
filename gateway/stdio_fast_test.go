package gateway_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/jsonl"
)

// stdioClient is a raw client of a gateway served on a pair of pipes.
type stdioClient struct {
	t   *testing.T
	in  *os.File // the gateway's stdin, written here
	out *bufio.Reader
}

// serveStdioPipes serves g on a pair of pipes, with Gateway.Run (fast)
// or as Server().Run on Transport (the SDK for everything), as the
// stdio gateway does, until the test ends.
func serveStdioPipes(t *testing.T, g *gateway.Gateway, fast bool) *stdioClient {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr := jsonl.New(inR, outW, jsonl.Options{Tolerant: true})
		if fast {
			g.Run(ctx, tr)
		} else {
			g.Server().Run(ctx, g.Transport(tr))
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-done
		outR.Close()
	})
	return &stdioClient{t: t, in: inW, out: bufio.NewReader(outR)}
}

// send writes one line and, if it is a call, returns the answer's line
// (notifications before it are skipped).
func (c *stdioClient) send(line string, call bool) string {
	c.t.Helper()
	if _, err := c.in.WriteString(line + "\n"); err != nil {
		c.t.Fatal(err)
	}
	if !call {
		return ""
	}
	for {
		got, err := c.out.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading the answer to %.80s: %v", line, err)
		}
		if strings.Contains(got, `"id":`) {
			return got
		}
	}
}

// On stdio, a plain call answered by the fast path is the SDK's line, on
// both revisions, and from an older client that declared elicitation;
// what it leaves alone is the SDK's.
func TestStdioFastPathSameBytesAsSDK(t *testing.T) {
	ctx := ctxFor(t, 90*time.Second)
	sb := openSB(t, []config.ResolvedServer{stdio("echo", "echo")}, benchHost)
	g := gateway.New(sb, &gateway.Options{FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
	}
	big := strings.Repeat("0123456789", 20000)
	const triple = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
	for _, kind := range []string{"2025-11-25", "2025-11-25 elicitation", "2026-07-28"} {
		rev, caps, _ := strings.Cut(kind, " ")
		if caps != "" {
			caps = `"` + caps + `":{}`
		}
		fast, sdk := serveStdioPipes(t, g, true), serveStdioPipes(t, g, false)
		meta := ""
		if rev == "2026-07-28" {
			meta = `,"_meta":{` + triple + `}`
		}
		both := func(line string, call bool) (string, string) {
			return fast.send(line, call), sdk.send(line, call)
		}
		if rev == "2025-11-25" {
			both(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{`+caps+`},"clientInfo":{"name":"raw","version":"1"}}}`, true)
			both(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
		} else {
			// The first request of a session on 2026-07-28 goes to the
			// SDK, which learns the revision from it.
			both(call("0", `{"name":"echo__echo","arguments":{"text":"first"}`+meta+`}`), true)
		}
		cases := []struct {
			name, line string
			fast       bool
		}{
			{"text", call("1", `{"name":"echo__echo","arguments":{"text":"hello switchboard"}`+meta+`}`), true},
			{"escapes", call(`"a<b>"`, `{"name":"echo__echo","arguments":{"text":"<b>&amp;</b> \"q\" \u2028 é 😀"}`+meta+`}`), true},
			{"error result", call("2", `{"name":"echo__side_effect","arguments":{"note":"n"}`+meta+`}`), true},
			{"denied by a rule", call("3", `{"name":"echo__destructive","arguments":{}`+meta+`}`), true},
			{"cut to the output limit", call("4", `{"name":"echo__echo","arguments":{"text":"`+big+`"}`+meta+`}`), true},
			{"unknown tool", call("5", `{"name":"nope__nope","arguments":{}`+meta+`}`), false},
			{"progress token", call("6", `{"name":"echo__echo","arguments":{"text":"p"},"_meta":{"progressToken":"p"}}`), false},
		}
		if rev == "2025-11-25" {
			cases[6].fast = true // a progress token is forwarded on the one stream
			cases = append(cases, struct {
				name, line string
				fast       bool
			}{"no arguments", call("7", `{"name":"echo__echo"}`), true})
		} else {
			cases[6].line = call("6", `{"name":"echo__echo","arguments":{"text":"p"},"_meta":{`+triple+`,"progressToken":"p"}}`)
			cases[6].fast = true
		}
		for _, c := range cases {
			sameAnswer(t, g, kind+", "+c.name, c.fast, func(f bool) rawAnswer {
				if f {
					return rawAnswer{body: fast.send(c.line, true)}
				}
				return rawAnswer{body: sdk.send(c.line, true)}
			})
		}
	}
}
