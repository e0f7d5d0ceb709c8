package host

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/trust"
)

// The cost of what the model reads (docs/security.md; figures in
// docs/benchmarks.md, "What the model reads"):
//
//	go test ./host -run '^$' -bench 'PinDecision|PinCheckPerCall|GuardResult' -benchmem -count 5
//
// per listing: cleaning and digesting every tool and comparing the digests
// with the pins (a fresh tools/list: after list_changed, a reconnect, the
// TTL); per Tools() or Call while the list is cached: the kept decision;
// per call: the held check and the guard of the result (clean, known
// secrets), next to BenchmarkCallOverhead's relayed echo call.

// benchTools are the 36 tools the npm reference servers list, cycled to n
// under distinct names.
func benchTools(b *testing.B, n int) []*mcp.Tool {
	b.Helper()
	data, err := os.ReadFile("../toolsurface/shape/testdata/providers/npm_tools.json")
	if err != nil {
		b.Fatal(err)
	}
	var corpus []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		b.Fatal(err)
	}
	out := make([]*mcp.Tool, n)
	for i := range out {
		c := corpus[i%len(corpus)]
		out[i] = &mcp.Tool{Name: c.Name + strings.Repeat("_", i/len(corpus)), Description: c.Description, InputSchema: c.InputSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}
	}
	return out
}

// benchPinHost is a host with a pin store in a temporary home and a server
// whose tools (n of them) are pinned already: the steady state.
func benchPinHost(b *testing.B, n int) (*Host, *server, []*mcp.Tool) {
	b.Helper()
	rs := config.ResolvedServer{Name: "npm", Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Disabled}
	h := New(&config.Resolved{Servers: []config.ResolvedServer{rs}}, &Options{Pins: trust.OpenPins(b.TempDir())})
	b.Cleanup(func() { h.Close() })
	s, err := h.server("npm")
	if err != nil {
		b.Fatal(err)
	}
	tools := benchTools(b, n)
	h.pinTools(s, tools) // first sight: pins them
	return h, s, tools
}

// BenchmarkPinDecision is the work of one fresh tools/list of a server:
// every tool cleaned and digested, the digests compared with the pins.
// /cached is a listing while the list is cached (every Tools and every
// Call that resolves through the list): the kept decision.
func BenchmarkPinDecision(b *testing.B) {
	for _, n := range []int{21, 100} {
		b.Run(itoa(n)+"-tools", func(b *testing.B) {
			h, s, tools := benchPinHost(b, n)
			b.ReportAllocs()
			for b.Loop() {
				fresh := append([]*mcp.Tool(nil), tools...) // a new list, as a fetch makes
				if out := h.pinTools(s, fresh); len(out) != n {
					b.Fatalf("served %d of %d", len(out), n)
				}
			}
		})
	}
	b.Run("cached", func(b *testing.B) {
		h, s, tools := benchPinHost(b, 100)
		b.ReportAllocs()
		for b.Loop() {
			h.pinTools(s, tools)
		}
	})
}

// BenchmarkPinCheckPerCall is the held check of a call (checkHeld) on a
// server whose list is cached.
func BenchmarkPinCheckPerCall(b *testing.B) {
	h, s, tools := benchPinHost(b, 21)
	s.tools.put(tools, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.checkHeld(b.Context(), s, "echo"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGuardResult is what a call's result goes through on its way
// to the model: cleaned of deceptive text, the known secret values (here
// 20 of them) replaced; /redact adds the credential shapes of "secrets":
// "redact". The result is the echo server's answer to the relayed echo
// call of BenchmarkCallOverhead, and a 4 KiB page of text.
func BenchmarkGuardResult(b *testing.B) {
	h := New(nil, nil)
	b.Cleanup(func() { h.Close() })
	for i := range 20 {
		h.secrets.Add("tok_live_" + strings.Repeat(itoa(i), 12))
	}
	page := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 72)
	for _, bc := range []struct {
		name string
		text string
		mode config.SecretsMode
	}{
		{"echo", "hello switchboard", ""},
		{"page", page, ""},
		{"page/redact", page, config.SecretsRedact},
	} {
		b.Run(bc.name, func(b *testing.B) {
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bc.text}}}
			b.ReportAllocs()
			for b.Loop() {
				h.guardResult("echo", "echo", bc.mode, res, nil)
			}
		})
	}
	b.Run("scan-only/page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			toolsurface.CleanText(page)
		}
	})
	b.Run("tokens-only/page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			redact.Tokens(page)
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// BenchmarkToolsListFresh is a tools/list of the echo server (21 tools)
// fetched afresh — the round trip, the SDK's decoding, the routing and,
// with /pinned, the pin decision — for scale next to BenchmarkPinDecision.
func BenchmarkToolsListFresh(b *testing.B) {
	for _, pinned := range []bool{false, true} {
		name := "unpinned"
		if pinned {
			name = "pinned"
		}
		b.Run(name, func(b *testing.B) {
			opts := &Options{LookupEnv: func(string) (string, bool) { return "", false }, CloseGrace: 500 * time.Millisecond}
			if pinned {
				opts.Pins = trust.OpenPins(b.TempDir())
			}
			cmd, args := testserver.Command("echo")
			def := config.Server{Type: config.TypeStdio, Command: cmd, Args: args}
			h := New(&config.Resolved{Servers: []config.ResolvedServer{{Name: "echo", Written: def, Effective: def,
				Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available}}}, opts)
			b.Cleanup(func() { h.Close() })
			ctx := b.Context()
			if list, err := h.Tools(ctx); err != nil || len(list.Tools) != 21 {
				b.Fatalf("warm-up: %v", err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Refresh("echo")
				if list, _ := h.Tools(ctx); len(list.Tools) != 21 {
					b.Fatal("tools missing")
				}
			}
		})
	}
}
