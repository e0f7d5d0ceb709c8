package gateway_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// An argument's name is the caller's text as much as its value: a secret
// the model puts in a key (the server's own token, a credential of a
// known form) is redacted in the audit line and the debug log as it is
// in a value, and a key as long as a request is cut in the audit line.
func TestAuditAndDebugLogRedactArgumentNames(t *testing.T) {
	const (
		ownSecret = "own-env-secret-v4lue-99"
		ghp       = "ghp_Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4"
	)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	var debug strings.Builder
	var debugMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&debugMu, &debug}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := stdio("alpha", "echo")
	srv.Effective.Env = map[string]string{"API_TOKEN": ownSecret}
	srv.Written.Env = srv.Effective.Env
	f := startWith(t, fixtureOpts{logger: logger}, &gateway.Options{Audit: audit}, srv)
	long := strings.Repeat("k", 1<<20)
	callText(t, f.session, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{
		"text": "hi", "note " + ownSecret: 1, ghp: 2, long: 3,
	}})
	waitRelayIdle(t, f.g)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"text":"hi"`) {
		t.Fatalf("the audit line does not show the call's arguments; the check below would prove little:\n%.2000s", raw)
	}
	debugMu.Lock()
	log := debug.String()
	debugMu.Unlock()
	if !strings.Contains(log, "calling tool") {
		t.Fatalf("the debug log does not show the call; the check below would prove little:\n%.2000s", log)
	}
	for _, s := range []string{ownSecret, ghp} {
		if strings.Contains(string(raw), s) {
			t.Errorf("the audit log holds %s in an argument's name:\n%.2000s", s, raw)
		}
		if strings.Contains(log, s) {
			t.Errorf("the debug log holds %s in an argument's name", s)
		}
	}
	if len(raw) > 8<<10 {
		t.Errorf("the audit line of a call with a 1 MiB argument name is %d bytes, want it cut", len(raw))
	}
	if lines := readAudit(t, path); len(lines) != 1 {
		t.Errorf("%d audit lines, want 1", len(lines))
	}
}

// Each string of an audit line's arguments is cut, and so is their
// number: a call with 50,000 short arguments (a request may be 4 MiB) is
// a line of a few hundred bytes that says how much it left out, not one
// of megabytes, and the line kept for the console holds none of them.
func TestAuditLineLeavesOutArgumentsPastItsBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	f := startWith(t, fixtureOpts{}, &gateway.Options{Audit: audit}, stdio("alpha", "echo"))
	args := map[string]any{"text": "hi"}
	for i := range 50_000 {
		args[fmt.Sprintf("a%d", i)] = i
	}
	callText(t, f.session, &mcp.CallToolParams{Name: "alpha__echo", Arguments: args})
	waitRelayIdle(t, f.g)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > gateway.AuditArgsMax+4<<10 {
		t.Fatalf("the audit line of a call with 50,000 arguments is %d bytes, want at most %d", len(raw), gateway.AuditArgsMax+4<<10)
	}
	lines := readAudit(t, path)
	if len(lines) != 1 || lines[0].ArgsHMAC == "" || lines[0].Args != nil || lines[0].ArgsCut <= gateway.AuditArgsMax {
		t.Fatalf("audit lines: %.1000v", lines)
	}
	if r := audit.Recent(); len(r) != 1 || r[0].Args != nil {
		t.Fatalf("the line kept for the console holds %d arguments", len(r[0].Args))
	}
}
