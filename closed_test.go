package switchboard_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// promptly runs fn and fails the test when it panics or has not returned
// within 10 s (a method that hangs after Close waits for its context,
// here minutes away).
func promptly(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	var panicked any
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		fn()
	}()
	select {
	case <-done:
		if panicked != nil {
			t.Errorf("%s panicked: %v", what, panicked)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("%s has not returned 10 s after Close", what)
	}
}

// markedProcesses counts the running test-server processes whose
// environment holds SB_VIEW_TEST=<prefix>… (Linux: -1 elsewhere).
func markedProcesses(t testing.TB, prefix string) int {
	t.Helper()
	return testServerProcesses(t, func(kv string) bool { return strings.HasPrefix(kv, "SB_VIEW_TEST="+prefix) })
}

// TestClosedSwitchboardRefusesPromptly: after Close, every method of the
// Switchboard, of a profile view and of a session view (and of a view of
// that session) returns at once: what does work fails with an error
// wrapping host.ErrClosed, View and Watch included (View returned a view
// of nothing, Watch waited for its context); Ready says not ready; a
// background call Close cut says so (it said only "cancelled"); a
// session's Close changes no Config. Nothing panics, and no server
// process runs or starts again.
func TestClosedSwitchboardRefusesPromptly(t *testing.T) {
	marker := "c" + t.Name()
	dir, home := profileHome(t, marker, map[string]any{
		"permissions": map[string]any{"allow": []string{"mcp__docs", "mcp__acp"}},
		"profiles":    map[string]any{"sub": map[string]any{"servers": []string{"docs"}}},
	}, "docs")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	root := openAt(ctx, t, dir, home)
	view, err := root.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	cmd, args := testserver.Command("echo")
	acp := switchboard.SessionServer{Name: "acp", Command: cmd, Args: args,
		Env: []switchboard.NameValue{{Name: "SB_VIEW_TEST", Value: marker + "-acp"}}}
	sess, err := root.OpenSession(ctx, switchboard.SessionOptions{Trust: switchboard.TrustSessionServers, Servers: []switchboard.SessionServer{acp}})
	if err != nil {
		t.Fatal(err)
	}
	sessView, err := sess.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Call(ctx, "mcp__acp__pid", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	bg, err := root.Start(ctx, "mcp__docs__slow", map[string]any{"ms": 60000})
	if err != nil {
		t.Fatal(err)
	}
	if !root.Ready(ctx) {
		t.Fatal("not ready before Close")
	}
	if n := markedProcesses(t, marker); n >= 0 && n != 2 {
		t.Fatalf("%d server processes before Close, want 2", n)
	}
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		sb   *switchboard.Switchboard
	}{{"Switchboard", root}, {"view", view}, {"session", sess}, {"session's view", sessView}} {
		refusesAll(ctx, t, tc.name, tc.sb, acp)
		promptly(t, tc.name+".Status", func() {
			for _, st := range tc.sb.Status() {
				if st.State == host.StateConnected || st.State == host.StateConnecting {
					t.Errorf("%s.Status after Close: %s %s", tc.name, st.Name, st.State)
				}
			}
		})
	}
	if root.Config().Server("acp") == nil {
		t.Error("the session's Close after the Switchboard's took its server out of Config")
	}
	promptly(t, "BackgroundCall.Wait", func() {
		_, err := bg.Wait(ctx)
		if !errors.Is(err, host.ErrClosed) {
			t.Errorf("the wait of a background call Close cut = %v, want host.ErrClosed", err)
		}
		if st := bg.Status(); st.State == host.CallRunning || !strings.Contains(st.Error, host.ErrClosed.Error()) {
			t.Errorf("background call Close cut: %s (%s), want it to say the host closed", st.State, st.Error)
		}
	})
	if n := markedProcesses(t, marker); n > 0 {
		t.Errorf("%d server processes after Close", n)
	}
}

// TestCloseRacesEveryMethod: Close while calls, lists, background calls,
// reloads, views, sessions (each starting a server), a watcher and waits
// run. Close returns with no server process left, and none starts later;
// every method, then, has ended with success or an error wrapping
// host.ErrClosed within 10 s (Watch too, whose context is still live);
// and the goroutines are gone.
func TestCloseRacesEveryMethod(t *testing.T) {
	if testing.Short() {
		t.Skip("races Close many times")
	}
	for round := range 4 {
		t.Run(fmt.Sprint(round), func(t *testing.T) { closeRace(t, round) })
	}
}

func closeRace(t *testing.T, round int) {
	marker := fmt.Sprintf("r%s-", strings.ReplaceAll(t.Name(), "/", "-"))
	dir, home := profileHome(t, marker, map[string]any{
		"permissions": map[string]any{"allow": []string{"mcp__docs"}},
		"profiles":    map[string]any{"sub": map[string]any{"servers": []string{"docs"}}},
	}, "docs")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	before := runtime.NumGoroutine()
	sb := openAt(ctx, t, dir, home)
	if _, err := sb.Call(ctx, "mcp__docs__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	cmd, args := testserver.Command("echo")

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   = map[string]error{} // each loop's last error
		ended  = map[string]bool{}
		sessNo int
	)
	loop := func(name string, fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			for err == nil {
				err = fn()
			}
			mu.Lock()
			errs[name], ended[name] = err, true
			mu.Unlock()
		}()
	}
	loop("Call", func() error {
		_, err := sb.Call(ctx, "mcp__docs__echo", map[string]any{"text": "x"})
		return err
	})
	loop("Tools", func() error { _, err := sb.Tools(ctx, "anthropic"); return err })
	loop("Start", func() error {
		b, err := sb.Start(ctx, "mcp__docs__echo", map[string]any{"text": "x"})
		if err != nil {
			return err
		}
		_, err = b.Wait(ctx)
		return err
	})
	loop("Reload", func() error { _, err := sb.Reload(); return err })
	loop("View", func() error {
		v, err := sb.View("sub")
		if err != nil {
			return err
		}
		_, err = v.Tools(ctx, "anthropic")
		return err
	})
	loop("OpenSession", func() error {
		mu.Lock()
		sessNo++
		name := fmt.Sprintf("s%d", sessNo)
		mu.Unlock()
		_, err := sb.OpenSession(ctx, switchboard.SessionOptions{Trust: switchboard.TrustSessionServers,
			Servers: []switchboard.SessionServer{{Name: name, Command: cmd, Args: args,
				Env: []switchboard.NameValue{{Name: "SB_VIEW_TEST", Value: marker + name}}}}})
		return err
	})
	loop("Ready", func() error {
		if !sb.Ready(ctx) {
			return host.ErrClosed // Ready's only way to say it
		}
		return nil
	})
	loop("Watch", func() error { return sb.Watch(ctx) })

	time.Sleep(time.Duration(200+100*round) * time.Millisecond)
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if n := markedProcesses(t, marker); n > 0 {
		t.Errorf("%d server processes when Close returned", n)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		mu.Lock()
		t.Errorf("methods still running 10 s after Close; ended: %v", ended)
		mu.Unlock()
		return
	}
	for name, err := range errs {
		if !errors.Is(err, host.ErrClosed) {
			t.Errorf("%s racing Close ended with %v, want host.ErrClosed", name, err)
		}
	}
	time.Sleep(time.Second)
	if n := markedProcesses(t, marker); n > 0 {
		t.Errorf("%d server processes started after Close returned", n)
	}
	var now int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if now = runtime.NumGoroutine(); now <= before || time.Now().After(deadline) {
			break
		}
	}
	if now > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines 10 s after Close, %d before Open:\n%s", now, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestCloseDuringAReloadStartsNothing: a reload restarts a changed server
// whose old process is slow to stop, and Close runs meanwhile. The reload
// fails with host.ErrClosed, and does not start the new definition after
// Close returned (it did: Close found the new server not launched yet,
// and the reload launched it, and spawned its process, once the old one
// had stopped).
func TestCloseDuringAReloadStartsNothing(t *testing.T) {
	marker := "d" + t.Name()
	dir, home := newHome(t)
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

// refusesAll checks that every method of sb, which is closed (or views
// one), returns within 10 s without a panic: what can fail fails with
// an error wrapping host.ErrClosed, Ready reports false, the accessors
// answer, and Close again returns nil. acp is a server OpenSession is
// handed, which must not start.
func refusesAll(ctx context.Context, t *testing.T, name string, sb *switchboard.Switchboard, acp switchboard.SessionServer) {
	t.Helper()
	closed := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, host.ErrClosed) {
			t.Errorf("%s.%s after Close = %v, want host.ErrClosed", name, what, err)
		}
	}
	do := func(m string, fn func()) { t.Helper(); promptly(t, name+"."+m, fn) }
	do("Tools", func() { _, err := sb.Tools(ctx, "anthropic"); closed("Tools", err) })
	do("ListTools", func() { _, err := sb.ListTools(ctx, "anthropic"); closed("ListTools", err) })
	do("Call", func() { _, err := sb.Call(ctx, "mcp__docs__echo", map[string]any{"text": "x"}); closed("Call", err) })
	do("Start", func() { _, err := sb.Start(ctx, "mcp__docs__echo", map[string]any{"text": "x"}); closed("Start", err) })
	do("Reload", func() { _, err := sb.Reload(); closed("Reload", err) })
	do("Watch", func() { closed("Watch", sb.Watch(ctx)) })
	do("View", func() {
		v, err := sb.View("sub")
		closed("View", err)
		if v != nil {
			t.Errorf("%s.View after Close returned a view", name)
		}
	})
	do("OpenSession", func() {
		_, err := sb.OpenSession(ctx, switchboard.SessionOptions{Trust: switchboard.TrustSessionServers, Servers: []switchboard.SessionServer{acp}})
		closed("OpenSession", err)
	})
	do("AcceptTools", func() { _, err := sb.AcceptTools("docs"); closed("AcceptTools", err) })
	do("AskToolChanges", func() { closed("AskToolChanges", sb.AskToolChanges(ctx)) })
	do("AskHeld", func() {
		if sb.AskHeld(ctx, &host.HeldToolError{Server: "docs", Tool: "echo"}) {
			t.Errorf("%s.AskHeld after Close: accepted", name)
		}
	})
	do("Ready", func() {
		if sb.Ready(ctx) {
			t.Errorf("%s.Ready after Close = true, want false", name)
		}
	})
	do("Status", func() {
		for _, st := range sb.Status() {
			if st.State == host.StateConnected || st.State == host.StateConnecting {
				t.Errorf("%s.Status after Close shows %s %s", name, st.Name, st.State)
			}
		}
	})
	do("the accessors", func() {
		_, _, _, _, _, _ = sb.Config(), sb.Settings(), sb.Policy(), sb.Trust(), sb.Host(), sb.Diagnostics()
		_, _, _, _ = sb.Profile(), sb.ProfileNames(), sb.ToolChanges(), sb.Status()
		_, _ = sb.BackgroundCalls(), sb.BackgroundCall("1")
		sb.Subscribe(ctx, func(host.Event) {})
		if r := sb.Present("mcp__docs__echo", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}, nil); r.Text == "" {
			t.Errorf("%s.Present after Close made no text", name)
		}
	})
	do("Close", func() {
		if err := sb.Close(); err != nil {
			t.Errorf("%s.Close again = %v, want nil", name, err)
		}
	})
}

// openSubViews opens a Switchboard whose one server, docs (marked with
// marker), is in profile "sub", with the rules allowing allow; and a view
// of "sub" and a view of that view. It closes them at the test's end.
func openSubViews(t *testing.T, marker string, allow ...string) (ctx context.Context, root, view, viewOfView *switchboard.Switchboard) {
	t.Helper()
	dir, home := profileHome(t, marker, map[string]any{
		"permissions": map[string]any{"allow": allow},
		"profiles":    map[string]any{"sub": map[string]any{"servers": []string{"docs"}}},
	}, "docs")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	root = openAt(ctx, t, dir, home)
	t.Cleanup(func() { root.Close() })
	view, err := root.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	viewOfView, err = view.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	return ctx, root, view, viewOfView
}

// TestClosedViewRefuses: a view and a session closed themselves (the
// Switchboard runs on) refuse what the Switchboard's Close refuses, and
// so do the views made from them: they went on calling and listing the
// Switchboard's servers, and a closed session's OpenSession started
// servers nothing would stop. Closing a session stops the servers of the
// sessions opened from it too (they ran on, in sessions that refuse
// everything). A Watch of a view ends when the view closes. The
// Switchboard's servers run on, and its own calls work.
func TestClosedViewRefuses(t *testing.T) {
	marker := "w" + t.Name()
	ctx, root, view, viewOfView := openSubViews(t, marker, "mcp__docs", "mcp__acp-nested")
	cmd, args := testserver.Command("echo")
	acp := func(mark string) switchboard.SessionServer {
		return switchboard.SessionServer{Name: "acp-" + mark, Command: cmd, Args: args,
			Env: []switchboard.NameValue{{Name: "SB_VIEW_TEST", Value: marker + "-acp-" + mark}}}
	}
	sess, err := root.OpenSession(ctx, switchboard.SessionOptions{Trust: switchboard.TrustSessionServers, Servers: []switchboard.SessionServer{acp("own")}})
	if err != nil {
		t.Fatal(err)
	}
	sessView, err := sess.View("sub")
	if err != nil {
		t.Fatal(err)
	}
	nested, err := sessView.OpenSession(ctx, switchboard.SessionOptions{Trust: switchboard.TrustSessionServers, Servers: []switchboard.SessionServer{acp("nested")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nested.Call(ctx, "mcp__acp-nested__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sessView.Call(ctx, "mcp__docs__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if n := markedProcesses(t, marker+"-acp-"); n >= 0 && n != 2 {
		t.Fatalf("%d session servers, want 2", n)
	}
	watched := make(chan error, 1)
	go func() { watched <- viewOfView.Watch(ctx) }()
	time.Sleep(100 * time.Millisecond) // watching
	if err := view.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-watched:
		if !errors.Is(err, host.ErrClosed) {
			t.Errorf("Watch of a view of the view closed = %v, want host.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Watch of a view of the view closed runs on 10 s later")
	}
	for _, tc := range []struct {
		name string
		sb   *switchboard.Switchboard
	}{{"view", view}, {"view's view", viewOfView}, {"session", sess}, {"session's view", sessView}, {"session's view's session", nested}} {
		refusesAll(ctx, t, tc.name, tc.sb, acp(strings.ReplaceAll(tc.name, " ", "-")))
	}
	if n := markedProcesses(t, marker+"-acp-"); n > 0 {
		t.Errorf("%d session servers run after the sessions closed", n)
	}
	if slices.ContainsFunc(root.Status(), func(s host.ServerStatus) bool { return strings.HasPrefix(s.Name, "acp-") }) {
		t.Errorf("the closed sessions' servers are still listed: %+v", root.Status())
	}
	if _, err := root.Call(ctx, "mcp__docs__echo", map[string]any{"text": "x"}); err != nil {
		t.Errorf("the Switchboard's call after its views closed: %v", err)
	}
	if n := markedProcesses(t, marker+"-docs"); n >= 0 && n != 1 {
		t.Errorf("%d processes of docs after its views closed, want 1", n)
	}
	// A closed view hears nothing more: not the Switchboard's reload.
	var heard atomic.Int32
	view.Subscribe(ctx, func(host.Event) { heard.Add(1) })
	if _, err := root.Reload(); err != nil {
		t.Fatal(err)
	}
	if n := heard.Load(); n != 0 {
		t.Errorf("a view subscribed after its Close heard %d events of the Switchboard's", n)
	}
}

// A call a view started in the background ends when the view closes, as
// the view's other calls do (it ran on until it ended); one the
// Switchboard started runs on.
func TestViewCloseEndsItsBackgroundCalls(t *testing.T) {
	ctx, root, view, viewOfView := openSubViews(t, "w"+t.Name(), "mcp__docs")
	slow := map[string]any{"ms": 60000}
	mine, err := view.Start(ctx, "mcp__docs__slow", slow)
	if err != nil {
		t.Fatal(err)
	}
	nested, err := viewOfView.Start(ctx, "mcp__docs__slow", slow)
	if err != nil {
		t.Fatal(err)
	}
	rootsCall, err := root.Start(ctx, "mcp__docs__slow", map[string]any{"ms": 1500})
	if err != nil {
		t.Fatal(err)
	}
	if err := view.Close(); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	for what, b := range map[string]*switchboard.BackgroundCall{"the view's": mine, "its view's": nested} {
		if _, err := b.Wait(wctx); !errors.Is(err, host.ErrCancelled) {
			t.Errorf("%s background call after the view's Close: %v, want host.ErrCancelled", what, err)
		}
	}
	if res, err := rootsCall.Wait(ctx); err != nil || res.IsError {
		t.Errorf("the Switchboard's background call after a view's Close: %v %v", res, err)
	}
}
