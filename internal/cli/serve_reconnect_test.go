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

// Servers killed under a gateway that take longer than the gateway's wait
// (5 s) to come back keep their tools listed the whole time: a call waits
// for its server within its timeout, or gets a readable isError result
// saying the server is reconnecting, never "unknown tool" (issue 29, point
// 6: a restart over 5 s withdrew the tools and calls got -32602).
func TestGatewayReconnectKeepsToolsListed(t *testing.T) {
	w := newGatewayWorld(t)
	dir := t.TempDir()
	servers := map[string]any{}
	// Both start at once the first time and take 8 s every time after.
	for name, timeout := range map[string]int{"patient": 60_000, "hasty": 1_500} {
		cmd, args := testserver.Command("slow-start", "-delay", "8s", "-state", filepath.Join(dir, name), "-fast", "1")
		servers[name] = map[string]any{"command": cmd, "args": args, "timeout": timeout}
	}
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": servers})
	w.permissions(t, []string{"mcp__patient", "mcp__hasty"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, stderr := stdioGateway(t, ctx, w)
	waitServed(t, ctx, cs, stderr, "start", "hasty", "patient")
	for _, name := range []string{"patient", "hasty"} {
		out, isErr := callText(t, ctx, cs, name+"__pid", nil)
		pid, err := strconv.Atoi(pidRE.FindString(out))
		if isErr || err != nil {
			t.Fatalf("%s's pid: %q", name, out)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	killed := time.Now()

	// A call whose timeout (1.5 s) ends before its server is back is told
	// so, in words.
	out, isErr := callText(t, ctx, cs, "hasty__echo", map[string]any{"text": "x"})
	if !isErr || !strings.Contains(out, "hasty is reconnecting") || strings.Contains(out, "unknown tool") {
		t.Errorf("call to a reconnecting server past its timeout: isError %v, %q", isErr, out)
	}
	// Past the gateway's 5 s wait for connecting servers, and before they
	// can be back (1 s of backoff and 8 s of start): both still listed.
	time.Sleep(time.Until(killed.Add(6 * time.Second)))
	names := listNames(t, ctx, cs)
	if !names["patient__echo"] || !names["hasty__echo"] {
		t.Errorf("tools of the reconnecting servers left tools/list: %v\n%s", names, stderr)
	}
	// A call with time enough waits for its server and works.
	if out, isErr := callText(t, ctx, cs, "patient__echo", map[string]any{"text": "waited"}); isErr || !strings.Contains(out, "waited") {
		t.Errorf("call that waited for the reconnect: isError %v, %q", isErr, out)
	}
}
