package cli

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestGatewayMemberIdle: with `serve --member-idle`, a member's own
// upstream process that no call uses is stopped, and the member's next
// call starts another (the gateway's own is not a member's and stays).
func TestGatewayMemberIdle(t *testing.T) {
	w := newGatewayWorld(t)
	w.clientProtocol = "2025-11-25"
	cmd, args := testserver.Command("echo")
	def := map[string]any{"type": "stdio", "command": cmd, "args": args, "env": map[string]string{"TEAM_TOKEN": "${secret:TEAM_TOKEN}"}}
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{"team": def}})
	w.permissions(t, []string{"mcp__team"}, nil)
	w.env = append(w.env, "SWITCHBOARD_SECRET_STORE=file")
	alice := w.addKey(t, "alice")
	w.editAuth(t, func(f *gateway.AuthFile) { f.PerMember = map[string]*gateway.PerMember{"team": {}} })
	w.setSecret(t, "", "TEAM_TOKEN", "gateway-value-71c2")
	w.setSecret(t, "alice", "TEAM_TOKEN", "alice-value-0d9e")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--member-idle", "1ms")
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	c := w.teamClient(t, ctx, base, alice, "deny")
	pid := func() int {
		t.Helper()
		txt, isErr := callText(t, ctx, c.cs, "team__pid", nil)
		n, err := strconv.Atoi(pidRE.FindString(txt))
		if isErr || err != nil {
			t.Fatalf("pid: isError %v, %q", isErr, txt)
		}
		return n
	}
	first := pid()
	for alive(first) {
		select {
		case <-ctx.Done():
			t.Fatalf("alice's idle upstream process %d still runs", first)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// The call is answered by another process, started for it (under
	// the 1 ms idle it may be stopped again by the time this looks).
	if again := pid(); again == first {
		t.Errorf("alice's call after the idle close reached pid %d, the closed one; want a new one", again)
	}
}
