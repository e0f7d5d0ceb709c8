package host_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
