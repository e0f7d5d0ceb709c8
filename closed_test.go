package switchboard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// markedProcesses counts the running test-server processes whose
// environment holds SB_VIEW_TEST=<prefix>… (Linux: -1 elsewhere).
func markedProcesses(t testing.TB, prefix string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return -1
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if argv := strings.Split(string(cmd), "\x00"); len(argv) < 2 || argv[1] != testserver.Arg {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if slices.ContainsFunc(strings.Split(string(env), "\x00"), func(kv string) bool { return strings.HasPrefix(kv, "SB_VIEW_TEST="+prefix) }) {
			n++
		}
	}
	return n
}

// TestCloseDuringAReloadStartsNothing: a reload restarts a changed server
// whose old process is slow to stop, and Close runs meanwhile. The reload
// fails with host.ErrClosed, and does not start the new definition after
// Close returned (it did: Close found the new server not launched yet,
// and the reload launched it, and spawned its process, once the old one
// had stopped).
func TestCloseDuringAReloadStartsNothing(t *testing.T) {
	marker := "d" + t.Name()
	dir := t.TempDir()
	home := filepath.Join(dir, "sb")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	stubborn := func(mark string) map[string]any {
		cmd, args := testserver.Command("ignore-stdin-eof", "-ignore-sigterm")
		return map[string]any{"mcpServers": map[string]any{"a": map[string]any{"command": cmd, "args": args,
			"env": map[string]string{"SB_VIEW_TEST": marker + "-" + mark}}}}
	}
	writeJSON(t, filepath.Join(home, "mcp.json"), stubborn("old"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
		LookupEnv: func(string) (string, bool) { return "", false },
		Host:      func(o *host.Options) { o.CloseGrace = 500 * time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if !sb.Ready(ctx) || markedProcesses(t, marker+"-old") == 0 {
		t.Fatalf("a did not start: %+v", sb.Status())
	}
	var (
		mu       sync.Mutex
		isClosed bool
		late     []string // what a did after Close returned
	)
	sb.Subscribe(ctx, func(ev host.Event) {
		mu.Lock()
		defer mu.Unlock()
		if isClosed && ev.Kind == host.EventState && ev.State == host.StateConnecting {
			late = append(late, fmt.Sprintf("%s %s (%s)", ev.Server, ev.State, ev.Reason))
		}
	})
	writeJSON(t, filepath.Join(home, "mcp.json"), stubborn("new"))
	reloaded := make(chan error, 1)
	go func() { _, err := sb.Reload(); reloaded <- err }()
	// The reload has put the new a in place of the old, and is stopping
	// the old process (which takes its grace twice) before it starts it.
	for deadline := time.Now().Add(10 * time.Second); !slices.ContainsFunc(sb.Status(), func(s host.ServerStatus) bool { return s.State == "" }); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the reload did not replace a: %+v", sb.Status())
		}
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	isClosed = true
	mu.Unlock()
	if err := <-reloaded; !errors.Is(err, host.ErrClosed) {
		t.Errorf("the Reload Close overtook = %v, want host.ErrClosed", err)
	}
	if n := markedProcesses(t, marker); n > 0 {
		t.Errorf("%d processes of a once the reload returned", n)
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(late) > 0 {
		t.Errorf("after Close returned: %v", late)
	}
	if st := sb.Status(); len(st) != 1 || st[0].State != host.StateDisabled || st[0].Reason != host.ClosedReason {
		t.Errorf("status after Close: %+v, want a disabled (%s)", st, host.ClosedReason)
	}
}
