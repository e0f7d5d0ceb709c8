package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/jsonl"
	"github.com/switchboard-mcp/switchboard/policy"
)

// A tool that runs as a task upstream (issue 35) is one call through the
// gateway: a plain client gets its result, the audit log one line with
// the call's final status, and a client that goes away mid-task has the
// task cancelled upstream (tasks/cancel).
func TestTaskToolThroughGateway(t *testing.T) {
	dir := t.TempDir()
	log, path := filepath.Join(dir, "tasks.log"), filepath.Join(dir, "audit.jsonl")
	audit, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	p := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, []string{"mcp__t"}, nil, nil)...)
	f := startWith(t, fixtureOpts{permit: gateway.NewPermit(p, nil, nil)}, &gateway.Options{Audit: audit}, stdio("t", "tasks", "-log", log))

	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "t__work", Arguments: map[string]any{"text": "via the gateway"}})
	if res.IsError || !strings.Contains(got, "worked: via the gateway") {
		t.Fatalf("t__work: %q", got)
	}
	got, res = callText(t, f.session, &mcp.CallToolParams{Name: "t__fail", Arguments: map[string]any{}})
	if !res.IsError || !strings.Contains(got, "the tool broke") {
		t.Fatalf("t__fail: %q (isError %v)", got, res.IsError)
	}
	waitRelayIdle(t, f.g)
	lines := readAudit(t, path)
	if len(lines) != 2 {
		t.Fatalf("%d audit lines for two calls: %+v", len(lines), lines)
	}
	if e := lines[0]; e.Tool != "mcp__t__work" || e.Decision != "allow" || e.IsError || e.Error != "" || e.ResultBytes == 0 {
		t.Errorf("work's audit line: %+v", e)
	}
	if e := lines[1]; e.Tool != "mcp__t__fail" || e.Decision != "allow" || !e.IsError || e.Error == "" {
		t.Errorf("fail's audit line: %+v, want the task's failure", e)
	}

	// A second client starts a task that never ends, and goes away (its
	// pipe ends close, as when its process dies).
	ctx := ctxFor(t, 30*time.Second)
	sr, sw, cr, cw := clientPipes(t)
	ss, err := f.g.Server().Connect(ctx, &jsonl.Transport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "going", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
		Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "t__never", Arguments: map[string]any{}})
	waitLog(t, log, "polled never") // the gateway follows the task
	cw.Close()
	cr.Close()
	waitLog(t, log, "cancel ")
	waitRelayIdle(t, f.g)
}

func waitLog(t *testing.T, path, s string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's log never held %q:\n%s", s, b)
		}
	}
}
