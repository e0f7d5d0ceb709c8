//go:build !windows

package host_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// A server the host stops before it served — here when the host closes
// while the server is still starting — gets SIGTERM before SIGKILL, as npx
// needs: while it resolves a package it holds a lock directory in its
// cache, which it removes on SIGTERM only. SIGKILLed, it left the lock,
// and every start of that package then waited about a minute for it to go
// stale (seen after `claude mcp list` ran `serve --stdio` and left).
func TestServerStoppedWhileStartingGetsSIGTERM(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "concurrency.lock")
	// As npx while it resolves: takes the lock, answers nothing yet, and
	// removes the lock when terminated (its handler in place before it
	// locks). Under load the host's Close often came while the process
	// ran but its start had not returned yet; that Close returned before
	// the process was stopped (CI, about one run in a thousand).
	script := `trap 'rmdir "$1"; exit 143' TERM; mkdir "$1" || exit 1; while :; do sleep 0.05; done`
	h := host.New(cfgOf(resolved("runner", config.Server{Type: config.TypeStdio, Command: "sh", Args: []string{"-c", script, "sh", lock}})),
		&host.Options{CloseGrace: 200 * time.Millisecond, LookupEnv: func(string) (string, bool) { return "", false }})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(lock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			h.Close()
			t.Fatal("the server never took its lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.Close()
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the server's lock is still there after the host closed (%v): it was killed without SIGTERM", err)
	}
}
