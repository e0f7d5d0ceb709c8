package switchboard_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestOpenSession (issue 34, ACP): a session view opened with servers
// handed in at run time, in the array forms ACP sends, starts the new one
// once, shares the one whose definition the Switchboard already runs,
// shows its own servers to itself only (and to the Switchboard), and
// closing it stops only what it started. Trust must be chosen, and
// "approve" holds a headless run's servers.
func TestOpenSession(t *testing.T) {
	marker := "v" + t.Name()
	dir, home := profileHome(t, marker, map[string]any{
		"permissions": map[string]any{"allow": []string{"mcp__acp-tool__pid", "mcp__docs__pid"}},
		"profiles":    map[string]any{"sub": map[string]any{"servers": []string{"docs"}}},
	}, "docs")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb := openAt(ctx, t, dir, home)
	defer sb.Close()
	cmd, args := testserver.Command("echo")
	acp := func(name, mark string) switchboard.SessionServer {
		return switchboard.SessionServer{Name: name, Command: cmd, Args: args,
			Env: []switchboard.NameValue{{Name: "SB_VIEW_TEST", Value: marker + "-" + mark}}}
	}

	if _, err := sb.OpenSession(ctx, switchboard.SessionOptions{Servers: []switchboard.SessionServer{acp("acp-tool", "acp")}}); !errors.Is(err, switchboard.ErrSessionServer) {
		t.Fatalf("OpenSession without a trust choice: %v, want ErrSessionServer", err)
	}
	sess, err := sb.OpenSession(ctx, switchboard.SessionOptions{Profile: "sub", Trust: switchboard.TrustSessionServers,
		Servers: []switchboard.SessionServer{acp("acp-tool", "acp"), acp("docs-again", "docs")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Call(ctx, "mcp__acp-tool__pid", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	names := toolNames(t, ctx, sess)
	if !slices.Contains(names, "mcp__acp-tool__pid") || !slices.Contains(names, "mcp__docs__pid") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp__docs-again__") }) {
		t.Errorf("session's tools = %v, want acp-tool's and docs's (shared), no docs-again", names)
	}
	for name, want := range map[string]int{"acp": 1, "docs": 1} {
		if n := serverProcesses(t, marker+"-"+name); n >= 0 && n != want {
			t.Errorf("%d processes of %s, want %d", n, name, want)
		}
	}
	other, err := sb.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNames(t, ctx, other); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp__acp-tool__") }) {
		t.Errorf("another view shows the session's server: %v", names)
	}

	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); serverProcesses(t, marker+"-acp") > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the session's server still runs 30s after the session closed")
		}
	}
	if slices.ContainsFunc(sb.Status(), func(s host.ServerStatus) bool { return s.Name == "acp-tool" }) {
		t.Error("the closed session's server is still listed")
	}
	if _, err := sb.Call(ctx, "mcp__docs__pid", map[string]any{}); err != nil {
		t.Errorf("docs after the session closed: %v", err)
	}
	if n := serverProcesses(t, marker+"-docs"); n >= 0 && n != 1 {
		t.Errorf("%d processes of docs after the session closed, want 1", n)
	}

	// Treated as a repository's, headless: held, not started.
	held, err := sb.OpenSession(ctx, switchboard.SessionOptions{Trust: switchboard.ApproveSessionServers,
		Servers: []switchboard.SessionServer{acp("acp-held", "held")}})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	held.Ready(ctx)
	i := slices.IndexFunc(held.Status(), func(s host.ServerStatus) bool { return s.Name == "acp-held" })
	if i < 0 {
		t.Fatal("the session does not list its server")
	}
	if st := held.Status()[i]; st.State == host.StateConnected || !strings.Contains(st.Reason, "approved") {
		t.Errorf("acp-held: %s (%s), want held for approval", st.State, st.Reason)
	}
	if n := serverProcesses(t, marker+"-held"); n > 0 {
		t.Errorf("%d processes of a server awaiting approval", n)
	}
}

// TestOpenSessionAfterCloseFails: after Close, OpenSession fails with
// host.ErrClosed, as Tools and Call do, instead of returning a session
// whose servers never start.
func TestOpenSessionAfterCloseFails(t *testing.T) {
	dir, home := newHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb := openAt(ctx, t, dir, home)
	cmd, args := testserver.Command("echo")
	opts := switchboard.SessionOptions{Trust: switchboard.TrustSessionServers,
		Servers: []switchboard.SessionServer{{Name: "acp", Command: cmd, Args: args}}}
	sess, err := sb.OpenSession(ctx, opts)
	if err != nil {
		t.Fatalf("OpenSession before Close: %v", err)
	}
	sess.Close()
	sb.Close()
	for _, o := range []switchboard.SessionOptions{opts, {Trust: switchboard.TrustSessionServers}} {
		if sess, err := sb.OpenSession(ctx, o); !errors.Is(err, host.ErrClosed) || sess != nil {
			t.Errorf("OpenSession of %d servers after Close = %v, %v; want nil, host.ErrClosed", len(o.Servers), sess, err)
		}
	}
}

// TestSessionOfAViewShowsItsServers: a session opened from a profile view
// shows its own servers (it showed none of them: the view it was opened
// from, whose scope the session's narrows, hid them as another view's),
// and so does that view, as the Switchboard shows a session's servers;
// another view does not.
func TestSessionOfAViewShowsItsServers(t *testing.T) {
	marker := "v" + t.Name()
	dir, home := profileHome(t, marker, map[string]any{
		"permissions": map[string]any{"allow": []string{"mcp__acp", "mcp__docs"}},
		"profiles":    map[string]any{"sub": map[string]any{"servers": []string{"docs"}}},
	}, "docs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sb := openAt(ctx, t, dir, home)
	defer sb.Close()
	sub, err := sb.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	other, err := sb.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	cmd, args := testserver.Command("echo")
	sess, err := sub.OpenSession(ctx, switchboard.SessionOptions{Trust: switchboard.TrustSessionServers,
		Servers: []switchboard.SessionServer{{Name: "acp", Command: cmd, Args: args}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for name, v := range map[string]*switchboard.Switchboard{"the session": sess, "the view it was opened from": sub, "the Switchboard": sb} {
		if _, err := v.Call(ctx, "mcp__acp__echo", map[string]any{"text": "x"}); err != nil {
			t.Errorf("%s: call of the session's server: %v", name, err)
		}
	}
	if _, err := sess.Call(ctx, "mcp__docs__echo", map[string]any{"text": "x"}); err != nil {
		t.Errorf("the session: call of its profile's server: %v", err)
	}
	if _, err := other.Call(ctx, "mcp__acp__echo", map[string]any{"text": "x"}); !errors.Is(err, host.ErrUnknownTool) {
		t.Errorf("another view's call of the session's server: %v, want ErrUnknownTool", err)
	}
}
