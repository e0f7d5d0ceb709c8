package gateway_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
)

// A tool name the gateway does not serve is the caller's to choose, as
// long as a request (4 MiB): the call's audit line, the lines the gateway
// keeps for its console, and its trace span carry it cut, so that a
// caller cannot fill the log or the memory with a few calls.
func TestLongUnknownToolNameIsCut(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	env := map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.URL + "/v1/traces"}
	tr, err := gateway.TracingFromEnv(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || tr == nil {
		t.Fatalf("TracingFromEnv: %v %v", tr, err)
	}
	sb := openSB(t, []config.ResolvedServer{stdio("alpha", "echo")}, nil)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	g := gateway.New(sb, &gateway.Options{Stateless: true, Audit: audit, Tracing: tr})
	t.Cleanup(func() { g.Close() })
	ctx := ctxFor(t, 30*time.Second)
	sb.Host().WaitReady(ctx)
	if err := g.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(nil))
	t.Cleanup(srv.Close)

	code, sid := postMCP(t, ctx, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"long","version":"1"}}}`, nil)
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %q", code, sid)
	}
	name := "alpha__" + strings.Repeat("x", 1<<20)
	postMCP(t, ctx, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`,
		map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})

	line, _ := os.ReadFile(path)
	if len(line) == 0 || len(line) > 8<<10 || !strings.Contains(string(line), `"tool":"alpha__xxx`) {
		t.Errorf("the audit line of a call of a 1 MiB unknown name is %d bytes, want it there and under 8 KiB:\n%.400s", len(line), line)
	}
	recent := audit.Recent()
	if len(recent) != 1 || len(recent[0].Tool) > 300 || len(recent[0].Error) > 1100 {
		t.Errorf("the kept line: %d lines, tool %d bytes, error %d bytes", len(recent), len(recent[0].Tool), len(recent[0].Error))
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	found := false
	for _, sp := range recv.spans {
		if !strings.HasPrefix(sp.Name, "tools/call alpha__x") {
			continue
		}
		found = true
		if len(sp.Name) > 300 || len(stringAttrs(sp.Attributes)["gen_ai.tool.name"]) > 300 {
			t.Errorf("the call's span: name %d bytes, gen_ai.tool.name %d bytes", len(sp.Name), len(stringAttrs(sp.Attributes)["gen_ai.tool.name"]))
		}
	}
	if !found {
		t.Errorf("no span of the call among %d", len(recv.spans))
	}
}
