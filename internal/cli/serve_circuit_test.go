//go:build unix

package cli

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// A server that stalls (SIGSTOP) long enough to open its circuit keeps its
// tools in the gateway's tools/list; a call fails fast with an isError
// result saying the circuit is open, and once the server runs again
// (SIGCONT) calls work again as soon as its pings are answered, not after the 5-minute cooldown
// (issue 16, point 3: 4,175 failed calls after a 25 s stall).
func TestGatewayCircuitOpenKeepsToolsListed(t *testing.T) {
	w := newGatewayWorld(t)
	cmd, args := testserver.Command("echo")
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"stall": map[string]any{"command": cmd, "args": args, "timeout": 300},
	}})
	w.permissions(t, []string{"mcp__stall"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, stderr := stdioGateway(t, ctx, w)
	waitServed(t, ctx, cs, stderr, "start", "stall")
	out, isErr := callText(t, ctx, cs, "stall__pid", nil)
	pid, err := strconv.Atoi(pidRE.FindString(out))
	if isErr || err != nil {
		t.Fatalf("pid: %q", out)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	t.Cleanup(func() {
		if stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	for i := range 3 {
		if out, isErr := callText(t, ctx, cs, "stall__echo", map[string]any{"text": "x"}); !isErr || !strings.Contains(out, "timed out") {
			t.Fatalf("call %d to the stopped server: isError %v, %q; want a timeout", i, isErr, out)
		}
	}
	// The circuit is open: calls fail fast with a clear isError result,
	// and the tools stay listed however often the client asks.
	var refusal string
	waitFor(t, 10*time.Second, "a call refused by the open circuit", func() bool {
		out, isErr := callText(t, ctx, cs, "stall__echo", map[string]any{"text": "x"})
		refusal = out
		if !(isErr && strings.Contains(out, "circuit open")) {
			t.Logf("not refused yet: %v %q", isErr, out)
			return false
		}
		return true
	})
	// Refused without reaching the stopped server (which would time out).
	out, isErr = callText(t, ctx, cs, "stall__echo", map[string]any{"text": "x"})
	if !isErr || !strings.Contains(out, "circuit open after 3 consecutive failures") || !strings.Contains(out, "probes it") {
		t.Errorf("refusal %q (isError %v); want it to say the circuit is open and when it probes", out, isErr)
	}
	if strings.Contains(refusal, "unknown tool") {
		t.Errorf("refusal %q", refusal)
	}
	for range 5 {
		if !listNames(t, ctx, cs)["stall__echo"] {
			t.Fatalf("stall__echo left tools/list while its circuit is open\n%s", stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	// Back long before the 5-minute cooldown: the pings see it answer.
	waitFor(t, 20*time.Second, "calls work again after SIGCONT", func() bool {
		out, isErr := callText(t, ctx, cs, "stall__echo", map[string]any{"text": "back"})
		if isErr || !strings.Contains(out, "back") {
			t.Logf("not back yet: %v %q", isErr, out)
			return false
		}
		return true
	})
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
