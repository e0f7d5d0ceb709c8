package host_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// A server's log notification reaches an embedder's events with the
// secret values the host knows replaced, as its results are: a server
// that logs the token it was given does not hand it on.
func TestServerLogScrubsKnownSecrets(t *testing.T) {
	const token = "tok-5f3a9c27e1b84d60"
	var mu sync.Mutex
	var logs []string
	echo := stdio("echo", "echo")
	echo.Effective.Env = map[string]string{"ECHO_API_TOKEN": token}
	h := newHost(t, &config.Resolved{Servers: []config.ResolvedServer{echo}},
		&host.Options{OnEvent: func(ev host.Event) {
			if ev.Kind == host.EventLog {
				mu.Lock()
				logs = append(logs, fmt.Sprint(ev.Log.Logger, " ", ev.Log.Data))
				mu.Unlock()
			}
		}})
	mustCall(t, h, "mcp__echo__log", map[string]any{"message": "connected with " + token + " as the key"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(logs)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 1 {
		t.Fatalf("log events: %q", logs)
	}
	if strings.Contains(logs[0], token) || !strings.Contains(logs[0], "connected with <redacted> as the key") {
		t.Errorf("log event: %s", logs[0])
	}
}

// Every field of a server's log message and progress notification that
// reaches an embedder's events, or a call's progress, has the secret
// values the host knows replaced: the level, the logger, the data's keys
// as well as its values, and _meta (hostile-peer's log_leak puts the
// value into each). Before, only the logger and the data's values were,
// and an embedder that printed an event whole printed the token.
func TestLogAndProgressScrubEveryField(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	peer := stdio("peer", "hostile-peer", "-leak", "PEER_API_TOKEN")
	peer.Effective.Env = map[string]string{"PEER_API_TOKEN": token}
	peer.Written.Env = peer.Effective.Env
	var mu sync.Mutex
	var logs, progress []string
	h := newHost(t, cfgOf(peer), &host.Options{LogLevel: "debug", OnEvent: func(ev host.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ev.Kind == host.EventLog:
			logs = append(logs, string(unescapedJSON(t, ev.Log)))
		case ev.Kind == host.EventProgress:
			progress = append(progress, "event "+string(unescapedJSON(t, ev.Progress)))
		}
	}})
	ctx := host.WithProgress(ctxFor(t, 20*time.Second), func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		progress = append(progress, "call "+string(unescapedJSON(t, p)))
		mu.Unlock()
	})
	if _, err := h.Call(ctx, "mcp__peer__log_leak", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		done := len(logs) >= 2 && len(progress) >= 3
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 2 || len(progress) != 3 {
		t.Fatalf("log events %q, progress %q; want 2 and 3 (2 events, 1 to the call)", logs, progress)
	}
	for _, l := range logs {
		if strings.Contains(l, token) || !strings.Contains(l, `"key <redacted>":["value <redacted>"]`) ||
			!strings.Contains(l, `"meta key <redacted>":"meta <redacted>"`) || !strings.Contains(l, `"logger":"logger <redacted>"`) {
			t.Errorf("log event: %s", l)
		}
	}
	if !strings.Contains(strings.Join(logs, "\n"), `"level":"level <redacted>"`) {
		t.Errorf("no log event with the level replaced: %q", logs)
	}
	for _, p := range progress {
		if strings.Contains(p, token) || !strings.Contains(p, `"message":"progress <redacted>"`) ||
			!strings.Contains(p, `"meta key <redacted>":"meta <redacted>"`) {
			t.Errorf("progress: %s", p)
		}
	}
	if !strings.Contains(strings.Join(progress, "\n"), `"progressToken":"token <redacted>"`) {
		t.Errorf("no progress event with the server's own token replaced: %q", progress)
	}
}
